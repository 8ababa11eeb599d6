// Depthwise 3x3 convolution (MobileNet's middle layer), stride 1 or 2,
// dilation 1, any padding: one plane at a time, with bias and the fused
// activation applied as each row is written. The body is plain C++ written
// so the compiler vectorises it (no branches in the inner loop: a tap row
// outside the input reads a valid row with a zero weight); it is compiled
// once per ISA (depthwise3x3_avx2.cc, _avx512.cc) and picked at run time.
#pragma once

#include <cstdint>

namespace sy::cpu {

struct Depthwise3x3Plane {
  const float* x;  // [H, W]
  float* y;        // [OH, OW]
  const float* w;  // [3, 3]
  int64_t H, W, OH, OW;
  int64_t stride;  // 1 or 2, both axes
  int64_t pad_top, pad_left;
  float bias;
  float lo, hi;  // the activation as a clamp (-inf/+inf when none, 0/+inf for Relu)
};

// Runs the fastest variant this CPU has.
void depthwise3x3(const Depthwise3x3Plane& p);

namespace depthwise_detail {
void depthwise3x3_avx2(const Depthwise3x3Plane& p);
void depthwise3x3_avx512(const Depthwise3x3Plane& p);
void depthwise3x3_portable(const Depthwise3x3Plane& p);
}  // namespace depthwise_detail

}  // namespace sy::cpu
