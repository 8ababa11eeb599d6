// The data transforms of the Winograd F(4x4, 3x3), F(5x5, 3x3),
// F(2x2, 3x3) and F(4x4, 4x4) convolutions and of the phase-split
// stride-2 3x3 (winograd.h),
// vectorised across channels; `tile` and `kernel` pick one. Both work on channel blocks of winograd_lanes() channels (16 with AVX-512, 8 with AVX2, 1 otherwise):
//   - input: a block of NCHW channels is copied, transposed in registers,
//     into a zero-bordered interleaved plane [row][column][lane], so every
//     (tile + 2)^2 patch element of the block is one vector load; each tile's
//     B^T d B then goes to V[point][tile][channel];
//   - output: A^T P A, bias and activation for a block of output channels,
//     written interleaved and transposed back to NCHW.
// Either side may instead be channel-blocked (conv/blocked_layout.h): the
// plane is then filled, and Y written, by plain row copies.
// The body is written once (winograd_transforms_body.h) against a small
// vector policy and compiled per ISA; the best the CPU runs is picked once.
#pragma once

#include <cstdint>

namespace sy::cpu {

// Channels per block of the variant in use.
int winograd_lanes();

// stride 2 is the phase-split stride-2 3x3 (winograd.h; kernel 3, tile 2
// or 4): a tile's (2 tile + 1)^2 points go to slots of GEMMs of several
// rows per tile (SplitSlots in winograd_transforms_body.h); point_stride
// is then the rows of a one-row-per-tile GEMM, tiles * v_ld.
struct WinogradInputArgs {
  int tile = 4;              // outputs per tile side, F(tile x tile, kernel x kernel)
  int kernel = 3;            // 3 with tiles of 4, 5 or 2; 4 with 4
  int stride = 1;            // 1, or 2 with kernel 3
  const float* x = nullptr;  // [C][H][W], or NCHW16c when x_blocked (C a multiple of 16)
  bool x_blocked = false;
  int64_t C = 0, H = 0, W = 0;
  int64_t pad_top = 0, pad_left = 0;
  int64_t first_row = 0;                   // the tiles' first output row (a multiple of tile)
  int64_t block_begin = 0, block_end = 0;  // channel blocks to do
  float* planes = nullptr;                 // block b at planes + b * plane_height * plane_width * lanes
  int64_t plane_height = 0;                // stride (tile * tiles_y - 1) + kernel
  int64_t plane_width = 0;                 // stride (tile * tiles_x - 1) + kernel
  int64_t tiles_x = 0, tiles = 0;
  float* v = nullptr;        // V[p][t][c] at v + p * point_stride + t * v_ld + c
  int64_t v_ld = 0;          // >= C rounded up to 16
  int64_t point_stride = 0;  // tiles * v_ld
};

struct WinogradOutputArgs {
  int tile = 4;                 // as WinogradInputArgs::tile
  int kernel = 3;               // as WinogradInputArgs::kernel
  int stride = 1;               // as WinogradInputArgs::stride
  const float* prod = nullptr;  // P[p][t][m] at prod + p * point_stride + t * prod_ld + m
  int64_t prod_ld = 0;          // >= M rounded up to 16
  int64_t point_stride = 0;     // tiles * prod_ld
  int64_t M = 0;
  int64_t block_begin = 0, block_end = 0;  // output-channel blocks to do
  int64_t tiles_x = 0, tiles = 0;
  int64_t OH = 0, OW = 0;      // the whole map
  int64_t first_row = 0;        // the tiles' first row in it (a multiple of tile)
  float* staging = nullptr;  // block b at staging + b * (tile tiles_y) * (tile tiles_x) * lanes
  float* y = nullptr;        // [M][OH][OW], or NCHW16c when y_blocked (M a multiple of 16)
  bool y_blocked = false;
  const float* bias = nullptr;
  bool clamp = false;  // apply [lo, hi] (Relu is lo = 0, hi = +inf)
  float lo = 0.0f, hi = 0.0f;
};

// The phase-split stride-2 3x3's slot groups for tiles of `tile`, in
// slots (one row per tile each): EE's (tile + 1)^2 from 0, EO's (tile + 1)
// GEMMs of `tile` rows per tile from eo, OE's likewise from oe, OO's one
// of tile^2 from oo; `slots` in all, (2 tile + 1)^2. The transforms lay
// their points out so and WinogradConv's GEMMs and weights follow it.
struct WinogradSplitGroups {
  int64_t eo, oe, oo, slots;
};
WinogradSplitGroups winograd_split_groups(int64_t tile);

void winograd_input_transform(const WinogradInputArgs& a);
void winograd_output_transform(const WinogradOutputArgs& a);

namespace winograd_detail {
// Each variant, for the tests (callable only where cpu_supports says so).
void input_transform_avx512(const WinogradInputArgs& a);
void output_transform_avx512(const WinogradOutputArgs& a);
void input_transform_avx2(const WinogradInputArgs& a);
void output_transform_avx2(const WinogradOutputArgs& a);
void input_transform_portable(const WinogradInputArgs& a);
void output_transform_portable(const WinogradOutputArgs& a);
}  // namespace winograd_detail

}  // namespace sy::cpu
