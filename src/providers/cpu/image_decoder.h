// Shared by ImageDecoder's format readers (image_decoder.cc, image_webp.cc,
// image_jpeg2000.cc): the size limits and the RGB buffer they decode into.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "providers/kernel.h"

namespace sy::cpu::image {

// Larger images are rejected before anything is allocated for them.
constexpr int64_t kMaxSide = 1 << 16;
constexpr int64_t kMaxPixels = int64_t{1} << 28;

enum class PixelFormat { kRgb, kBgr, kGray };

using Bytes = std::span<const uint8_t>;

// Where a decoder puts its pixels: begin() checks the size and hands out an
// RGB buffer of h * w * 3 bytes, or nullptr with `status` set.
struct ImageTarget {
  KernelContext& ctx;
  PixelFormat format;
  Status status;
  Tensor* out = nullptr;
  uint8_t* rgb = nullptr;
  int64_t pixels = 0;

  uint8_t* begin(int64_t height, int64_t width) {
    if (height <= 0 || width <= 0 || height > kMaxSide || width > kMaxSide || height * width > kMaxPixels) {
      status = kernel_error(ctx, "image size " + std::to_string(height) + "x" + std::to_string(width) +
                                     " is empty or larger than the limit");
      return nullptr;
    }
    pixels = height * width;
    const int64_t channels = format == PixelFormat::kGray ? 1 : 3;
    Result<Tensor*> o = ctx.allocate_output(0, DataType::kUint8, Shape({height, width, channels}));
    if (!o.ok()) {
      status = o.status();
      return nullptr;
    }
    out = *o;
    if (format != PixelFormat::kGray) return rgb = out->data<uint8_t>();
    Result<void*> s = ctx.scratch(static_cast<size_t>(pixels) * 3);
    if (!s.ok()) {
      status = s.status();
      return nullptr;
    }
    return rgb = static_cast<uint8_t*>(*s);
  }

  // Turns the decoded RGB into the requested pixel format.
  void finish() const {
    if (format == PixelFormat::kRgb) return;
    uint8_t* dst = out->data<uint8_t>();
    for (int64_t i = 0; i < pixels; ++i) {
      uint8_t* p = rgb + i * 3;
      if (format == PixelFormat::kBgr) {
        std::swap(p[0], p[2]);
      } else if (format == PixelFormat::kGray) {
        // PIL's ITU-R 601-2 luma in 16-bit fixed point, rounded.
        dst[i] = static_cast<uint8_t>((p[0] * 19595 + p[1] * 38470 + p[2] * 7471 + 0x8000) >> 16);
      }
    }
  }

  Status fail(const std::string& message) const { return kernel_error(ctx, message); }
};

// Each reader checks the size with target.begin() before decoding pixels
// and returns an error naming the node for malformed data.
Status decode_webp(Bytes data, ImageTarget& target);
// `jp2` tells a JP2 file from a bare J2K codestream.
Status decode_jpeg2000(Bytes data, bool jp2, ImageTarget& target);

}  // namespace sy::cpu::image
