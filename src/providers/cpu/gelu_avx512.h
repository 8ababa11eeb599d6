// GELU over rows of floats with AVX-512, both forms (erf, and the tanh
// approximation): a piecewise polynomial read from registers, no division
// and no exponential, for the vectors whose 16 inputs all lie within
// |x| < 31.5 / 8, and the exact steps (elementwise_common.h's gelu_erf_v16,
// fast_sigmoid for tanh: the AVX2 and baseline builds' only paths) for the
// lanes of any other vector. Included only by the AVX-512 build of the
// activation loops (activation_simd_avx512.cc).
//
// GELU(x) = max(x, 0) - |x| h(|x|): h(a) = erfc(a / sqrt 2) / 2 for the erf
// form, 1 / (1 + e^(2u)) with u = sqrt(2 / pi) (a + 0.044715 a^3) for tanh.
// On [0, 31.5 / 8), h is 32 pieces of 1/8 centred on k / 8, piece k a
// degree-5 polynomial in w = 8a - k in [-1/2, 1/2]; each coefficient's 32
// values sit in two registers and one two-table permute (vpermt2ps)
// fetches every lane's own. k is 8a rounded by adding 1.5 * 2^23 in the
// same FMA, its float's last bits the permute's index, so no conversions.
// The pieces were fitted for relative error (tools/fit_gelu_table.py prints
// these tables), so negative inputs keep their relative accuracy: h to
// 1.2e-7, GELU to about 2e-7 (the erfc path: 4e-7). A BERT layer's FFN
// (393K floats) on Zen 4, inputs of standard deviation 1 (0.1 % of vectors
// then take the exact steps too): erf 278 -> 95 us.
#pragma once

#ifndef __AVX512F__
#error "gelu_avx512.h is for the AVX-512 build only"
#endif

#include <immintrin.h>

#include <cstdint>

// First, for its silencing of GCC 12's AVX-512 headers' self-initialised
// "undefined" vectors (-W(maybe-)uninitialized).
#include "providers/cpu/elementwise_common.h"

