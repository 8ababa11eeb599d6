// ImageDecoder on images written in the test: BMP and PNM bytes by hand,
// PNG, JPEG, WebP and JPEG 2000 through libpng, libjpeg, libwebp and
// openjp2, checked against the pixels they were made from; malformed
// streams must fail cleanly.
#include <gtest/gtest.h>

#include <cstdio>
#include <jpeglib.h>
#include <openjpeg.h>
#include <png.h>
#include <webp/encode.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

using Bytes = std::vector<uint8_t>;

Result<std::vector<Tensor>> decode(const Bytes& data, const char* format = "RGB") {
  return NodeTest("ImageDecoder", 20)
      .attr("pixel_format", format)
      .input(make_tensor<uint8_t>({static_cast<int64_t>(data.size())}, data))
      .run();
}

void put_u16(Bytes& b, size_t at, uint32_t v) {
  b[at] = static_cast<uint8_t>(v);
  b[at + 1] = static_cast<uint8_t>(v >> 8);
}

void put_u32(Bytes& b, size_t at, uint32_t v) {
  put_u16(b, at, v & 0xFFFF);
  put_u16(b, at + 2, v >> 16);
}

// A BMP with a 40-byte info header; `pixels` are the stored rows, padding
// included, and `palette` BGRA entries.
Bytes bmp(int32_t width, int32_t height, uint32_t bits, const Bytes& palette, const Bytes& pixels) {
  Bytes b(54 + palette.size() + pixels.size(), 0);
  b[0] = 'B';
  b[1] = 'M';
  put_u32(b, 2, static_cast<uint32_t>(54 + palette.size() + pixels.size()));
  put_u32(b, 10, static_cast<uint32_t>(54 + palette.size()));
  put_u32(b, 14, 40);
  put_u32(b, 18, static_cast<uint32_t>(width));
  put_u32(b, 22, static_cast<uint32_t>(height));
  put_u16(b, 26, 1);
  put_u16(b, 28, bits);
  put_u32(b, 46, static_cast<uint32_t>(palette.size() / 4));
  for (size_t i = 0; i < palette.size(); ++i) b[54 + i] = palette[i];
  for (size_t i = 0; i < pixels.size(); ++i) b[54 + palette.size() + i] = pixels[i];
  return b;
}

TEST(ImageDecoder, Bmp24BottomUpInRgbBgrAndGrayscale) {
  // 2 wide, 2 high: rows are 6 bytes plus 2 of padding, last row first.
  const Bytes pixels = {0, 0, 255, 0, 255, 0, 0, 0,     // bottom row: red, green
                        255, 0, 0, 255, 255, 255, 0, 0};  // top row: blue, white
  const Bytes data = bmp(2, 2, 24, {}, pixels);
  auto rgb = decode(data);
  ASSERT_TRUE(rgb.ok()) << rgb.status().to_string();
  EXPECT_EQ(rgb->at(0).shape(), Shape({2, 2, 3}));
  EXPECT_EQ(to_vector<uint8_t>(rgb->at(0)), (Bytes{0, 0, 255, 255, 255, 255, 255, 0, 0, 0, 255, 0}));
  auto bgr = decode(data, "BGR");
  ASSERT_TRUE(bgr.ok()) << bgr.status().to_string();
  EXPECT_EQ(to_vector<uint8_t>(bgr->at(0)), (Bytes{255, 0, 0, 255, 255, 255, 0, 0, 255, 0, 255, 0}));
  // PIL's luma: blue 29, white 255, red 76, green 150.
  auto gray = decode(data, "Grayscale");
  ASSERT_TRUE(gray.ok()) << gray.status().to_string();
  EXPECT_EQ(gray->at(0).shape(), Shape({2, 2, 1}));
  EXPECT_EQ(to_vector<uint8_t>(gray->at(0)), (Bytes{29, 255, 76, 150}));
}

