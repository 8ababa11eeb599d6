// ImageDecoder (20): decodes JPEG (libjpeg), PNG (libpng), BMP, binary PNM
// and uncompressed TIFF to uint8 [H, W, C]. Every decoder writes RGB into
// the output (or scratch, for Grayscale); BGR swaps in place afterwards and
// Grayscale uses PIL's RGB-to-L weights, as the ONNX reference decodes with
// PIL. WebP (libwebp) and JPEG 2000 (openjp2) are decoded in image_webp.cc
// and image_jpeg2000.cc. Malformed data is an error naming the node, never
// a crash: libjpeg's fatal errors longjmp back here instead of exit().

// jpeglib.h needs FILE and size_t declared first.
#include <cstdio>
#include <jpeglib.h>
#include <jerror.h>
#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "providers/cpu/image_decoder.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

using namespace std::string_view_literals;
using image::Bytes;
using image::ImageTarget;
using image::kMaxSide;
using image::kMaxPixels;
using image::PixelFormat;

// ---- JPEG (libjpeg) ----

struct JpegError {
  jpeg_error_mgr mgr;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpeg_fatal(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Warnings are quiet, except a truncated stream, which libjpeg would
// otherwise pad with grey: PIL refuses it, and so do we.
void jpeg_warning(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) jpeg_fatal(cinfo);
}

void jpeg_quiet(j_common_ptr) {}

// No object with a destructor may live between setjmp and a libjpeg call
// that can longjmp, so this function keeps only plain C state.
Status decode_jpeg(Bytes data, ImageTarget& target) {
  jpeg_decompress_struct cinfo;
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = &jpeg_fatal;
  err.mgr.emit_message = &jpeg_warning;
  err.mgr.output_message = &jpeg_quiet;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return target.fail(std::string("malformed JPEG: ") + err.message);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data.data(), static_cast<unsigned long>(data.size()));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;
  uint8_t* rgb = target.begin(cinfo.image_height, cinfo.image_width);
  if (!rgb) {
    jpeg_destroy_decompress(&cinfo);
    return target.status;
  }
  jpeg_start_decompress(&cinfo);
  const size_t stride = static_cast<size_t>(cinfo.output_width) * 3;
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = rgb + cinfo.output_scanline * stride;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return ok_status();
}

// ---- PNG (libpng's simplified API, which catches its own errors) ----

Status decode_png(Bytes data, ImageTarget& target) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, data.data(), data.size()))
    return target.fail(std::string("malformed PNG: ") + image.message);
  image.format = PNG_FORMAT_RGB;
  uint8_t* rgb = target.begin(image.height, image.width);
  if (!rgb) {
    png_image_free(&image);
    return target.status;
  }
  if (!png_image_finish_read(&image, nullptr, rgb, 0, nullptr))
    return target.fail(std::string("malformed PNG: ") + image.message);
  return ok_status();
}

// ---- little helpers for the formats read by hand ----

uint32_t read_u16(const uint8_t* p, bool big_endian) {
  return big_endian ? (uint32_t{p[0]} << 8) | p[1] : (uint32_t{p[1]} << 8) | p[0];
}

uint32_t read_u32(const uint8_t* p, bool big_endian) {
  return big_endian ? (read_u16(p, true) << 16) | read_u16(p + 2, true)
                    : (read_u16(p + 2, false) << 16) | read_u16(p, false);
}

// ---- BMP: BITMAPINFOHEADER or later, uncompressed 24/32-bit or 8-bit paletted ----

