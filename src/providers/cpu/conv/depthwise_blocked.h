// Depthwise 2-D convolution (group == C == M, MobileNet's middle layer),
// vectorised across channels: any kernel size, stride, dilation and
// padding.
//
// NCHW planes of a few dozen positions per row leave most of a 16-lane
// vector idle when the loop runs along a row (a 14x14 or 7x7 map), so this
// kernel works on blocks of depthwise_lanes() channels instead:
//   1. the block's input rows are transposed in registers into a
//      zero-bordered interleaved plane [row][column][lane], so every tap of
//      every output position is one full-vector load (when x comes
//      channel-blocked already, its rows are read in place instead, the
//      output columns whose taps leave them checked tap by tap);
//   2. each output position is kh * kw vector FMAs against the block's
//      weights, packed once as [tap][lane]; bias and the activation clamp
//      follow in registers;
//   3. the interleaved outputs are transposed back to NCHW (or, for a
//      channel-blocked y, stored as they are).
// Large maps go in bands of output rows so both buffers stay in L2. The
// body (depthwise_blocked_body.h) is compiled per ISA; the best is picked
// once at run time.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "providers/cpu/conv/window_2d.h"

namespace sy::cpu {

// Channels per block of the variant in use (16 with AVX-512, 8 with AVX2, 1
// otherwise).
int depthwise_lanes();

// W [C][kh * kw] as the kernel reads it: [C / lanes rounded up][kh * kw][lanes],
// zeros for the channels past C.
std::vector<float> pack_depthwise_weights(const float* w, int64_t C, int64_t taps);
int64_t packed_depthwise_weights_size(int64_t C, int64_t taps);
void pack_depthwise_weights_into(const float* w, int64_t C, int64_t taps, float* packed);

struct DepthwiseShape : Window2d {
  int64_t N = 0, C = 0;
  // x arrives channel-blocked (conv/blocked_layout.h's NCHW16c, C a
  // multiple of 16): the interleaved plane is then a copy of its rows,
  // with no transpose.
  bool x_blocked16 = false;
  // y is wanted channel-blocked (NCHW16c, C a multiple of 16), for a 1x1
  // Conv that reads it so: with 16 lanes the outputs go straight into y,
  // with no transpose back to NCHW.
  bool y_blocked16 = false;
};

// Floats of scratch depthwise_blocked needs for `shape` on `pool`.
int64_t depthwise_blocked_scratch_floats(const DepthwiseShape& shape, const ThreadPool& pool);

// y [N][C][OH][OW] = depthwise conv of x [N][C][H][W] with the packed
// weights, plus bias (C floats, or nullptr), clamped to [lo, hi] (-inf/+inf
// for no activation, 0/+inf for Relu).
void depthwise_blocked(const DepthwiseShape& shape, const float* x, const float* packed_w, const float* bias, float lo,
                       float hi, float* y, float* scratch, ThreadPool& pool);

// One block of channels over one band of output rows, for the ISA variants.
struct DepthwiseBandArgs {
  DepthwiseShape s;
  const float* x = nullptr;  // [C][H][W], one image
  float* y = nullptr;        // [C][OH][OW], one image
  const float* w = nullptr;  // this block's packed weights, [kh * kw][lanes]
  const float* bias = nullptr;
  float lo = 0.0f, hi = 0.0f;
  int64_t c0 = 0;               // first channel of the block
  int64_t oh0 = 0, oh1 = 0;     // output rows of the band
  float* plane = nullptr;       // plane_rows(band) * plane_width * lanes floats
  float* staging = nullptr;     // (oh1 - oh0) * OW * lanes floats; with 16
                                // lanes and y_blocked16, the band's place in y
};

namespace depthwise_detail {
// Each variant, for the tests (callable only where cpu_supports says so).
void depthwise_band_avx512(const DepthwiseBandArgs& a);
void depthwise_band_avx2(const DepthwiseBandArgs& a);
void depthwise_band_portable(const DepthwiseBandArgs& a);
}  // namespace depthwise_detail

}  // namespace sy::cpu
