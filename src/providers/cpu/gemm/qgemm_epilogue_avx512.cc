// The 8-bit GEMM's row epilogue for AVX-512 (see qgemm_epilogue.h), in
// intrinsics rather than the generic body: vcvtps2dq rounds half to even in
// the default rounding mode by itself, and vpmovsdb / vpmovusdb narrow with
// saturation, about a third of the generic body's steps. The same bytes as
// the other variants: a product beyond +-2^30 saturates either way, and a
// NaN goes to the low end.
// GCC 12 reports _mm512_undefined_* inside its own intrinsics as uninitialised.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "providers/cpu/gemm/qgemm_epilogue.h"

namespace sy::cpu::qgemm_epilogue_detail {
namespace {

inline __m512i corrected(const QgemmRowEpilogue& p, const int32_t* raw, int64_t j, __mmask16 mask) {
  const __m512i r = _mm512_maskz_loadu_epi32(mask, raw + j);
  if (p.col_term != nullptr)
    return _mm512_add_epi32(_mm512_sub_epi32(r, _mm512_maskz_loadu_epi32(mask, p.col_term + j)),
                            _mm512_set1_epi32(p.row_term));
  const __m512i bz = _mm512_maskz_loadu_epi32(mask, p.b_zp + j);
  const __m512i bs = _mm512_maskz_loadu_epi32(mask, p.b_sum + j);
  const __m512i v = _mm512_sub_epi32(r, _mm512_mullo_epi32(bz, _mm512_set1_epi32(p.a_term)));
  return _mm512_add_epi32(_mm512_sub_epi32(v, _mm512_mullo_epi32(_mm512_set1_epi32(p.a_zp), bs)),
                          _mm512_set1_epi32(p.bias));
}

void epilogue_row(const QgemmRowEpilogue& p, const int32_t* raw, int64_t cols, void* out) {
  const __m512 row_mult = _mm512_set1_ps(p.row_mult);
  const __m512 y_scale = _mm512_set1_ps(p.y_scale);
  // Any product this large saturates; below 2^30 the conversion is exact.
  const __m512 cap = _mm512_set1_ps(1073741824.0f), neg_cap = _mm512_set1_ps(-1073741824.0f);
  const __m512i neg_cap_i = _mm512_set1_epi32(-1073741824);
  const __m512i zp = _mm512_set1_epi32(p.y_zp);
  for (int64_t j = 0; j < cols; j += 16) {
    const __mmask16 mask = cols - j >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << (cols - j)) - 1);
    const __m512i v = corrected(p, raw, j, mask);
    if (p.kind == QgemmOutput::kInt32) {
      _mm512_mask_storeu_epi32(static_cast<int32_t*>(out) + j, mask, v);
      continue;
    }
    __m512 mult = row_mult;
    if (p.col_mult != nullptr) {
      const __m512 col = _mm512_maskz_loadu_ps(mask, p.col_mult + j);
      mult = p.both ? _mm512_div_ps(_mm512_mul_ps(row_mult, col), y_scale) : col;
    }
    // Clamped to +-2^30, where the conversion is exact and adding y_zp
    // cannot overflow. _mm512_max_ps / _mm512_min_ps return their second
    // operand when either is NaN, so NaN passes both, converts to INT32_MIN
    // and the integer max sends it to -2^30: the low end, as elsewhere.
    const __m512 prod = _mm512_mul_ps(_mm512_cvtepi32_ps(v), mult);
    const __m512 f = _mm512_min_ps(cap, _mm512_max_ps(neg_cap, prod));
    const __m512i q = _mm512_add_epi32(_mm512_max_epi32(_mm512_cvtps_epi32(f), neg_cap_i), zp);
    if (p.kind == QgemmOutput::kInt8) {
      _mm_mask_storeu_epi8(static_cast<int8_t*>(out) + j, mask, _mm512_cvtsepi32_epi8(q));
    } else {
      _mm_mask_storeu_epi8(static_cast<uint8_t*>(out) + j, mask,
                           _mm512_cvtusepi32_epi8(_mm512_max_epi32(q, _mm512_setzero_si512())));
    }
  }
}

constexpr QgemmEpilogueSimd kSimd = {&epilogue_row};

}  // namespace

const QgemmEpilogueSimd& simd_avx512() { return kSimd; }

}  // namespace sy::cpu::qgemm_epilogue_detail
