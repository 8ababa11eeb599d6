// GELU (erf form) over rows of floats with AVX-512: a piecewise polynomial
// read from registers, no division and no exponential, for the vectors
// whose 16 inputs all lie within |x| < 31.5 / 8, and elementwise_common.h's
// gelu_erf_v16 (erfc through exp, the AVX2 and baseline builds' only path)
// for the lanes of any other vector. Included only by the AVX-512 build of
// the activation loops (activation_simd_avx512.cc).
//
// GELU(x) = max(x, 0) - |x| h(|x|), with h(a) = erfc(a / sqrt 2) / 2.
// On [0, 31.5 / 8), h is 32 pieces of 1/8 centred on k / 8, piece k a
// degree-5 polynomial in w = 8a - k in [-1/2, 1/2]; each coefficient's 32
// values sit in two registers and one two-table permute (vpermt2ps)
// fetches every lane's own. k is 8a rounded by adding 1.5 * 2^23 in the
// same FMA, its float's last bits the permute's index, so no conversions.
// The pieces were fitted for relative error (tools/fit_gelu_table.py prints
// this table), so negative inputs keep their relative accuracy as through
// erfc: h to 1.2e-7, GELU to about 2e-7 (the erfc path: 4e-7). 393K floats
// (a BERT layer's FFN) on Zen 4: 278 -> 98 us with inputs of standard
// deviation 1, where 0.1 % of vectors take the erfc path too.
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
inline constexpr float kGeluPiecesEnd = 31.5f / kGeluPiecesPerUnit;  // |x| past the last piece
inline constexpr float kGeluRound = 12582912.0f;                     // 1.5 * 2^23

// kGeluPieces[d][k]: the coefficient of w^(5 - d) in piece k.
inline constexpr float kGeluPieces[kGeluPieceDegree + 1][32] =
{
    {-3.03547807e-07f, -2.92266208e-07f, -2.58178261e-07f, -2.05458903e-07f, -1.39611643e-07f, -6.72720901e-08f,
     4.6461115e-09f, 6.97905449e-08f, 1.23072738e-07f, 1.61141514e-07f, 1.82580592e-07f, 1.87833251e-07f,
     1.78891639e-07f, 1.58846476e-07f, 1.31350717e-07f, 1.00116267e-07f, 6.84903583e-08f, 3.91608417e-08f,
     1.40036827e-08f, -5.93671956e-09f, -2.03618473e-08f, -2.95645339e-08f, -3.424325e-08f, -3.53180454e-08f,
     -3.37705259e-08f, -3.05256016e-08f, -2.63719517e-08f, -2.19253113e-08f, -1.76224368e-08f, -1.37375427e-08f,
     -1.04114157e-08f, -7.68519914e-09f},
    {-6.24728713e-10f, -1.50067888e-06f, -2.88582532e-06f, -4.05229684e-06f, -4.92002664e-06f, -5.43959823e-06f,
     -5.59580212e-06f, -5.40690507e-06f, -4.92002482e-06f, -4.20353354e-06f, -3.33777439e-06f, -2.40547479e-06f,
     -1.48314928e-06f, -6.34422236e-07f, 9.41241396e-08f, 6.74503156e-07f, 1.09652206e-06f, 1.36517485e-06f,
     1.49691436e-06f, 1.51549852e-06f, 1.44801186e-06f, 1.3215008e-06f, 1.16047181e-06f, 9.85324618e-07f,
     8.11653194e-07f, 6.50244715e-07f, 5.07578989e-07f, 3.86611191e-07f, 2.87662544e-07f, 2.09280813e-07f,
     1.48984284e-07f, 1.03845913e-07f},
    {0.000129864216f, 0.000126840023f, 0.000118001677f, 0.00010402433f, 8.59533757e-05f, 6.5095337e-05f,
     4.28865351e-05f, 2.07561006e-05f, -3.00471627e-11f, -1.83202355e-05f, -3.34440374e-05f, -4.49406616e-05f,
     -5.27008015e-05f, -5.68975192e-05f, -5.79253865e-05f, -5.63282192e-05f, -5.27254961e-05f, -4.77458307e-05f,
     -4.19733769e-05f, -3.59102851e-05f, -2.99555741e-05f, -2.43988798e-05f, -1.94259446e-05f, -1.51322783e-05f,
     -1.15412813e-05f, -8.62370416e-06f, -6.31601961e-06f, -4.53616622e-06f, -3.19587139e-06f, -2.20943616e-06f,
     -1.49928644e-06f, -9.98855967e-07f},
    {-2.39705096e-11f, 0.000386560103f, 0.000755210931f, 0.00108941889f, 0.00137525483f, 0.00160234806f,
     0.00176447676f, 0.0018597506f, 0.001890396f, 0.00186219695f, 0.00178368238f, 0.00166517089f,
     0.00151778443f, 0.00135253672f, 0.00117957289f, 0.00100761163f, 0.000843609043f, 0.000692633679f,
     0.000557923689f, 0.000441080279f, 0.000342349696f, 0.000260945177f, 0.000195369517f, 0.000143707774f,
     0.000103871433f, 7.37855735e-05f, 5.15187712e-05f, 3.53615069e-05f, 2.38623943e-05f, 1.58327766e-05f,
     1.03299344e-05f, 6.62779939e-06f},
    {-0.0498677865f, -0.0494797118f, -0.0483335145f, -0.046481885f, -0.0440081656f, -0.0410201214f,
     -0.0376421772f, -0.034006875f, -0.0302463397f, -0.0264845807f, -0.0228311364f, -0.0193765331f,
     -0.0161897f, -0.0133172832f, -0.0107846651f, -0.0085982848f, -0.00674887095f, -0.0052151233f,
     -0.00396745652f, -0.00297148759f, -0.00219103764f, -0.0015905227f, -0.00113669527f, -0.000799765054f,
     -0.000553981052f, -0.000377782242f, -0.000253631006f, -0.000167639853f, -0.000109085333f, -6.98826916e-05f,
     -4.40744589e-05f, -2.73664537e-05f},
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
  const __m512 round = _mm512_set1_ps(kGeluRound);
  const __m512 end = _mm512_set1_ps(kGeluPiecesEnd);
  const __m512 zero = _mm512_setzero_ps();
  auto gelu16 = [&](__m512 v) {
    const __m512 a = _mm512_abs_ps(v);
    const __m512 biased = _mm512_fmadd_ps(a, per_unit, round);
    const __m512i piece = _mm512_castps_si512(biased);  // the permutes read its low 5 bits
    const __m512 w = _mm512_fmsub_ps(a, per_unit, _mm512_sub_ps(biased, round));
    __m512 h = _mm512_permutex2var_ps(lo[0], piece, hi[0]);
    for (int d = 1; d <= kGeluPieceDegree; ++d)
      h = _mm512_fmadd_ps(h, w, _mm512_permutex2var_ps(lo[d], piece, hi[d]));
    __m512 out = _mm512_fnmadd_ps(a, h, _mm512_max_ps(v, zero));
    // |x| past the pieces, infinities and NaN (the comparison is false for NaN).
    const __mmask16 inside = _mm512_cmp_ps_mask(a, end, _CMP_LT_OQ);
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
