// GELU (erf form) over rows of floats with AVX-512: a piecewise polynomial
// read from registers, no division and no exponential, for the vectors
// whose 16 inputs all lie within |x| < 4, and elementwise_common.h's
// gelu_erf_v16 (erfc through exp, the AVX2 and baseline builds' only path)
// for the lanes of any other vector. Included only by the AVX-512 build of
// the activation loops (activation_simd_avx512.cc).
//
// GELU(x) = x - x h(|x|) for x >= 0 and x h(|x|) below, with
// h(a) = erfc(a / sqrt 2) / 2. On [0, 4), h is 32 pieces of 1/8, piece k a
// degree-5 polynomial in w = 8a - k; each coefficient's 32 values sit in
// two registers and one two-table permute (vpermt2ps) fetches every lane's
// own. The pieces were fitted for relative error (tools/fit_gelu_table.py
// prints this table), so negative inputs keep their relative accuracy as
// through erfc: h to 1.6e-7, GELU to about 3e-7 (the erfc path: 4e-7).
// 393K floats (a BERT layer's FFN) on Zen 4: 278 -> 108 us with inputs of
// standard deviation 1, where 0.1 % of vectors take the erfc path too.
#pragma once

#ifndef __AVX512F__
#error "gelu_erf_avx512.h is for the AVX-512 build only"
#endif

// GCC 12's AVX-512 headers build "undefined" vectors by self-initialising
// them, which -W(maybe-)uninitialized flags (as in simd/vec_avx512.h).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstdint>

#include "providers/cpu/elementwise_common.h"

