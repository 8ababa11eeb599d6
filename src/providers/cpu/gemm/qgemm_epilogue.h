// The per-row epilogue of the 8-bit GEMM (qgemm.h) for QLinearConv,
// QLinearMatMul, ConvInteger and MatMulInteger: zero points applied from
// row and column sums, then either the int32 result or requantization to
// int8 / uint8. AVX2 and the baseline share one body in GCC vectors
// (qgemm_epilogue_body.h); AVX-512 has its own in intrinsics
// (qgemm_epilogue_avx512.cc); the widest this CPU runs is picked once.
// Every variant gives the same values (the same float product, rounded
// half to even, saturated).
#pragma once

#include <cstdint>

namespace sy::cpu {

enum class QgemmOutput { kInt32, kInt8, kUint8 };

// One row m of a tile, columns [n, n + cols):
//   v[j] = raw[j] - b_zp[j] * a_term - a_zp * b_sum[j] + bias   (wrapping int32)
// or, where the caller has folded the products (col_term non-null: one
// a_zp for every row and one b_zp for every column),
//   v[j] = raw[j] - col_term[j] + row_term
// and then, for 8-bit outputs,
//   y[j] = saturate(round_half_even(float(v[j]) * mult[j]) + y_zp)
// with mult[j] = row_mult (col_mult null), col_mult[j] (row_mult unused, see
// `both`) or (row_mult * col_mult[j]) / y_scale (`both`). A NaN product
// gives the type's lowest value. Pointers are already offset to column n.
struct QgemmRowEpilogue {
  const int32_t* b_zp = nullptr;
  const int32_t* b_sum = nullptr;
  int32_t a_term = 0;
  int32_t a_zp = 0;
  int32_t bias = 0;
  const int32_t* col_term = nullptr;
  int32_t row_term = 0;
  QgemmOutput kind = QgemmOutput::kInt32;
  float row_mult = 1.0f;
  const float* col_mult = nullptr;
  bool both = false;
  float y_scale = 1.0f;
  int32_t y_zp = 0;
};

struct QgemmEpilogueSimd {
  // Writes cols int32 or bytes (per p.kind) to out.
  void (*row)(const QgemmRowEpilogue& p, const int32_t* raw, int64_t cols, void* out);
};

// The variant for this CPU (best_cpu_isa()).
const QgemmEpilogueSimd& qgemm_epilogue_simd();

namespace qgemm_epilogue_detail {
const QgemmEpilogueSimd& simd_avx512();
const QgemmEpilogueSimd& simd_avx2();
const QgemmEpilogueSimd& simd_portable();
}  // namespace qgemm_epilogue_detail

}  // namespace sy::cpu
