// The micro-kernel interface between the GEMM driver (sgemm.cc) and the
// per-ISA files (sgemm_avx2.cc, sgemm_avx512.cc), which are compiled with
// other target flags. This header must stay free of inline functions and
// standard-library templates: a copy of one compiled with AVX-512 flags could
// be the one the linker keeps, and would then crash older CPUs.
#pragma once

#include <cstdint>

namespace sy::cpu::gemm_detail {

// Rows per micro-tile, the same for every variant so that a packed A serves
// them all.
inline constexpr int kMr = 6;
inline constexpr int kNrScalar = 8;
inline constexpr int kNrAvx2 = 16;
inline constexpr int kNrAvx512 = 64;

// One register tile: acc = A (mr x kc) * B_panel (kc x nr), then
//   C = alpha * acc + beta * C (C not read when beta == 0)
//       + row_bias[i] + col_bias[j] + residual, clamped to [lo, hi] when
//   clamp is set.
// B panels hold the variant's NR floats per k step, zero-padded, so the
// kernel may read whole vectors past nr. A is either a packed panel (kMr
// floats per k step; rows past mr are never read) or, when a_row_stride is
// set, read where it lies: row i of the tile starts at a + i * a_row_stride
// and its k steps are contiguous in runs of 16, each run a_run_stride
// floats after the one before (16 for a row-major A, the block stride for
// a channel-blocked one; sgemm.h). Reading A in place saves packing it, a
// strided copy that cost as much as 15 % of a Winograd convolution.
struct MicroTile {
  const float* a;
  int64_t a_row_stride;  // 0: a is a packed panel
  int64_t a_run_stride;
  const float* b;
  float* c;
  int64_t ldc;
  // Floats from column j to column j + 16 of a row of C: 16 when C is
  // row-major, the block stride when it is channel-blocked (sgemm.h). Only
  // a tile wider than 16 columns (AVX-512's) crosses that boundary; the
  // narrower ones start at a multiple of 16 and stay inside one block.
  int64_t c_step16;
  int64_t kc;
  int mr;  // valid rows, 1..kMr
  int nr;  // valid columns, 1..NR of the variant
  float alpha;
  float beta;
  const float* row_bias;  // first row's bias, or nullptr
  const float* col_bias;  // first column's bias, or nullptr
  const float* residual;  // laid out like c (ldc, c_step16), added with the bias; or nullptr
  bool clamp;
  float lo;
  float hi;
  // Where the kernel prefetches into L1 while it runs, or nullptr: the next
  // panel of a prepacked B, which the driver spreads over the tiles before
  // that panel's first (sgemm.cc, next_panel_prefetch). prefetch_rate lines
  // (1 or 2) per 4 k steps, from prefetch onwards.
  const float* prefetch;
  int prefetch_rate;
};

using MicroKernel = void (*)(const MicroTile& t);

void micro_kernel_scalar(const MicroTile& t);
void micro_kernel_avx2(const MicroTile& t);
void micro_kernel_avx512(const MicroTile& t);

}  // namespace sy::cpu::gemm_detail