TEST(ImageDecoder, Bmp8PalettedTopDownAnd32Bit) {
  const Bytes palette = {10, 20, 30, 0, 40, 50, 60, 0};
  // Height -1: top-down; 3 indices plus 1 byte of padding.
  auto paletted = decode(bmp(3, -1, 8, palette, {1, 0, 1, 0}));
  ASSERT_TRUE(paletted.ok()) << paletted.status().to_string();
  EXPECT_EQ(to_vector<uint8_t>(paletted->at(0)), (Bytes{60, 50, 40, 30, 20, 10, 60, 50, 40}));
  auto bgra = decode(bmp(1, 1, 32, {}, {1, 2, 3, 255}));
  ASSERT_TRUE(bgra.ok()) << bgra.status().to_string();
  EXPECT_EQ(to_vector<uint8_t>(bgra->at(0)), (Bytes{3, 2, 1}));
  // Index 2 is past the two-colour palette.
  EXPECT_FALSE(decode(bmp(3, -1, 8, palette, {2, 0, 1, 0})).ok());
}

TEST(ImageDecoder, PnmGreyAndRgbWithComments) {
  std::string p6 = "P6\n# made by hand\n2 1\n255\n";
  Bytes data(p6.begin(), p6.end());
  data.insert(data.end(), {1, 2, 3, 4, 5, 6});
  auto rgb = decode(data);
  ASSERT_TRUE(rgb.ok()) << rgb.status().to_string();
  EXPECT_EQ(rgb->at(0).shape(), Shape({1, 2, 3}));
  EXPECT_EQ(to_vector<uint8_t>(rgb->at(0)), (Bytes{1, 2, 3, 4, 5, 6}));
  std::string p5 = "P5 1 2 255\n";
  Bytes grey(p5.begin(), p5.end());
  grey.insert(grey.end(), {7, 9});
  auto g = decode(grey);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ(to_vector<uint8_t>(g->at(0)), (Bytes{7, 7, 7, 9, 9, 9}));
  data.pop_back();
  EXPECT_FALSE(decode(data).ok());
}

TEST(ImageDecoder, PngRoundTripsExactly) {
  const int w = 3, h = 2;
  Bytes pixels(w * h * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 37 + 5);
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = w;
  image.height = h;
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  ASSERT_TRUE(png_image_write_to_memory(&image, nullptr, &size, 0, pixels.data(), 0, nullptr));
  Bytes png(size);
  ASSERT_TRUE(png_image_write_to_memory(&image, png.data(), &size, 0, pixels.data(), 0, nullptr));
  png.resize(size);
  auto out = decode(png);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), Shape({h, w, 3}));
  EXPECT_EQ(to_vector<uint8_t>(out->at(0)), pixels);
  png.resize(png.size() / 2);
  EXPECT_FALSE(decode(png).ok());
}

// A little-endian TIFF: 8-bit chunky samples in one uncompressed strip.
Bytes tiff(uint32_t width, uint32_t height, uint32_t samples, const Bytes& pixels) {
  const uint32_t entries = 7;
  const uint32_t data_at = 8 + 2 + entries * 12 + 4;
  Bytes b(data_at + pixels.size(), 0);
  b[0] = 'I';
  b[1] = 'I';
  put_u16(b, 2, 42);
  put_u32(b, 4, 8);
  put_u16(b, 8, entries);
  const uint32_t tags[entries][3] = {
      {256, 4, width}, {257, 4, height},   {258, 3, 8},          {259, 3, 1},
      {273, 4, data_at}, {277, 3, samples}, {278, 4, height},
  };
  for (uint32_t i = 0; i < entries; ++i) {
    const size_t at = 10 + i * 12;
    put_u16(b, at, tags[i][0]);
    put_u16(b, at + 2, tags[i][1]);
    put_u32(b, at + 4, 1);
    put_u32(b, at + 8, tags[i][2]);
  }
  for (size_t i = 0; i < pixels.size(); ++i) b[data_at + i] = pixels[i];
  return b;
}