Status decode_bmp(Bytes data, ImageTarget& target) {
  const uint8_t* d = data.data();
  const size_t size = data.size();
  if (size < 54) return target.fail("malformed BMP: shorter than its headers");
  const uint32_t pixel_offset = read_u32(d + 10, false);
  const uint32_t header_size = read_u32(d + 14, false);
  if (header_size < 40 || header_size > size - 14) return target.fail("malformed BMP: unsupported header size");
  const auto width = static_cast<int32_t>(read_u32(d + 18, false));
  const auto height = static_cast<int32_t>(read_u32(d + 22, false));
  const uint32_t bits = read_u16(d + 28, false);
  const uint32_t compression = read_u32(d + 30, false);
  if (compression != 0) return target.fail("BMP compression " + std::to_string(compression) + " is not supported");
  if (bits != 8 && bits != 24 && bits != 32)
    return target.fail("BMP with " + std::to_string(bits) + " bits per pixel is not supported");
  // A negative height means rows are stored top-down.
  const bool top_down = height < 0;
  const int64_t h = top_down ? -int64_t{height} : height;
  const int64_t w = width;
  uint32_t colors = 0;
  const uint8_t* palette = d + 14 + header_size;
  if (bits == 8) {
    colors = read_u32(d + 46, false);
    if (colors == 0) colors = 256;
    if (colors > 256 || static_cast<size_t>(14 + header_size) + size_t{colors} * 4 > size)
      return target.fail("malformed BMP: palette out of range");
  }
  if (w <= 0 || h <= 0 || w > kMaxSide || h > kMaxSide) return target.fail("malformed BMP: bad image size");
  const int64_t stride = (w * bits + 31) / 32 * 4;
  if (pixel_offset > size || static_cast<int64_t>(size - pixel_offset) < stride * h)
    return target.fail("malformed BMP: pixel data is truncated");
  uint8_t* rgb = target.begin(h, w);
  if (!rgb) return target.status;
  for (int64_t y = 0; y < h; ++y) {
    const uint8_t* src = d + pixel_offset + (top_down ? y : h - 1 - y) * stride;
    uint8_t* dst = rgb + y * w * 3;
    for (int64_t x = 0; x < w; ++x) {
      const uint8_t* bgr = src;
      if (bits == 8) {
        if (src[x] >= colors) return target.fail("malformed BMP: palette index out of range");
        bgr = palette + src[x] * 4;
      } else {
        bgr = src + x * (bits / 8);
      }
      dst[x * 3] = bgr[2];
      dst[x * 3 + 1] = bgr[1];
      dst[x * 3 + 2] = bgr[0];
    }
  }
  return ok_status();
}

// ---- PNM: binary P5 (grey) and P6 (RGB) with maxval 255 ----

// Reads the next header number, skipping whitespace and # comments.
bool pnm_number(Bytes data, size_t& pos, int64_t& value) {
  while (pos < data.size()) {
    if (data[pos] == '#') {
      while (pos < data.size() && data[pos] != '\n') ++pos;
    } else if (data[pos] == ' ' || data[pos] == '\t' || data[pos] == '\n' || data[pos] == '\r') {
      ++pos;
    } else {
      break;
    }
  }
  value = 0;
  const size_t start = pos;
  while (pos < data.size() && data[pos] >= '0' && data[pos] <= '9' && value <= kMaxPixels) {
    value = value * 10 + (data[pos] - '0');
    ++pos;
  }
  return pos > start && value <= kMaxPixels;
}

Status decode_pnm(Bytes data, ImageTarget& target) {
  const bool gray = data[1] == '5';
  size_t pos = 2;
  int64_t w = 0, h = 0, maxval = 0;
  if (!pnm_number(data, pos, w) || !pnm_number(data, pos, h) || !pnm_number(data, pos, maxval) ||
      pos >= data.size())
    return target.fail("malformed PNM header");
  if (maxval != 255) return target.fail("PNM maxval " + std::to_string(maxval) + " is not supported (only 255)");
  ++pos;  // the single whitespace byte after maxval
  if (w <= 0 || h <= 0 || w > kMaxSide || h > kMaxSide) return target.fail("malformed PNM: bad image size");
  const int64_t channels = gray ? 1 : 3;
  if (static_cast<int64_t>(data.size() - pos) < w * h * channels)
    return target.fail("malformed PNM: pixel data is truncated");
  uint8_t* rgb = target.begin(h, w);
  if (!rgb) return target.status;
  const uint8_t* src = data.data() + pos;
  for (int64_t i = 0; i < w * h; ++i)
    for (int64_t c = 0; c < 3; ++c) rgb[i * 3 + c] = src[i * channels + (gray ? 0 : c)];
  return ok_status();
}

