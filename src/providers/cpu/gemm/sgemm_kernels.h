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

// One register tile: acc = A_panel (mr x kc) * B_panel (kc x nr), then
//   C = alpha * acc + beta * C (C not read when beta == 0)
//       + row_bias[i] + col_bias[j], clamped to [lo, hi] when clamp is set.
// A panels hold kMr floats per k step and B panels `nr_stride` floats, both
// zero-padded, so the kernel may read whole vectors past mr / nr.
struct MicroTile {
  const float* a;
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
  bool clamp;
  float lo;
  float hi;
};

using MicroKernel = void (*)(const MicroTile& t);

void micro_kernel_scalar(const MicroTile& t);
void micro_kernel_avx2(const MicroTile& t);
void micro_kernel_avx512(const MicroTile& t);

}  // namespace sy::cpu::gemm_detail