namespace sy::cpu {

inline constexpr int kGeluPieceDegree = 5;
inline constexpr float kGeluPiecesPerUnit = 8.0f;
inline constexpr float kGeluPiecesEnd = 32.0f;  // 8 |x| past the last piece

// kGeluPieces[d][k]: the coefficient of w^(5 - d) in piece k.
inline constexpr float kGeluPieces[kGeluPieceDegree + 1][32] =
{
    {-3.01098538e-07f, -2.77829514e-07f, -2.338396e-07f, -1.73778332e-07f, -1.03817641e-07f, -3.0840944e-08f,
     3.84195147e-08f, 9.81683002e-08f, 1.44143016e-07f, 1.73953097e-07f, 1.87136905e-07f, 1.84962587e-07f,
     1.7003579e-07f, 1.45793791e-07f, 1.15978928e-07f, 8.41663095e-08f, 5.34014539e-08f, 2.59765276e-08f,
     3.34681682e-09f, -1.38321381e-08f, -2.55796149e-08f, -3.24150555e-08f, -3.51695455e-08f, -3.48116842e-08f,
     -3.23071667e-08f, -2.8519624e-08f, -2.41538718e-08f, -1.9735257e-08f, -1.56162052e-08f, -1.20001253e-08f,
     -8.97372221e-09f, -6.54077636e-09f},
    {-4.96398345e-09f, -1.51999404e-06f, -2.91744846e-06f, -4.09292807e-06f, -4.96555231e-06f, -5.48562502e-06f,
     -5.63819367e-06f, -5.44225441e-06f, -4.94598271e-06f, -4.21897221e-06f, -3.3427682e-06f, -2.40113195e-06f,
     -1.4713338e-06f, -6.17424973e-07f, 1.1391802e-07f, 6.94895675e-07f, 1.11570762e-06f, 1.3818551e-06f,
     1.51032577e-06f, 1.52536916e-06f, 1.45446938e-06f, 1.32495529e-06f, 1.16149681e-06f, 9.84550866e-07f,
     8.09686298e-07f, 6.47611103e-07f, 5.04696231e-07f, 3.83781241e-07f, 2.85079977e-07f, 2.07050391e-07f,
     1.47142472e-07f, 1.02382238e-07f},
    {0.000129866967f, 0.000126849729f, 0.00011801708f, 0.000104043844f, 8.59750362e-05f, 6.51170776e-05f,
     4.29064094e-05f, 2.07725261e-05f, 1.18731158e-08f, -1.83133488e-05f, -3.34420911e-05f, -4.49431027e-05f,
     -5.27067241e-05f, -5.69058247e-05f, -5.79349398e-05f, -5.63379836e-05f, -5.27346274e-05f, -4.77537214e-05f,
     -4.19796852e-05f, -3.59148871e-05f, -2.99585499e-05f, -2.44004295e-05f, -1.94263484e-05f, -1.51318382e-05f,
     -1.15402872e-05f, -8.62240449e-06f, -6.31461307e-06f, -4.53479424e-06f, -3.1946247e-06f, -2.20836296e-06f,
     -1.4984023e-06f, -9.98154746e-07f},
    {-7.49898754e-10f, 0.00038655792f, 0.000755207497f, 0.00108941458f, 0.00137525005f, 0.0016023434f,
     0.00176447246f, 0.00185974711f, 0.00189039344f, 0.00186219544f, 0.00178368203f, 0.00166517147f,
     0.00151778571f, 0.00135253859f, 0.00117957499f, 0.00100761384f, 0.000843611022f, 0.000692635425f,
     0.000557925086f, 0.000441081269f, 0.000342350308f, 0.000260945497f, 0.00019536959f, 0.000143707672f,
     0.000103871207f, 7.37852824e-05f, 5.15184583e-05f, 3.53612013e-05f, 2.38621178e-05f, 1.58325402e-05f,
     1.03297398e-05f, 6.62764478e-06f},
    {-0.0498677865f, -0.0494797118f, -0.0483335145f, -0.046481885f, -0.0440081656f, -0.0410201214f,
     -0.0376421772f, -0.034006875f, -0.0302463397f, -0.0264845807f, -0.0228311364f, -0.0193765331f,
     -0.0161897f, -0.0133172832f, -0.0107846651f, -0.0085982848f, -0.00674887095f, -0.0052151233f,
     -0.00396745652f, -0.00297148759f, -0.00219103764f, -0.0015905227f, -0.00113669527f, -0.000799765054f,
     -0.000553981052f, -0.000377782213f, -0.000253630977f, -0.000167639824f, -0.000109085311f, -6.98826698e-05f,
     -4.40744407e-05f, -2.73664391e-05f},
    {0.5f, 0.450261772f, 0.401293665f, 0.353830248f, 0.308537543f, 0.265985519f,
     0.22662735f, 0.190786958f, 0.158655256f, 0.130294517f, 0.105649777f, 0.0845657215f,
     0.066807203f, 0.0520812795f, 0.0400591567f, 0.0303963609f, 0.0227501318f, 0.0167933069f,
     0.0122244731f, 0.00877447519f, 0.00620966544f, 0.00433244836f, 0.00297976332f, 0.00202013738f,
     0.00134989806f, 0.000889025279f, 0.000577025057f, 0.000369078451f, 0.000232629085f, 0.000144480728f,
     8.84172841e-05f, 5.33123493e-05f},
};

// GELU of rows of n floats, ld apart; y may be x. A row's last n % 16
// floats go through the same steps under a mask.
inline void gelu_erf_rows_avx512(const float* x, float* y, int64_t rows, int64_t n, int64_t ld) {
  __m512 lo[kGeluPieceDegree + 1], hi[kGeluPieceDegree + 1];  // pieces 0-15, 16-31
  for (int d = 0; d <= kGeluPieceDegree; ++d) {
    lo[d] = _mm512_loadu_ps(kGeluPieces[d]);
    hi[d] = _mm512_loadu_ps(kGeluPieces[d] + 16);
  }
  const __m512 per_unit = _mm512_set1_ps(kGeluPiecesPerUnit);
  const __m512 end = _mm512_set1_ps(kGeluPiecesEnd);
  const __m512 zero = _mm512_setzero_ps();
  auto gelu16 = [&](__m512 v) {
    const __m512 s = _mm512_mul_ps(_mm512_abs_ps(v), per_unit);
    const __m512i piece = _mm512_cvttps_epi32(s);  // garbage past the end: those lanes are replaced
    const __m512 w = _mm512_sub_ps(s, _mm512_cvtepi32_ps(piece));
    __m512 h = _mm512_permutex2var_ps(lo[0], piece, hi[0]);
    for (int d = 1; d <= kGeluPieceDegree; ++d)
      h = _mm512_fmadd_ps(h, w, _mm512_permutex2var_ps(lo[d], piece, hi[d]));
    const __m512 r = _mm512_mul_ps(v, h);
    __m512 out = _mm512_mask_sub_ps(r, _mm512_cmp_ps_mask(v, zero, _CMP_GE_OQ), v, r);
    // |x| >= 4, infinities and NaN (the comparison is false for NaN).
    const __mmask16 inside = _mm512_cmp_ps_mask(s, end, _CMP_LT_OQ);
    if (__builtin_expect(inside != 0xFFFF, 0)) {
      V16f exact = (V16f)v;
      gelu_erf_v16(exact);
      out = _mm512_mask_blend_ps(inside, (__m512)exact, out);
    }
    return out;
  };
  const int64_t full = n / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (n - full)) - 1);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ld;
    float* yr = y + r * ld;
    for (int64_t i = 0; i < full; i += 16) _mm512_storeu_ps(yr + i, gelu16(_mm512_loadu_ps(xr + i)));
    if (tail != 0) _mm512_mask_storeu_ps(yr + full, tail, gelu16(_mm512_maskz_loadu_ps(tail, xr + full)));
  }
}

}  // namespace sy::cpu
