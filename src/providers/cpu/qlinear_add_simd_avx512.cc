// The QLinearAddSimd loop for AVX-512 (see qlinear_add_simd.h), in
// intrinsics rather than the generic body: bytes widen straight into
// vectors (vpmovzxbd / vpmovsxbd) instead of going through a float buffer,
// vcvtps2dq rounds half to even in the default rounding mode, and the
// tail is masked. The same operations in the same order as the generic
// body (product, product, sum, quotient; built with -ffp-contract=off), so
// the same bytes.
// GCC 12 reports _mm512_undefined_* inside its own intrinsics as
// uninitialised (clang has no such warning group).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <type_traits>

#include "providers/cpu/qlinear_add_simd.h"

namespace sy::cpu::qlinear_add_detail {
namespace {

template <typename Q>
inline __m512 widen_scaled(const Q* x, __mmask16 mask, __m512i zero_point, __m512 scale) {
  const __m128i bytes = _mm_maskz_loadu_epi8(mask, x);
  const __m512i v = std::is_signed_v<Q> ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
  return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(v, zero_point)), scale);
}

template <typename Q>
void add_run(const Q* a, const Q* b, bool b_moves, int64_t n, const QLinearAddParams& p, Q* c) {
  const __m512i a_zp = _mm512_set1_epi32(p.a_zero_point), b_zp = _mm512_set1_epi32(p.b_zero_point);
  const __m512 a_scale = _mm512_set1_ps(p.a_scale), b_scale = _mm512_set1_ps(p.b_scale);
  const __m512 c_scale = _mm512_set1_ps(p.c_scale);
  // Clamping the quotient to [lo - zp, hi - zp] before rounding (integer
  // bounds, so it commutes with rounding) keeps the conversion in range;
  // _mm512_max_ps returns its second operand for a NaN, so NaN becomes lo.
  const __m512 lo = _mm512_set1_ps(static_cast<float>(p.lo - p.c_zero_point));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(p.hi - p.c_zero_point));
  const __m512i c_zp = _mm512_set1_epi32(p.c_zero_point);
  const __m512 b_fixed =
      _mm512_set1_ps(b_moves ? 0.0f : static_cast<float>(static_cast<int32_t>(b[0]) - p.b_zero_point) * p.b_scale);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = n - i >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 fa = widen_scaled(a + i, mask, a_zp, a_scale);
    const __m512 fb = b_moves ? widen_scaled(b + i, mask, b_zp, b_scale) : b_fixed;
    __m512 v = _mm512_div_ps(_mm512_add_ps(fa, fb), c_scale);
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), c_zp);
    _mm_mask_storeu_epi8(c + i, mask, _mm512_cvtepi32_epi8(q));
  }
}

constexpr QLinearAddSimd kSimd = {&add_run<uint8_t>, &add_run<int8_t>};

}  // namespace

const QLinearAddSimd& qlinear_add_simd_avx512() { return kSimd; }

}  // namespace sy::cpu::qlinear_add_detail