TEST(ImageDecoder, UncompressedTiffRgbAndGrey) {
  auto rgb = decode(tiff(2, 1, 3, {1, 2, 3, 4, 5, 6}), "BGR");
  ASSERT_TRUE(rgb.ok()) << rgb.status().to_string();
  EXPECT_EQ(rgb->at(0).shape(), Shape({1, 2, 3}));
  EXPECT_EQ(to_vector<uint8_t>(rgb->at(0)), (Bytes{3, 2, 1, 6, 5, 4}));
  auto grey = decode(tiff(1, 2, 1, {8, 9}));
  ASSERT_TRUE(grey.ok()) << grey.status().to_string();
  EXPECT_EQ(to_vector<uint8_t>(grey->at(0)), (Bytes{8, 8, 8, 9, 9, 9}));
  // The strip claims more bytes than the file holds.
  EXPECT_FALSE(decode(tiff(2, 2, 3, {1, 2, 3})).ok());
}

Bytes jpeg_of_solid_colour(int w, int h, uint8_t r, uint8_t g, uint8_t b) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(w);
  cinfo.image_height = static_cast<JDIMENSION>(h);
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, 100, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  Bytes row;
  for (int x = 0; x < w; ++x) row.insert(row.end(), {r, g, b});
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW p = row.data();
    jpeg_write_scanlines(&cinfo, &p, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  Bytes out(buffer, buffer + size);
  std::free(buffer);
  return out;
}

TEST(ImageDecoder, JpegDecodesCloseToItsSourceAndRejectsTruncation) {
  const Bytes jpeg = jpeg_of_solid_colour(16, 8, 200, 100, 50);
  auto out = decode(jpeg);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), Shape({8, 16, 3}));
  const Bytes px = to_vector<uint8_t>(out->at(0));
  for (size_t i = 0; i < px.size(); ++i) {
    const int want = i % 3 == 0 ? 200 : i % 3 == 1 ? 100 : 50;
    EXPECT_NEAR(px[i], want, 3) << "at " << i;
  }
  EXPECT_FALSE(decode(Bytes(jpeg.begin(), jpeg.begin() + 200)).ok());
  EXPECT_FALSE(decode(Bytes(jpeg.begin(), jpeg.begin() + 4)).ok());
}

// A 4 x 3 test card whose every byte differs, so swapped channels, rows or
// columns show.
Bytes test_card_rgb() {
  Bytes rgb(4 * 3 * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<uint8_t>(i * 7 + 3);
  return rgb;
}

// PIL's luma of the card, computed independently of the kernel's fixed point.
Bytes luma_of(const Bytes& rgb) {
  Bytes grey(rgb.size() / 3);
  for (size_t i = 0; i < grey.size(); ++i)
    grey[i] = static_cast<uint8_t>(
        (rgb[i * 3] * 299 + rgb[i * 3 + 1] * 587 + rgb[i * 3 + 2] * 114 + 500) / 1000);
  return grey;
}

Bytes swap_rb(Bytes rgb) {
  for (size_t i = 0; i + 2 < rgb.size(); i += 3) std::swap(rgb[i], rgb[i + 2]);
  return rgb;
}

TEST(ImageDecoder, LosslessWebpRoundTripsExactly) {
  const Bytes rgb = test_card_rgb();
  uint8_t* encoded = nullptr;
  const size_t size = WebPEncodeLosslessRGB(rgb.data(), 4, 3, 4 * 3, &encoded);
  ASSERT_GT(size, 0u);
  const Bytes webp(encoded, encoded + size);
  WebPFree(encoded);

  auto out = decode(webp);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), Shape({3, 4, 3}));
  EXPECT_EQ(to_vector<uint8_t>(out->at(0)), rgb);
  auto bgr = decode(webp, "BGR");
  ASSERT_TRUE(bgr.ok()) << bgr.status().to_string();
  EXPECT_EQ(to_vector<uint8_t>(bgr->at(0)), swap_rb(rgb));
  auto grey = decode(webp, "Grayscale");
  ASSERT_TRUE(grey.ok()) << grey.status().to_string();
  EXPECT_EQ(grey->at(0).shape(), Shape({3, 4, 1}));
  const Bytes want = luma_of(rgb);
  const Bytes got = to_vector<uint8_t>(grey->at(0));
  ASSERT_EQ(got.size(), want.size());
  // PIL's fixed point and the decimal weights may differ by one on ties.
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1) << "at " << i;

  // A RIFF/WEBP header over garbage, and a stream cut short.
  Bytes garbage = {'R', 'I', 'F', 'F', 30, 0, 0, 0, 'W', 'E', 'B', 'P', 'V', 'P', '8', 'L', 10, 0, 0, 0};
  garbage.resize(38, 0xAB);
  auto bad = decode(garbage);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().to_string().find("WebP"), std::string::npos) << bad.status().to_string();
  EXPECT_FALSE(decode(Bytes(webp.begin(), webp.begin() + webp.size() / 2)).ok());
}

