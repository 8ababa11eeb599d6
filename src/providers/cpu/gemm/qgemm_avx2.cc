// The 8-bit GEMM tile for AVX2 (qgemm.h): 256-bit vectors, a panel's 16
// columns in two of them, vpdpbusd emulated exactly with vpmaddwd on the
// even and odd bytes widened to int16. One panel at a time, so that B's
// four widened vectors and up to 12 accumulators fit the 16 registers.
#include <immintrin.h>

#include <cstring>

#include "providers/cpu/gemm/qgemm.h"

namespace sy::cpu::qgemm_detail {
namespace {

struct PanelB {
  __m256i e0, o0, e1, o1;  // the panel's even / odd int8, sign-extended to int16, in two halves
};

// One row of A (its 4 bytes at `a`) against the panel.
inline void row_step(__m256i& c0, __m256i& c1, const uint8_t* a, const PanelB& b) {
  int32_t quad;
  std::memcpy(&quad, a, sizeof(quad));
  const __m256i av = _mm256_set1_epi32(quad);
  const __m256i ae = _mm256_and_si256(av, _mm256_set1_epi16(0x00FF)), ao = _mm256_srli_epi16(av, 8);
  c0 = _mm256_add_epi32(c0, _mm256_add_epi32(_mm256_madd_epi16(ae, b.e0), _mm256_madd_epi16(ao, b.o0)));
  c1 = _mm256_add_epi32(c1, _mm256_add_epi32(_mm256_madd_epi16(ae, b.e1), _mm256_madd_epi16(ao, b.o1)));
}

inline void store_row(int32_t* tile, __m256i c0, __m256i c1) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(tile), c0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(tile + 8), c1);
}

// Named accumulators rather than an array, which GCC 12 shuffles between
// registers on every step (see qgemm_avx512_body.h).
template <int kRows>
void panel_rows(const uint8_t* a, int64_t lda, const int8_t* b, int64_t kq, int32_t* tile) {
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256i c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t q = 0; q < kq; ++q) {
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + q * 64));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + q * 64 + 32));
    const PanelB pb = {_mm256_srai_epi16(_mm256_slli_epi16(v0, 8), 8), _mm256_srai_epi16(v0, 8),
                       _mm256_srai_epi16(_mm256_slli_epi16(v1, 8), 8), _mm256_srai_epi16(v1, 8)};
    const uint8_t* aq = a + q * 4;
    row_step(c00, c01, aq, pb);
    if constexpr (kRows > 1) row_step(c10, c11, aq + lda, pb);
    if constexpr (kRows > 2) row_step(c20, c21, aq + 2 * lda, pb);
    if constexpr (kRows > 3) row_step(c30, c31, aq + 3 * lda, pb);
    if constexpr (kRows > 4) row_step(c40, c41, aq + 4 * lda, pb);
    if constexpr (kRows > 5) row_step(c50, c51, aq + 5 * lda, pb);
  }
  store_row(tile, c00, c01);
  if constexpr (kRows > 1) store_row(tile + kQgemmTileCols, c10, c11);
  if constexpr (kRows > 2) store_row(tile + 2 * kQgemmTileCols, c20, c21);
  if constexpr (kRows > 3) store_row(tile + 3 * kQgemmTileCols, c30, c31);
  if constexpr (kRows > 4) store_row(tile + 4 * kQgemmTileCols, c40, c41);
  if constexpr (kRows > 5) store_row(tile + 5 * kQgemmTileCols, c50, c51);
}

void panel_any(const uint8_t* a, int64_t lda, int64_t rows, const int8_t* b, int64_t kq, int32_t* tile) {
  switch (rows) {
    case 1: return panel_rows<1>(a, lda, b, kq, tile);
    case 2: return panel_rows<2>(a, lda, b, kq, tile);
    case 3: return panel_rows<3>(a, lda, b, kq, tile);
    case 4: return panel_rows<4>(a, lda, b, kq, tile);
    case 5: return panel_rows<5>(a, lda, b, kq, tile);
    default: return panel_rows<6>(a, lda, b, kq, tile);
  }
}

}  // namespace

void tile_avx2(const uint8_t* a, int64_t lda, int64_t rows, const int8_t* b, int64_t panel_bytes, int64_t panels,
               int64_t kq, int32_t* tile) {
  static_assert(kQgemmRows == 6 && kQgemmPanel == 16, "panel_any covers 1 to 6 rows of a 16-column panel");
  for (int64_t p = 0; p < panels; ++p) panel_any(a, lda, rows, b + p * panel_bytes, kq, tile + p * kQgemmPanel);
}

}  // namespace sy::cpu::qgemm_detail
