// The tile epilogue of the 8-bit GEMM (qgemm.h) for QLinearConv,
// QLinearMatMul, ConvInteger and MatMulInteger: zero points applied through
// a term per column and one per row, then either the int32 result or
// requantization to int8 / uint8. AVX2 and the baseline share one body in
// GCC vectors (qgemm_epilogue_body.h); AVX-512 has its own in intrinsics
// (qgemm_epilogue_avx512.cc); the widest this CPU runs is picked once.
// Every variant gives the same values (the same float product, rounded
// half to even, saturated).
#pragma once

#include <cstdint>

namespace sy::cpu {

enum class QgemmOutput { kInt32, kInt8, kUint8 };

// Rows i < rows, columns j < cols of a tile of raw sums (row i at
// raw[i * kQgemmTileCols]):
//   v = raw[i][j] - col_term[j] + row_term[i]      (wrapping int32; a null term is 0)
// and then, for 8-bit outputs,
//   y = saturate(round_half_even(float(v) * mult) + y_zp)
// with mult = row_mult[i] (col_mult null), col_mult[j] (row_mult null) or
// (row_mult[i] * col_mult[j]) / y_scale (both). A NaN product gives the
// type's lowest value. Row i is written at out + i * ldo elements. Every
// pointer starts at the tile's first row or column.
struct QgemmTileEpilogue {
  const int32_t* col_term = nullptr;
  const int32_t* row_term = nullptr;
  const float* row_mult = nullptr;
  const float* col_mult = nullptr;
  float y_scale = 1.0f;
  int32_t y_zp = 0;
  QgemmOutput kind = QgemmOutput::kInt32;
  void* out = nullptr;
  int64_t ldo = 0;
};

struct QgemmEpilogueSimd {
  void (*tile)(const QgemmTileEpilogue& p, const int32_t* raw, int64_t rows, int64_t cols);
};

// The variant for this CPU (best_cpu_isa()).
const QgemmEpilogueSimd& qgemm_epilogue_simd();

namespace qgemm_epilogue_detail {
const QgemmEpilogueSimd& simd_avx512();
const QgemmEpilogueSimd& simd_avx2();
const QgemmEpilogueSimd& simd_portable();
}  // namespace qgemm_epilogue_detail

}  // namespace sy::cpu
