// The 8-bit GEMM's tile epilogue for AVX-512 (see qgemm_epilogue.h), in
// intrinsics rather than the generic body: vcvtps2dq rounds half to even in
// the default rounding mode by itself, and vpmovsdb / vpmovusdb narrow with
// saturation, about a third of the generic body's steps. The same bytes as
// the other variants: a product beyond +-2^30 saturates either way, and a
// NaN goes to the low end.
// GCC 12 reports _mm512_undefined_* inside its own intrinsics as
// uninitialised (clang has no such warning group).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "providers/cpu/gemm/qgemm.h"
#include "providers/cpu/gemm/qgemm_epilogue.h"

namespace sy::cpu::qgemm_epilogue_detail {
namespace {

template <QgemmOutput kKind>
void tile_of(const QgemmTileEpilogue& p, const int32_t* raw, int64_t rows, int64_t cols) {
  // Clamped to +-2^30, where the conversion is exact and adding y_zp
  // cannot overflow. _mm512_max_ps / _mm512_min_ps return their second
  // operand when either is NaN, so NaN passes both, converts to INT32_MIN
  // and the integer max sends it to -2^30: the low end, as elsewhere.
  const __m512 cap = _mm512_set1_ps(1073741824.0f), neg_cap = _mm512_set1_ps(-1073741824.0f);
  const __m512i neg_cap_i = _mm512_set1_epi32(-1073741824);
  const __m512i zp = _mm512_set1_epi32(p.y_zp);
  const __m512 y_scale = _mm512_set1_ps(p.y_scale);
  for (int64_t j = 0; j < cols; j += 16) {
    const __mmask16 mask = cols - j >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << (cols - j)) - 1);
    const __m512i col_term = p.col_term != nullptr ? _mm512_maskz_loadu_epi32(mask, p.col_term + j)
                                                   : _mm512_setzero_si512();
    const __m512 col_mult = p.col_mult != nullptr ? _mm512_maskz_loadu_ps(mask, p.col_mult + j) : _mm512_set1_ps(1.0f);
    for (int64_t i = 0; i < rows; ++i) {
      __m512i v = _mm512_sub_epi32(_mm512_maskz_loadu_epi32(mask, raw + i * kQgemmTileCols + j), col_term);
      if (p.row_term != nullptr) v = _mm512_add_epi32(v, _mm512_set1_epi32(p.row_term[i]));
      if constexpr (kKind == QgemmOutput::kInt32) {
        _mm512_mask_storeu_epi32(static_cast<int32_t*>(p.out) + i * p.ldo + j, mask, v);
        continue;
      }
      __m512 mult = col_mult;
      if (p.row_mult != nullptr) {
        const __m512 row = _mm512_set1_ps(p.row_mult[i]);
        mult = p.col_mult == nullptr ? row : _mm512_div_ps(_mm512_mul_ps(row, col_mult), y_scale);
      }
      const __m512 prod = _mm512_mul_ps(_mm512_cvtepi32_ps(v), mult);
      const __m512 f = _mm512_min_ps(cap, _mm512_max_ps(neg_cap, prod));
      const __m512i q = _mm512_add_epi32(_mm512_max_epi32(_mm512_cvtps_epi32(f), neg_cap_i), zp);
      if constexpr (kKind == QgemmOutput::kInt8) {
        _mm_mask_storeu_epi8(static_cast<int8_t*>(p.out) + i * p.ldo + j, mask, _mm512_cvtsepi32_epi8(q));
      } else {
        _mm_mask_storeu_epi8(static_cast<uint8_t*>(p.out) + i * p.ldo + j, mask,
                             _mm512_cvtusepi32_epi8(_mm512_max_epi32(q, _mm512_setzero_si512())));
      }
    }
  }
}

void epilogue_tile(const QgemmTileEpilogue& p, const int32_t* raw, int64_t rows, int64_t cols) {
  switch (p.kind) {
    case QgemmOutput::kInt32: return tile_of<QgemmOutput::kInt32>(p, raw, rows, cols);
    case QgemmOutput::kInt8: return tile_of<QgemmOutput::kInt8>(p, raw, rows, cols);
    case QgemmOutput::kUint8: return tile_of<QgemmOutput::kUint8>(p, raw, rows, cols);
  }
}

constexpr QgemmEpilogueSimd kSimd = {&epilogue_tile};

}  // namespace

const QgemmEpilogueSimd& simd_avx512() { return kSimd; }

}  // namespace sy::cpu::qgemm_epilogue_detail