// ---- TIFF: baseline, uncompressed, 8-bit chunky RGB or grey, in strips ----

struct TiffInfo {
  int64_t width = 0, height = 0, samples = 1, bits = 8, compression = 1, planar = 1;
  int64_t rows_per_strip = 0;
  uint32_t offsets_at = 0, offsets_count = 0, offsets_type = 0;
};

Status decode_tiff(Bytes data, ImageTarget& target) {
  const uint8_t* d = data.data();
  const size_t size = data.size();
  const bool be = d[0] == 'M';
  if (size < 8) return target.fail("malformed TIFF: shorter than its header");
  const uint32_t ifd = read_u32(d + 4, be);
  if (ifd > size - 2) return target.fail("malformed TIFF: directory out of range");
  const uint32_t entries = read_u16(d + ifd, be);
  if (size_t{ifd} + 2 + size_t{entries} * 12 > size) return target.fail("malformed TIFF: directory out of range");
  TiffInfo t;
  t.rows_per_strip = -1;
  for (uint32_t i = 0; i < entries; ++i) {
    const uint8_t* e = d + ifd + 2 + i * 12;
    const uint32_t tag = read_u16(e, be);
    const uint32_t type = read_u16(e + 2, be);
    const uint32_t count = read_u32(e + 4, be);
    // SHORT (3) values sit in the entry's first two bytes, LONG (4) in all four.
    const int64_t value = type == 3 ? read_u16(e + 8, be) : read_u32(e + 8, be);
    switch (tag) {
      case 256: t.width = value; break;
      case 257: t.height = value; break;
      case 258: {
        // One bits-per-sample value per sample, stored elsewhere when more than two.
        const uint32_t at = count > 2 ? read_u32(e + 8, be) : static_cast<uint32_t>(e + 8 - d);
        if (at > size - 2) return target.fail("malformed TIFF: BitsPerSample out of range");
        t.bits = read_u16(d + at, be);
        break;
      }
      case 259: t.compression = value; break;
      case 273:
        t.offsets_at = count == 1 ? static_cast<uint32_t>(e + 8 - d) : read_u32(e + 8, be);
        t.offsets_count = count;
        t.offsets_type = type;
        break;
      case 277: t.samples = value; break;
      case 278: t.rows_per_strip = value; break;
      case 284: t.planar = value; break;
      default: break;
    }
  }
  if (t.compression != 1)
    return target.fail("compressed TIFF (" + std::to_string(t.compression) + ") is not supported");
  if (t.bits != 8 || (t.samples != 1 && t.samples != 3 && t.samples != 4) || (t.planar != 1 && t.samples > 1))
    return target.fail("only 8-bit chunky grey/RGB/RGBA TIFF is supported");
  if (t.width <= 0 || t.height <= 0 || t.width > kMaxSide || t.height > kMaxSide)
    return target.fail("malformed TIFF: bad image size");
  if (t.rows_per_strip <= 0 || t.rows_per_strip > t.height) t.rows_per_strip = t.height;
  const int64_t strips = (t.height + t.rows_per_strip - 1) / t.rows_per_strip;
  const size_t entry_size = t.offsets_type == 3 ? 2 : 4;
  if (t.offsets_count != strips || t.offsets_at > size || (size - t.offsets_at) / entry_size < t.offsets_count)
    return target.fail("malformed TIFF: strip offsets out of range");
  const int64_t row_bytes = t.width * t.samples;
  uint8_t* rgb = target.begin(t.height, t.width);
  if (!rgb) return target.status;
  for (int64_t s = 0; s < strips; ++s) {
    const uint8_t* at = d + t.offsets_at + s * entry_size;
    const uint32_t offset = entry_size == 2 ? read_u16(at, be) : read_u32(at, be);
    const int64_t rows = std::min(t.rows_per_strip, t.height - s * t.rows_per_strip);
    if (offset > size || static_cast<int64_t>(size - offset) < rows * row_bytes)
      return target.fail("malformed TIFF: strip data is truncated");
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* src = d + offset + r * row_bytes;
      uint8_t* dst = rgb + (s * t.rows_per_strip + r) * t.width * 3;
      for (int64_t x = 0; x < t.width; ++x)
        for (int64_t c = 0; c < 3; ++c) dst[x * 3 + c] = src[x * t.samples + (t.samples == 1 ? 0 : c)];
    }
  }
  return ok_status();
}

