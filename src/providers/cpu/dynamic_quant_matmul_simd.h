// The float epilogue of DynamicQuantizeMatMul (dynamic_quant_matmul.cc):
// what turns a tile of the 8-bit GEMM's raw sums (gemm/qgemm.h) into
// float outputs while the tile is in L1, so that no int32 matrix is
// written. Written once (dynamic_quant_matmul_simd_body.h) with GCC
// vectors as wide as each ISA's registers and compiled for AVX-512, AVX2
// and the baseline; the widest this CPU runs is picked once.
#pragma once

#include <cstdint>

#include "providers/cpu/gemm/qgemm.h"

namespace sy::cpu {

// For tile coordinates (m, n) as qgemm_u8s8 hands them out; every pointer
// is offset so that those index it directly. The per-column arrays are
// padded to a whole number of tiles (kQgemmTileCols), so that a tile's last
// vector may read past N; nothing is written past N.
struct DqmmEpilogue {
  const int32_t* a_term = nullptr;    // per row: rowsum(a_q) - K * a_zero_point (read with b_zp only)
  const int32_t* b_zp = nullptr;      // per column, shifted into the GEMM's int8
  const int32_t* col_term = nullptr;  // per column: a_zero_point * colsum(B as packed)
  const float* mult = nullptr;        // per column: a_scale * B_scale[n]
  const float* bias = nullptr;        // per column
  float* y = nullptr;                 // element (m, n) at y[m * ldy + n]
  int64_t ldy = 0;
};

struct DqmmSimd {
  // The epilogue, y = float(raw - b_zp[n] * a_term[m] - col_term[n]) *
  // mult[n] [+ bias[n]] in wrapping int32 then float (qgemm.h's identity
  // for the zero points), indexed [has b_zp][has bias]: B's zero point is
  // 0 for symmetric int8 weights, and the row sums are then not needed.
  QgemmTileFn tile[2][2];
  // The sum of p[0, n).
  int32_t (*sum_bytes)(const uint8_t* p, int64_t n);
};

// The variant for this CPU (best_cpu_isa()).
const DqmmSimd& dqmm_simd();

namespace dqmm_detail {
const DqmmSimd& dqmm_simd_avx512();
const DqmmSimd& dqmm_simd_avx2();
const DqmmSimd& dqmm_simd_portable();
}  // namespace dqmm_detail

}  // namespace sy::cpu
