// ImageDecoder's JPEG 2000 reader (openjp2), for JP2 files and bare J2K
// codestreams. openjp2 reads through a stream whose callbacks here walk the
// input buffer; its errors are caught by a handler that keeps the message,
// so nothing is printed. Supported: 8-bit unsigned grey or RGB (a fourth or
// second component, alpha, is dropped) without subsampled components.

#include <openjpeg.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "providers/cpu/image_decoder.h"

namespace sy::cpu::image {
namespace {

// The stream's view of the input; `pos` is the next byte openjp2 reads.
struct MemoryStream {
  Bytes data;
  size_t pos = 0;
};

OPJ_SIZE_T stream_read(void* buffer, OPJ_SIZE_T bytes, void* user) {
  auto* s = static_cast<MemoryStream*>(user);
  if (s->pos >= s->data.size()) return static_cast<OPJ_SIZE_T>(-1);  // end of stream
  const size_t n = std::min(static_cast<size_t>(bytes), s->data.size() - s->pos);
  std::memcpy(buffer, s->data.data() + s->pos, n);
  s->pos += n;
  return n;
}

// Skips forward or back, clamped to the buffer; returns how far it moved.
OPJ_OFF_T stream_skip(OPJ_OFF_T bytes, void* user) {
  auto* s = static_cast<MemoryStream*>(user);
  const auto size = static_cast<OPJ_OFF_T>(s->data.size());
  const auto pos = static_cast<OPJ_OFF_T>(s->pos);
  const OPJ_OFF_T next = std::clamp<OPJ_OFF_T>(pos + bytes, 0, size);
  s->pos = static_cast<size_t>(next);
  return next - pos;
}

OPJ_BOOL stream_seek(OPJ_OFF_T offset, void* user) {
  auto* s = static_cast<MemoryStream*>(user);
  if (offset < 0 || static_cast<uint64_t>(offset) > s->data.size()) return OPJ_FALSE;
  s->pos = static_cast<size_t>(offset);
  return OPJ_TRUE;
}

// Keeps openjp2's first error message (the later ones follow from it).
void keep_error(const char* message, void* user) {
  auto* error = static_cast<std::string*>(user);
  if (!error->empty()) return;
  *error = message;
  while (!error->empty() && (error->back() == '\n' || error->back() == ' ')) error->pop_back();
}

void quiet(const char*, void*) {}

// Owns openjp2's objects so every return path frees them.
struct Decoder {
  opj_codec_t* codec = nullptr;
  opj_stream_t* stream = nullptr;
  opj_image_t* image = nullptr;

  ~Decoder() {
    if (image) opj_image_destroy(image);
    if (stream) opj_stream_destroy(stream);
    if (codec) opj_destroy_codec(codec);
  }
};

// openjp2 buffers its reads in chunks of this size.
constexpr OPJ_SIZE_T kStreamChunk = 64 * 1024;

}  // namespace

Status decode_jpeg2000(Bytes data, bool jp2, ImageTarget& target) {
  MemoryStream source{data};
  std::string error;
  Decoder d;
  d.codec = opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K);
  d.stream = opj_stream_create(kStreamChunk, OPJ_TRUE);
  if (!d.codec || !d.stream) return target.fail("JPEG 2000: could not create the openjp2 decoder");
  opj_set_error_handler(d.codec, &keep_error, &error);
  opj_set_warning_handler(d.codec, &quiet, nullptr);
  opj_set_info_handler(d.codec, &quiet, nullptr);
  opj_dparameters_t parameters;
  opj_set_default_decoder_parameters(&parameters);
  if (!opj_setup_decoder(d.codec, &parameters)) return target.fail("JPEG 2000: could not set up the decoder");
  opj_stream_set_user_data(d.stream, &source, nullptr);
  opj_stream_set_user_data_length(d.stream, data.size());
  opj_stream_set_read_function(d.stream, &stream_read);
  opj_stream_set_skip_function(d.stream, &stream_skip);
  opj_stream_set_seek_function(d.stream, &stream_seek);

  if (!opj_read_header(d.stream, d.codec, &d.image) || !d.image)
    return target.fail("malformed JPEG 2000 header: " + error);
  const opj_image_t& img = *d.image;
  if (img.numcomps < 1 || img.numcomps > 4)
    return target.fail("JPEG 2000 with " + std::to_string(img.numcomps) + " components is not supported");
  // Grey is one component (plus alpha), colour three (plus alpha).
  const uint32_t colours = img.numcomps < 3 ? 1 : 3;
  if (colours == 3 && img.color_space != OPJ_CLRSPC_SRGB && img.color_space != OPJ_CLRSPC_UNSPECIFIED &&
      img.color_space != OPJ_CLRSPC_UNKNOWN)
    return target.fail("JPEG 2000 colour space " + std::to_string(img.color_space) +
                       " is not supported (only sRGB and grey)");
  for (uint32_t c = 0; c < colours; ++c) {
    const opj_image_comp_t& comp = img.comps[c];
    if (comp.dx != 1 || comp.dy != 1)
      return target.fail("JPEG 2000 with subsampled components is not supported");
    if (comp.prec != 8 || comp.sgnd)
      return target.fail("JPEG 2000 with " + std::to_string(comp.prec) + "-bit " +
                         (comp.sgnd ? "signed" : "unsigned") + " samples is not supported (only 8-bit unsigned)");
  }
  if (img.x1 <= img.x0 || img.y1 <= img.y0) return target.fail("malformed JPEG 2000: empty image area");
  const int64_t width = int64_t{img.x1} - img.x0;
  const int64_t height = int64_t{img.y1} - img.y0;
  uint8_t* rgb = target.begin(height, width);
  if (!rgb) return target.status;

  if (!opj_decode(d.codec, d.stream, d.image) || !opj_end_decompress(d.codec, d.stream))
    return target.fail("malformed JPEG 2000: " + (error.empty() ? std::string("the image does not decode") : error));
  for (uint32_t c = 0; c < colours; ++c) {
    const opj_image_comp_t& comp = img.comps[c];
    if (!comp.data || comp.w != width || comp.h != height)
      return target.fail("malformed JPEG 2000: component " + std::to_string(c) + " does not cover the image");
  }
  for (int64_t i = 0; i < target.pixels; ++i) {
    for (uint32_t c = 0; c < 3; ++c) {
      const OPJ_INT32 v = img.comps[colours == 1 ? 0 : c].data[i];
      rgb[i * 3 + c] = static_cast<uint8_t>(std::clamp<OPJ_INT32>(v, 0, 255));
    }
  }
  return ok_status();
}

}  // namespace sy::cpu::image