// `magic` may hold NULs, so callers pass string_view literals ("..."sv).
bool starts_with(Bytes data, std::string_view magic, size_t at = 0) {
  return data.size() >= at + magic.size() && std::memcmp(data.data() + at, magic.data(), magic.size()) == 0;
}

// JPEG 2000 comes as a JP2 file (a box starting with its signature) or as a
// bare codestream (SOC then SIZ markers).
constexpr std::string_view kJp2Magic = "\0\0\0\x0CjP  \r\n\x87\n"sv;
constexpr std::string_view kJ2kMagic = "\xFF\x4F\xFF\x51"sv;

class ImageDecoderKernel final : public Kernel {
 public:
  ImageDecoderKernel(const KernelCreateContext& ctx, Status& status) {
    const std::string format = ctx.node().attr_string("pixel_format", "RGB");
    if (format == "RGB") {
      format_ = PixelFormat::kRgb;
    } else if (format == "BGR") {
      format_ = PixelFormat::kBgr;
    } else if (format == "Grayscale") {
      format_ = PixelFormat::kGray;
    } else {
      status = ctx.error("attribute 'pixel_format' must be RGB, BGR or Grayscale, got '" + format + "'");
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    if (in.dtype() != DataType::kUint8 || in.shape().rank() != 1)
      return kernel_error(ctx, "input 0 (encoded_stream) must be a 1-D uint8 tensor, got " + in.describe());
    const Bytes data(in.data<uint8_t>(), static_cast<size_t>(in.num_elements()));
    ImageTarget target{ctx, format_, ok_status()};
    Status decoded = decode(data, target);
    if (!decoded.ok()) return decoded;
    target.finish();
    return ok_status();
  }

 private:
  static Status decode(Bytes data, ImageTarget& target) {
    if (starts_with(data, "\xFF\xD8\xFF"sv)) return decode_jpeg(data, target);
    if (starts_with(data, "\x89PNG\r\n\x1A\n"sv)) return decode_png(data, target);
    if (starts_with(data, "BM"sv)) return decode_bmp(data, target);
    if (starts_with(data, "P5"sv) || starts_with(data, "P6"sv)) return decode_pnm(data, target);
    if (starts_with(data, "II*\0"sv) || starts_with(data, "MM\0*"sv)) return decode_tiff(data, target);
    if (starts_with(data, "RIFF"sv) && starts_with(data, "WEBP"sv, 8))
      return image::decode_webp(data, target);
    if (starts_with(data, kJp2Magic)) return image::decode_jpeg2000(data, /*jp2=*/true, target);
    if (starts_with(data, kJ2kMagic)) return image::decode_jpeg2000(data, /*jp2=*/false, target);
    return target.fail("unrecognised image format");
  }

  PixelFormat format_ = PixelFormat::kRgb;
};

const KernelDef kImageDecoderKernels[] = {
    {"", "ImageDecoder", 20, kLatestVersion, 0, type_bit(DataType::kUint8), &make_kernel<ImageDecoderKernel>},
};

}  // namespace

std::span<const KernelDef> image_decoder_kernels() { return kImageDecoderKernels; }

}  // namespace sy::cpu
