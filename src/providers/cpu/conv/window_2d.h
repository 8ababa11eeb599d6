// One image's 2-D sliding window as the 2-D conv kernels take it (the
// depthwise and the few-channel direct kernels): input and output map
// sizes, kernel, strides, dilations and the leading pads (the trailing ones
// follow from the sizes). Each kernel's shape struct adds its channels.
#pragma once

#include <cstdint>

namespace sy::cpu {

struct Window2d {
  int64_t H = 0, W = 0, OH = 0, OW = 0;
  int64_t kh = 0, kw = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
};

}  // namespace sy::cpu
