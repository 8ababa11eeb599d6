// qgemm_pack_b_quad with 512-bit byte shuffles (qgemm.h): four panels of B
// at a time. Four rows of 64 bytes interleave with two rounds of unpacks,
// which work within each 128-bit lane, so lane L of the results holds
// panel L's columns in four quarters; a 4 x 4 transpose of 128-bit lanes
// (two rounds of vshufi64x2) gathers each panel's 64 bytes. Column sums
// come from vpmaddubsw + vpmaddwd against ones. The same bytes as the
// portable loop.
// GCC 12 reports _mm512_undefined_* inside its own intrinsics as
// uninitialised (clang has no such warning group).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "providers/cpu/gemm/qgemm.h"

namespace sy::cpu::qgemm_detail {

void pack_b_quad_avx512(const uint8_t* const rows[4], int64_t N, uint8_t flip, int64_t K4, int8_t* group,
                        int32_t* col_sums) {
  constexpr int64_t kCols = 4 * kQgemmPanel;  // 64 columns, four panels
  const __m512i flip_v = _mm512_set1_epi8(static_cast<char>(flip));
  const __m512i ones8 = _mm512_set1_epi8(1), ones16 = _mm512_set1_epi16(1);
  const int64_t panel_bytes = kQgemmPanel * K4;
  int64_t n = 0;
  for (; n + kCols <= N; n += kCols) {
    __m512i r[4];
    for (int i = 0; i < 4; ++i)
      r[i] = rows[i] == nullptr ? _mm512_setzero_si512() : _mm512_xor_si512(_mm512_loadu_si512(rows[i] + n), flip_v);
    const __m512i a = _mm512_unpacklo_epi8(r[0], r[1]), b = _mm512_unpackhi_epi8(r[0], r[1]);
    const __m512i c = _mm512_unpacklo_epi8(r[2], r[3]), d = _mm512_unpackhi_epi8(r[2], r[3]);
    // Lane L of q0..q3: panel L's columns 0-3, 4-7, 8-11, 12-15.
    const __m512i q0 = _mm512_unpacklo_epi16(a, c), q1 = _mm512_unpackhi_epi16(a, c);
    const __m512i q2 = _mm512_unpacklo_epi16(b, d), q3 = _mm512_unpackhi_epi16(b, d);
    // Transpose the 4 x 4 lanes: t01 = (q0.L0, q0.L1, q1.L0, q1.L1), ...
    const __m512i t0 = _mm512_shuffle_i64x2(q0, q1, 0x44), t1 = _mm512_shuffle_i64x2(q0, q1, 0xEE);
    const __m512i t2 = _mm512_shuffle_i64x2(q2, q3, 0x44), t3 = _mm512_shuffle_i64x2(q2, q3, 0xEE);
    const __m512i p[4] = {_mm512_shuffle_i64x2(t0, t2, 0x88), _mm512_shuffle_i64x2(t0, t2, 0xDD),
                          _mm512_shuffle_i64x2(t1, t3, 0x88), _mm512_shuffle_i64x2(t1, t3, 0xDD)};
    int8_t* dst = group + (n / kQgemmPanel) * panel_bytes;
    for (int i = 0; i < 4; ++i) {
      _mm512_storeu_si512(dst + i * panel_bytes, p[i]);
      const __m512i s = _mm512_madd_epi16(_mm512_maddubs_epi16(ones8, p[i]), ones16);
      auto* at = col_sums + n + i * kQgemmPanel;
      _mm512_storeu_si512(at, _mm512_add_epi32(_mm512_loadu_si512(at), s));
    }
  }
  if (n < N) {
    const uint8_t* rest[4];
    for (int i = 0; i < 4; ++i) rest[i] = rows[i] == nullptr ? nullptr : rows[i] + n;
    pack_b_quad_avx2(rest, N - n, flip, K4, group + (n / kQgemmPanel) * panel_bytes, col_sums + n);
  }
}

}  // namespace sy::cpu::qgemm_detail
