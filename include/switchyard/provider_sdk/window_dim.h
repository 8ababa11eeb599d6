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

}  // namespace sy::provider_sdk
