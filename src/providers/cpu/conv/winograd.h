// Winograd F(4x4, 3x3) convolution for 3x3, stride 1, dilation 1, group 1
// convolutions (ResNet's middle layers). Each 4x4 output tile comes from a
// 6x6 input tile: the input and weights are transformed, multiplied
// element-wise across channels — 36 independent GEMMs of [tiles x C] by
// [C x M] on the packed sgemm — and transformed back. That is 36 multiplies
// per 16 outputs per channel pair instead of 144: 4x fewer, for the price
// of the transforms and of weights four times as large.
//
// Maps that 4 does not divide and 5 covers more tightly (14x14: 16 tiles
// of 4 over 16x16, 9 of 5 over 15x15) use F(5x5, 3x3): 7x7 input tiles,
// 49 GEMMs, 23 % fewer multiply-adds there than F(4x4, 3x3) (tile_for).
// Its points are 1, -1, 2, -2, 1/2, -1/2 (no 0): in float32 its error
// matches F(4x4, 3x3)'s, a few 1e-6 of the largest output.
//
// Maps with few tiles (7x7) use F(2x2, 3x3) instead: 2x2 output tiles from
// 4x4 input tiles, 16 GEMMs, 2.25x fewer multiplies than direct, and four
// times the tiles per weight matrix (tile_for says why that matters).
//
// A 7x7 stride-2 stem over RGB (ResNet's) goes through space to depth:
// the four phases of the input (even and odd rows and columns) become 12
// channels of a stride-1 input of half the size, and the kernel becomes
// each phase's taps, 4x4 (its taps past the 7th row and column zero).
// F(4x4, 4x4) runs on them with F(5x5, 3x3)'s 7 points: 49 multiplies per
// 16 outputs per phase channel, 2352 per output against 9408 direct.
//
// The GEMMs put the output channels on the micro-kernel's wide (vector)
// side and the tiles on its narrow side, so maps with few tiles (a 14x14
// map has 16) still fill the registers. The transforms are vectorised
// across channel blocks (winograd_transforms.h), with bias and activation
// applied on the way out.
//
// The transforms are Lavin and Gray's ("Fast Algorithms for Convolutional
// Neural Networks", 2015), points 0, +-1, +-2; in float32 the result stays
// within about 1e-5 relative of the direct convolution for unit-scale data.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "providers/cpu/gemm/sgemm.h"
#include "switchyard/status.h"

namespace sy::cpu {

class WinogradConv {
 public:
  // Whether a conv of these shapes is worth it: enough channels for the
  // GEMMs and enough tiles per image (small maps waste most of each tile).
  static bool worthwhile(int64_t C, int64_t M, int64_t H, int64_t W);

  // Whether a stride-2 conv with a kernel x kernel kernel and an OH x OW
  // output is worth it (a 7x7 stem over at most 4 channels).
  static bool strided_worthwhile(int64_t C, int64_t M, int64_t kernel, int64_t OH, int64_t OW);

  // The output tile side for OH x OW maps of a 3x3 stride-1 conv: 4,
  // F(4x4, 3x3), 5, F(5x5, 3x3), or 2, F(2x2, 3x3).
  static int64_t tile_for(int64_t OH, int64_t OW);

  // Transforms and packs W [M, C, kernel, kernel]: stride 1 with kernel 3
  // for tiles of side `tile` (4, 5 or 2); stride 2 with kernel 7 or 8
  // (strided_worthwhile; `tile` is then 4). False when packing memory ran
  // out.
  bool init(const float* w, int64_t M, int64_t C, int64_t kernel, int64_t stride, int64_t tile);
  bool ready() const { return !u_.empty(); }
  int64_t out_channels() const { return M_; }
  int64_t in_channels() const { return C_; }
  int64_t stride() const { return stride_; }

  // Scratch bytes for one image of H x W input and OH x OW output.
  size_t workspace_size(int64_t OH, int64_t OW, const ThreadPool* pool) const;

  // One image: x [C, H, W] -> y [M, OH, OW] at the stride given to init,
  // with pads (top, left) and the
  // epilogue's per-channel bias and activation. x_blocked / y_blocked: that
  // side is in NCHW16c instead (conv/blocked_layout.h; C or M a multiple
  // of 16).
  void run(const float* x, int64_t H, int64_t W, float* y, int64_t OH, int64_t OW, int64_t pad_top, int64_t pad_left,
           const GemmEpilogue& ep, void* workspace, ThreadPool& pool, bool x_blocked = false,
           bool y_blocked = false) const;

 private:
  struct Layout;
  // The GEMMs' inner dimension: C, or the 4C phase channels at stride 2.
  int64_t gemm_channels() const { return stride_ == 2 ? 4 * C_ : C_; }
  int64_t M_ = 0, C_ = 0;
  int64_t tile_ = 4;
  int64_t kernel_ = 3;  // the stride-1 kernel side the transforms see
  int64_t stride_ = 1;
  std::vector<PackedMatrix> u_;  // (tile + kernel - 1)^2 transformed weight matrices, packed B [C x M]
};

}  // namespace sy::cpu