// openjp2 writes its output through a stream; this one grows a vector.
struct OutStream {
  Bytes bytes;
  size_t pos = 0;
};

OPJ_SIZE_T out_write(void* buffer, OPJ_SIZE_T n, void* user) {
  auto* s = static_cast<OutStream*>(user);
  if (s->bytes.size() < s->pos + n) s->bytes.resize(s->pos + n);
  std::memcpy(s->bytes.data() + s->pos, buffer, n);
  s->pos += n;
  return n;
}

OPJ_OFF_T out_skip(OPJ_OFF_T n, void* user) {
  auto* s = static_cast<OutStream*>(user);
  s->pos = static_cast<size_t>(static_cast<OPJ_OFF_T>(s->pos) + n);
  if (s->bytes.size() < s->pos) s->bytes.resize(s->pos);
  return n;
}

OPJ_BOOL out_seek(OPJ_OFF_T at, void* user) {
  static_cast<OutStream*>(user)->pos = static_cast<size_t>(at);
  return OPJ_TRUE;
}

// Losslessly (reversible wavelet, one quality layer) encodes `pixels`, with
// `comps` interleaved components, as a JP2 file or a J2K codestream. The
// components after the first are subsampled by `chroma_step` each way, and
// all are stored with `prec` bits (the values stay those of `pixels`).
Bytes jpeg2000_of(const Bytes& pixels, uint32_t width, uint32_t height, uint32_t comps, bool jp2,
                  uint32_t chroma_step = 1, uint32_t prec = 8) {
  opj_image_cmptparm_t params[3];
  std::memset(params, 0, sizeof(params));
  for (uint32_t c = 0; c < comps; ++c) {
    const uint32_t step = c == 0 ? 1 : chroma_step;
    params[c].dx = params[c].dy = step;
    params[c].w = (width + step - 1) / step;
    params[c].h = (height + step - 1) / step;
    params[c].prec = prec;
  }
  opj_image_t* image = opj_image_create(comps, params, comps == 3 ? OPJ_CLRSPC_SRGB : OPJ_CLRSPC_GRAY);
  image->x1 = width;
  image->y1 = height;
  for (uint32_t c = 0; c < comps; ++c)
    for (uint32_t i = 0; i < image->comps[c].w * image->comps[c].h; ++i)
      image->comps[c].data[i] = pixels[i * comps + c];
  opj_cparameters_t cp;
  opj_set_default_encoder_parameters(&cp);
  cp.numresolution = 2;  // the default six need at least 32 x 32 pixels
  cp.tcp_numlayers = 1;
  cp.tcp_rates[0] = 0;  // no rate limit: lossless
  cp.cp_disto_alloc = 1;
  cp.tcp_mct = comps == 3 && chroma_step == 1 ? 1 : 0;
  opj_codec_t* codec = opj_create_compress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K);
  OutStream out;
  opj_stream_t* stream = opj_stream_create(1 << 16, OPJ_FALSE);
  opj_stream_set_user_data(stream, &out, nullptr);
  opj_stream_set_write_function(stream, &out_write);
  opj_stream_set_skip_function(stream, &out_skip);
  opj_stream_set_seek_function(stream, &out_seek);
  const bool ok = opj_setup_encoder(codec, &cp, image) && opj_start_compress(codec, image, stream) &&
                  opj_encode(codec, stream) && opj_end_compress(codec, stream);
  opj_stream_destroy(stream);
  opj_destroy_codec(codec);
  opj_image_destroy(image);
  if (!ok) return {};
  return out.bytes;
}

