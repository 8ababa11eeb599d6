// qgemm_pack_b_quad with 128-bit byte shuffles (qgemm.h): four rows of 16
// bytes interleave into one 64-byte group of a panel with two rounds of
// unpacks, and pmaddubsw + pmaddwd against ones give each column's sum of
// its four bytes. Compiled with AVX2's flags for SSSE3; the same bytes as
// the portable loop.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "providers/cpu/gemm/qgemm.h"

namespace sy::cpu::qgemm_detail {
namespace {

// Columns [n, n + 16) of the four rows, already xor'ed, into `dst` (64
// bytes) and their sums added to sums[0, 16).
inline void pack16(__m128i r0, __m128i r1, __m128i r2, __m128i r3, int8_t* dst, int32_t* sums) {
  const __m128i a = _mm_unpacklo_epi8(r0, r1), b = _mm_unpackhi_epi8(r0, r1);
  const __m128i c = _mm_unpacklo_epi8(r2, r3), d = _mm_unpackhi_epi8(r2, r3);
  const __m128i o[4] = {_mm_unpacklo_epi16(a, c), _mm_unpackhi_epi16(a, c), _mm_unpacklo_epi16(b, d),
                        _mm_unpackhi_epi16(b, d)};
  const __m128i ones8 = _mm_set1_epi8(1), ones16 = _mm_set1_epi16(1);
  for (int i = 0; i < 4; ++i) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16 * i), o[i]);
    const __m128i s = _mm_madd_epi16(_mm_maddubs_epi16(ones8, o[i]), ones16);
    auto* at = reinterpret_cast<__m128i*>(sums + 4 * i);
    _mm_storeu_si128(at, _mm_add_epi32(_mm_loadu_si128(at), s));
  }
}

}  // namespace

void pack_b_quad_avx2(const uint8_t* const rows[4], int64_t N, uint8_t flip, int64_t K4, int8_t* group,
                      int32_t* col_sums) {
  const __m128i flip_v = _mm_set1_epi8(static_cast<char>(flip));
  const int64_t panel_bytes = kQgemmPanel * K4;
  auto load = [&](int i, int64_t n) {
    if (rows[i] == nullptr) return _mm_setzero_si128();
    return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[i] + n)), flip_v);
  };
  int64_t n = 0;
  for (; n + kQgemmPanel <= N; n += kQgemmPanel)
    pack16(load(0, n), load(1, n), load(2, n), load(3, n), group + (n / kQgemmPanel) * panel_bytes, col_sums + n);
  if (n == N) return;
  // The last panel: the rows' remaining bytes, then `flip` bytes that the
  // xor turns into the zeros of the padding.
  const int64_t rest = N - n;
  alignas(16) uint8_t tail[4][kQgemmPanel];
  __m128i r[4];
  for (int i = 0; i < 4; ++i) {
    std::memset(tail[i], flip, sizeof(tail[i]));
    if (rows[i] != nullptr) std::memcpy(tail[i], rows[i] + n, static_cast<size_t>(rest));
    r[i] = rows[i] == nullptr ? _mm_setzero_si128()
                              : _mm_xor_si128(_mm_load_si128(reinterpret_cast<const __m128i*>(tail[i])), flip_v);
  }
  alignas(16) int32_t sums[kQgemmPanel] = {};
  pack16(r[0], r[1], r[2], r[3], group + (n / kQgemmPanel) * panel_bytes, sums);
  for (int64_t j = 0; j < rest; ++j) col_sums[n + j] += sums[j];
}

}  // namespace sy::cpu::qgemm_detail
