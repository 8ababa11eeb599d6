// The sliding-window arithmetic of Conv and the pools along one spatial
// dim: output size and effective pads from auto_pad, pads, stride,
// dilation and ceil_mode. Part of the provider SDK (see axis.h): the CPU
// and CUDA providers compute exactly the same windows.
#pragma once

#include <cstdint>
#include <string>

namespace sy::provider_sdk {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// auto_pad from its attribute text (empty means NOTSET); false for anything
// else.
inline bool parse_auto_pad(const std::string& text, AutoPad& out) {
  if (text == "NOTSET" || text.empty()) {
    out = AutoPad::kNotSet;
  } else if (text == "SAME_UPPER") {
    out = AutoPad::kSameUpper;
  } else if (text == "SAME_LOWER") {
    out = AutoPad::kSameLower;
  } else if (text == "VALID") {
    out = AutoPad::kValid;
  } else {
    return false;
  }
  return true;
}

struct WindowDim {
  int64_t out = 0;
  int64_t pad_begin = 0;
  int64_t pad_end = 0;
};

// Spatial dim `dim` of size `in`: explicit pads (pad_begin, pad_end as
// written; ignored unless auto_pad is NOTSET) with floor or ceil, a
// ceil-mode window that would start in the end padding dropped; VALID is
// pads of 0 with the same rule; SAME_* gives ceil(in / stride) and splits
// the padding, the odd one at the end (UPPER) or the beginning (LOWER).
// Returns "" or what is wrong.
inline std::string window_dim(int dim, int64_t in, int64_t kernel, int64_t stride, int64_t dilation, AutoPad auto_pad,
                              int64_t pad_begin, int64_t pad_end, bool ceil_mode, WindowDim& w) {
  const int64_t ek = (kernel - 1) * dilation + 1;  // the window's extent after dilation
  w = WindowDim{};
  if (auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower) {
    w.out = (in + stride - 1) / stride;
    const int64_t need = (w.out - 1) * stride + ek - in;
    const int64_t total = need > 0 ? need : 0;
    w.pad_begin = auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
    w.pad_end = total - w.pad_begin;
    return "";
  }
  if (auto_pad == AutoPad::kNotSet) {
    w.pad_begin = pad_begin;
    w.pad_end = pad_end;
  }
  const int64_t avail = in + w.pad_begin + w.pad_end - ek;
  if (avail < 0)
    return "the window (" + std::to_string(ek) + " after dilation) is larger than spatial dim " + std::to_string(dim) +
           " of the input (" + std::to_string(in) + " plus padding " + std::to_string(w.pad_begin + w.pad_end) + ")";
  w.out = ceil_mode ? (avail + stride - 1) / stride + 1 : avail / stride + 1;
  // A window that would start in the end padding is dropped.
  if (ceil_mode && (w.out - 1) * stride >= in + w.pad_begin) --w.out;
  return "";
}

// ConvTranspose along one spatial dim: the output size and the pads that
// crop the full transposed window. The full size is stride * (in - 1) +
// output_padding + the dilated kernel; `output_shape` (-1: not given), or
// SAME_* (in * stride), fixes the size instead, and the difference becomes
// the pads, split with the odd one at the beginning unless SAME_UPPER.
// The split floors, so an output_shape one larger than the full size gives
// a pad of -1 at the end: an extra position that only the bias reaches.
// Returns "" or what is wrong.
inline std::string transposed_window_dim(int dim, int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                         AutoPad auto_pad, int64_t pad_begin, int64_t pad_end,
                                         int64_t output_padding, int64_t output_shape, WindowDim& w) {
  w = WindowDim{};
  // Attributes come from the model: any product may overflow.
  int64_t spread = 0, extent = 0, full = 0, same = 0;
  if (__builtin_mul_overflow(stride, in - 1, &spread) || __builtin_mul_overflow(kernel - 1, dilation, &extent) ||
      __builtin_add_overflow(spread, extent, &full) || __builtin_add_overflow(full, output_padding + 1, &full) ||
      __builtin_mul_overflow(in, stride, &same))
    return "spatial dim " + std::to_string(dim) + "'s output size overflows";
  int64_t target = output_shape;
  if (target < 0 && (auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower)) target = same;
  if (target >= 0) {
    int64_t total = 0;
    if (__builtin_sub_overflow(full, target, &total))
      return "spatial dim " + std::to_string(dim) + "'s padding overflows";
    const int64_t half = total / 2 - (total % 2 < 0 ? 1 : 0);  // floor(total / 2)
    w.pad_begin = auto_pad == AutoPad::kSameUpper ? half : total - half;
    w.pad_end = total - w.pad_begin;
    w.out = target;
    return "";
  }
  if (auto_pad == AutoPad::kNotSet) {
    w.pad_begin = pad_begin;
    w.pad_end = pad_end;
  }
  if (__builtin_sub_overflow(full, w.pad_begin, &w.out) || __builtin_sub_overflow(w.out, w.pad_end, &w.out) || w.out < 0)
    return "pads " + std::to_string(w.pad_begin) + " and " + std::to_string(w.pad_end) + " crop more than spatial dim " +
           std::to_string(dim) + "'s full output of " + std::to_string(full);
  return "";
}

}  // namespace sy::provider_sdk