TEST(ImageDecoder, LosslessJpeg2000RoundTripsExactly) {
  const Bytes rgb = test_card_rgb();
  for (bool jp2 : {true, false}) {
    SCOPED_TRACE(jp2 ? "JP2" : "J2K");
    const Bytes encoded = jpeg2000_of(rgb, 4, 3, 3, jp2);
    ASSERT_FALSE(encoded.empty());
    auto out = decode(encoded);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(out->at(0).shape(), Shape({3, 4, 3}));
    EXPECT_EQ(to_vector<uint8_t>(out->at(0)), rgb);
    auto bgr = decode(encoded, "BGR");
    ASSERT_TRUE(bgr.ok()) << bgr.status().to_string();
    EXPECT_EQ(to_vector<uint8_t>(bgr->at(0)), swap_rb(rgb));
  }
  // One grey component: every channel of the RGB output carries it.
  const Bytes grey = {0, 17, 34, 51, 68, 85, 102, 119, 136, 153, 170, 255};
  auto out = decode(jpeg2000_of(grey, 4, 3, 1, true));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  Bytes want;
  for (uint8_t v : grey) want.insert(want.end(), {v, v, v});
  EXPECT_EQ(to_vector<uint8_t>(out->at(0)), want);
  auto as_grey = decode(jpeg2000_of(grey, 4, 3, 1, false), "Grayscale");
  ASSERT_TRUE(as_grey.ok()) << as_grey.status().to_string();
  EXPECT_EQ(to_vector<uint8_t>(as_grey->at(0)), grey);
}

TEST(ImageDecoder, MalformedJpeg2000FailsWithAMessage) {
  const Bytes encoded = jpeg2000_of(test_card_rgb(), 4, 3, 3, false);
  ASSERT_GT(encoded.size(), 60u);
  // The SOC and SIZ markers with nothing after them.
  auto cut = decode(Bytes(encoded.begin(), encoded.begin() + 6));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().to_string().find("JPEG 2000"), std::string::npos) << cut.status().to_string();
  // A JP2 signature box and then garbage.
  Bytes jp2 = {0, 0, 0, 12, 'j', 'P', ' ', ' ', '\r', '\n', 0x87, '\n'};
  jp2.resize(64, 0x5A);
  auto bad = decode(jp2);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().to_string().find("JPEG 2000"), std::string::npos) << bad.status().to_string();
  // A codestream cut short in its tile data.
  EXPECT_FALSE(decode(Bytes(encoded.begin(), encoded.end() - 20)).ok());
  // Valid files the reader does not support: 4:2:0 chroma and 16-bit samples.
  const Bytes subsampled = jpeg2000_of(test_card_rgb(), 4, 3, 3, true, 2);
  ASSERT_FALSE(subsampled.empty());
  auto sub = decode(subsampled);
  ASSERT_FALSE(sub.ok());
  EXPECT_NE(sub.status().to_string().find("subsampled"), std::string::npos) << sub.status().to_string();
  const Bytes deep = jpeg2000_of(test_card_rgb(), 4, 3, 3, false, 1, 16);
  ASSERT_FALSE(deep.empty());
  auto bits = decode(deep);
  ASSERT_FALSE(bits.ok());
  EXPECT_NE(bits.status().to_string().find("16-bit"), std::string::npos) << bits.status().to_string();
}

TEST(ImageDecoder, RejectsUnknownHugeAndBadAttributes) {
  EXPECT_FALSE(decode(Bytes{1, 2, 3, 4}).ok());
  EXPECT_FALSE(decode(Bytes{}).ok());
  // 100000 x 100000 pixels: over the limit before anything is allocated.
  EXPECT_FALSE(decode(bmp(100000, 100000, 24, {}, {})).ok());
  EXPECT_FALSE(decode(bmp(1, 1, 24, {}, {1, 2, 3, 0}), "CMYK").ok());
}

}  // namespace
}  // namespace sy
