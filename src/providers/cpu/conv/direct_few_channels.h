// Direct 2-D convolution for inputs of few channels: an image network's
// stem (MobileNetV2's 3 -> 32, 3x3 stride 2 on 224x224; ResNet's 3 -> 64,
// 7x7 stride 2, where it takes 20 % less time than im2col + GEMM).
//
// With C * kh * kw around 27, an im2col + GEMM spends more time copying
// (the columns, then packing them again) and storing C tiles after a
// 27-step product than multiplying. This kernel reads the input directly:
//   1. each input row is split once into `stride_w` phase rows (every
//      stride_w-th column, zero-bordered), so the input of a run of
//      consecutive output columns under any tap is one contiguous vector;
//   2. each output row is a few blocks of kDirectCoBlock output channels x
//      up to 6 vectors of columns, accumulated in registers over every tap
//      (one vector load per column vector, one broadcast per channel);
//   3. bias and the activation clamp go in registers as Y is stored, NCHW.
// The body (direct_few_channels_body.h) is compiled per ISA; the best is
// picked once at run time.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "providers/cpu/conv/window_2d.h"

namespace sy::cpu {

// Output channels per register block; W is packed in blocks of this many.
inline constexpr int64_t kDirectCoBlock = 4;
// Kernel widths up to this many columns, and C * kh * kw up to this many
// taps (their offsets go in fixed arrays).
inline constexpr int64_t kDirectMaxKernelW = 16;
inline constexpr int64_t kDirectMaxTaps = 160;
// Input channels up to this many: an image's (RGB, RGBA, a few more).
inline constexpr int64_t kDirectMaxChannels = 8;

struct DirectConvShape : Window2d {
  int64_t C = 0;  // one image's input channels
  int64_t M = 0;  // its output channels
};

// Whether the kernel suits a group-1 2-D conv with these input channels and
// kernel: few input channels times taps, so that the GEMM would be short.
bool direct_few_channels_suits(int64_t C, int64_t kh, int64_t kw);

// W [M][C * kh * kw] as the kernel reads it: [M / kDirectCoBlock rounded
// up][C * kh * kw][kDirectCoBlock], zeros for the channels past M.
std::vector<float> pack_direct_weights(const float* w, int64_t M, int64_t K);

// Floats of scratch direct_few_channels needs for `shape`.
int64_t direct_few_channels_scratch_floats(const DirectConvShape& shape);

// y [M][OH][OW] = conv of x [C][H][W] (one image) with the packed weights,
// plus bias (M floats, or nullptr), clamped to [lo, hi]. Only for shapes
// direct_few_channels_suits accepts.
void direct_few_channels(const DirectConvShape& shape, const float* x, const float* packed_w, const float* bias,
                         float lo, float hi, float* y, float* scratch, ThreadPool& pool);

// One output row, for the ISA variants.
struct DirectRowArgs {
  DirectConvShape s;
  const float* phases = nullptr;  // [C][H][stride_w][row_len]
  int64_t row_len = 0;
  // Per kernel column: where its input for output column 0 starts within
  // the phase rows of one input row (phase * row_len + margin + offset).
  int64_t tap_start[kDirectMaxKernelW] = {};
  const float* w = nullptr;  // packed weights
  const float* bias = nullptr;
  float lo = 0.0f, hi = 0.0f;
  float* y = nullptr;  // [M][OH][OW]
  int64_t oh = 0;
};

namespace direct_detail {
// Each variant, for the tests (callable only where cpu_supports says so).
void direct_row_avx512(const DirectRowArgs& a);
void direct_row_avx2(const DirectRowArgs& a);
void direct_row_portable(const DirectRowArgs& a);
// The whole convolution through one variant (`lanes` columns per vector),
// and the scratch it needs.
void run(void (*row)(const DirectRowArgs&), int lanes, const DirectConvShape& s, const float* x,
         const float* packed_w, const float* bias, float lo, float hi, float* y, float* scratch, ThreadPool& pool);
int64_t scratch_floats(const DirectConvShape& s, int lanes);
}  // namespace direct_detail

}  // namespace sy::cpu