namespace sy::cpu {

inline constexpr int kGeluPieceDegree = 5;
inline constexpr float kGeluPiecesPerUnit = 8.0f;
inline constexpr float kGeluPiecesEnd = 31.5f / kGeluPiecesPerUnit;  // |x| past the last piece
inline constexpr float kGeluRound = 12582912.0f;                     // 1.5 * 2^23

// [d][k]: the coefficient of w^(5 - d) in piece k.
using GeluPieces = float[kGeluPieceDegree + 1][32];
inline constexpr GeluPieces kGeluErfPieces = {
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
inline constexpr GeluPieces kGeluTanhPieces = {
    {-3.10466817e-07f, -2.98653333e-07f, -2.62931593e-07f, -2.07642685e-07f, -1.38612378e-07f, -6.30193142e-08f,
     1.15270922e-08f, 7.80055771e-08f, 1.30911516e-07f, 1.66901657e-07f, 1.85023467e-07f, 1.86511585e-07f,
     1.74244917e-07f, 1.52032726e-07f, 1.23903376e-07f, 9.35364639e-08f, 6.39030944e-08f, 3.71178501e-08f,
     1.44585321e-08f, -3.50863649e-09f, -1.67584169e-08f, -2.56351047e-08f, -3.07059942e-08f, -3.26489307e-08f,
     -3.2171819e-08f, -2.99583007e-08f, -2.6630234e-08f, -2.27231691e-08f, -1.86709688e-08f, -1.47989718e-08f,
     -1.13256124e-08f, -8.37203196e-09f},
    {-6.5468353e-10f, -1.53447252e-06f, -2.94791721e-06f, -4.13210228e-06f, -5.00299575e-06f, -5.5093783e-06f,
     -5.6373824e-06f, -5.41011832e-06f, -4.88235219e-06f, -4.13117959e-06f, -3.2444741e-06f, -2.30928435e-06f,
     -1.40214695e-06f, -5.82602183e-07f, 1.0965249e-07f, 6.54378141e-07f, 1.048071e-06f, 1.29997761e-06f,
     1.42780834e-06f, 1.45383638e-06f, 1.401757e-06f, 1.29441389e-06f, 1.1523282e-06f, 9.92876267e-07f,
     8.2994643e-07f, 6.73933187e-07f, 5.31955379e-07f, 4.08229482e-07f, 3.04542056e-07f, 2.20777451e-07f,
     1.55459091e-07f, 1.06262789e-07f},
    {0.000130506989f, 0.00012741414f, 0.000118380885f, 0.000104114821f, 8.57121995e-05f, 6.45424079e-05f,
     4.21058285e-05f, 1.98832313e-05f, -8.03271917e-07f, -1.889944e-05f, -3.36855592e-05f, -4.47959646e-05f,
     -5.21953189e-05f, -5.61222187e-05f, -5.70141601e-05f, -5.54278486e-05f, -5.19661044e-05f, -4.72186221e-05f,
     -4.17195806e-05f, -3.59218175e-05f, -3.01852051e-05f, -2.47758235e-05f, -1.98725993e-05f, -1.55784492e-05f,
     -1.19337055e-05f, -8.93018023e-06f, -6.52477638e-06f, -4.65189351e-06f, -3.23411814e-06f, -2.19090316e-06f,
     -1.44509124e-06f, -9.2731301e-07f},
    {-2.51135241e-11f, 0.000388419372f, 0.000758528593f, 0.00109345897f, 0.00137907208f, 0.001604961f,
     0.00176506094f, 0.00185781578f, 0.00188590586f, 0.00185559818f, 0.00177583157f, 0.00165717176f,
     0.001510776f, 0.00134747883f, 0.00117708126f, 0.00100787333f, 0.000846388808f, 0.000697360141f,
     0.000563825539f, 0.00044733801f, 0.000348230125f, 0.000265896466f, 0.000199066373f, 0.000146049642f,
     0.000104944644f, 7.38050512e-05f, 5.07647455e-05f, 3.41235536e-05f, 2.23982606e-05f, 1.43444886e-05f,
     8.95578432e-06f, 5.44632803e-06f},
    {-0.0498677865f, -0.0494778156f, -0.048326347f, -0.0464672148f, -0.0439854711f, -0.0409908406f,
     -0.0376095846f, -0.0339755863f, -0.0302215125f, -0.0264709536f, -0.0228321273f, -0.0193935689f,
     -0.0162219238f, -0.0133617083f, -0.0108367074f, -0.0086525511f, -0.0068000257f, -0.00525865518f,
     -0.00400022324f, -0.00299196155f, -0.00219926424f, -0.00158784387f, -0.00112533348f, -0.000782364921f,
     -0.000533192942f, -0.00035594462f, -0.000232576931f, -0.000148624371f, -9.28107183e-05f, -5.65888877e-05f,
     -3.3660901e-05f, -1.95171506e-05f},
    {0.5f, 0.450262398f, 0.401298583f, 0.353845954f, 0.308571994f, 0.266046166f,
     0.22671926f, 0.190911219f, 0.158808008f, 0.130466849f, 0.105828635f, 0.0847355947f,
     0.0669522807f, 0.052187711f, 0.0401169248f, 0.0304005146f, 0.0227011535f, 0.0166966598f,
     0.0120894797f, 0.00861280318f, 0.00603370648f, 0.00415387098f, 0.00280841603f, 0.00186339754f,
     0.00121246406f, 0.000773079984f, 0.000482654519f, 0.000294823258f, 0.000176056477f, 0.000102696169f,
     5.84672198e-05f, 3.24614666e-05f},
};

// GELU of rows of n floats, ld apart; y may be x. tanh_form picks the
// approximation. A row's last n % 16 floats go through the same steps
// under a mask.
inline void gelu_rows_avx512(bool tanh_form, const float* x, float* y, int64_t rows, int64_t n, int64_t ld) {
  const GeluPieces& pieces = tanh_form ? kGeluTanhPieces : kGeluErfPieces;
  __m512 lo[kGeluPieceDegree + 1], hi[kGeluPieceDegree + 1];  // pieces 0-15, 16-31
  for (int d = 0; d <= kGeluPieceDegree; ++d) {
    lo[d] = _mm512_loadu_ps(pieces[d]);
    hi[d] = _mm512_loadu_ps(pieces[d] + 16);
  }
  const __m512 per_unit = _mm512_set1_ps(kGeluPiecesPerUnit);
  const __m512 round = _mm512_set1_ps(kGeluRound);
  const __m512 end = _mm512_set1_ps(kGeluPiecesEnd);
  const __m512 zero = _mm512_setzero_ps();
  // The exact steps for the lanes past the pieces.
  auto exact = [tanh_form](__m512 v) {
    if (!tanh_form) {
      V16f e = (V16f)v;
      gelu_erf_v16(e);
      return (__m512)e;
    }
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, v);
    for (float& l : lanes) l = fast_gelu_tanh(l);
    return _mm512_load_ps(lanes);
  };
  auto gelu16 = [&](__m512 v) {
    const __m512 a = _mm512_abs_ps(v);
    const __m512 biased = _mm512_fmadd_ps(a, per_unit, round);
    const __m512i piece = _mm512_castps_si512(biased);  // the permutes read its low 5 bits
    const __m512 w = _mm512_fmsub_ps(a, per_unit, _mm512_sub_ps(biased, round));
    __m512 h = _mm512_permutex2var_ps(lo[0], piece, hi[0]);
    for (int d = 1; d <= kGeluPieceDegree; ++d)
      h = _mm512_fmadd_ps(h, w, _mm512_permutex2var_ps(lo[d], piece, hi[d]));
    const __m512 out = _mm512_fnmadd_ps(a, h, _mm512_max_ps(v, zero));
    // |x| past the pieces, infinities and NaN (the comparison is false for NaN).
    const __mmask16 inside = _mm512_cmp_ps_mask(a, end, _CMP_LT_OQ);
    if (__builtin_expect(inside != 0xFFFF, 0)) return _mm512_mask_blend_ps(inside, exact(v), out);
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
