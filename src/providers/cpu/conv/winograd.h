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
// A 3x3 stride-2 conv (ResNet's first 3x3 of each stage) splits by the
// parity of the input rows and columns a tile reads. A tile of t x t
// outputs reads 2t + 1 inputs a side; the t + 1 even ones meet kernel taps
// 0 and 2, the t odd ones tap 1. So the conv is the sum of four stride-1
// convs over the four phases, with 2x2, 2x1, 1x2 and 1x1 kernels, and
// each runs as Winograd F(t, 2) on its two-tap sides, as is on its
// one-tap sides: (t + 1)^2 + 2 t (t + 1) + t^2 = (2t + 1)^2 multiplies per
// t^2 outputs, 81 per 16 (tiles of 4) or 25 per 4 (tiles of 2), against 9
// per output direct. Points sharing a weight matrix (the one-tap sides
// repeat theirs) share one GEMM of several rows per tile: 36 GEMMs for
// tiles of 4, 16 for 2. ResNet-50 at 1 thread: its 56 -> 28 one 2.19 ->
// 1.67 ms, its 28 -> 14 one 2.09 -> 1.65 ms.
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
  // output is worth it (a 7x7 stem over at most 4 channels, or a 3x3 over
  // 16 and more with an output of 14x14 and up).
  static bool strided_worthwhile(int64_t C, int64_t M, int64_t kernel, int64_t OH, int64_t OW);
  // The output tile side for a stride-2 one: 4, or 2 for a 3x3 where
  // tiles of 4 would pad the map more.
  static int64_t strided_tile_for(int64_t kernel, int64_t OH, int64_t OW);

  // The output tile side for OH x OW maps of a 3x3 stride-1 conv: 4,
  // F(4x4, 3x3), 5, F(5x5, 3x3), or 2, F(2x2, 3x3).
  static int64_t tile_for(int64_t OH, int64_t OW);

  // Transforms and packs W [M, C, kernel, kernel]: stride 1 with kernel 3
  // for tiles of side `tile` (4, 5 or 2); stride 2 with kernel 7 or 8
  // (`tile` is then 4), or with kernel 3 for tiles of 4 or 2. False when
  // packing memory ran out.
  bool init(const float* w, int64_t M, int64_t C, int64_t kernel, int64_t stride, int64_t tile);
  bool ready() const { return !u_.empty(); }
  int64_t out_channels() const { return M_; }
  int64_t in_channels() const { return C_; }
  int64_t stride() const { return stride_; }

  // The prepare phase: plans the GEMMs of an OH x OW output on `pool`.
  void plan(int64_t OH, int64_t OW, const ThreadPool& pool, GemmPlans& plans) const;
  // Scratch bytes for one image of OH x OW output, with those plans.
  size_t workspace_size(int64_t OH, int64_t OW, const ThreadPool& pool, const GemmPlans& plans) const;

  // One image: x [C, H, W] -> y [M, OH, OW] at the stride given to init,
  // with pads (top, left) and the
  // epilogue's per-channel bias and activation. x_blocked / y_blocked: that
  // side is in NCHW16c instead (conv/blocked_layout.h; C or M a multiple
  // of 16).
  void run(const float* x, int64_t H, int64_t W, float* y, int64_t OH, int64_t OW, int64_t pad_top, int64_t pad_left,
           const GemmEpilogue& ep, const GemmPlans& plans, void* workspace, ThreadPool& pool, bool x_blocked = false,
           bool y_blocked = false) const;

 private:
  struct Layout;
  // One GEMM: rows_per_tile rows of V per tile from slot first_slot (a slot
  // is one row per tile), times its U.
  struct Gemm {
    int64_t first_slot = 0, rows_per_tile = 1;
  };
  bool init_split(const float* w, int64_t tile);
  bool allocate_u(int64_t count, int64_t rows);
  // The stem's stride 2 goes through space to depth; a 3x3's is split.
  bool uses_phases() const { return stride_ == 2 && !split_; }
  // The GEMMs' inner dimension: C, or the stem's 4C phase channels.
  int64_t gemm_channels() const { return uses_phases() ? 4 * C_ : C_; }
  int64_t M_ = 0, C_ = 0;
  int64_t tile_ = 4;
  int64_t kernel_ = 3;  // the stride-1 kernel side the transforms see (3 for the split stride 2)
  int64_t stride_ = 1;
  bool split_ = false;  // the phase-split stride-2 3x3
  std::vector<Gemm> gemms_;
  std::vector<PackedMatrix> u_;  // gemms_'s transformed weight matrices, packed B [C x M]
};

}  // namespace sy::cpu
