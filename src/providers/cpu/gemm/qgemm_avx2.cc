// The 8-bit GEMM tile for AVX2 (qgemm.h): 256-bit vectors, a panel's 16
// columns in two of them, vpdpbusd emulated exactly with vpmaddwd on the
// even and odd bytes widened to int16. One panel at a time, so that B's
// four widened vectors and up to 12 accumulators fit the 16 registers.
#include <immintrin.h>

#include <cstring>

#include "providers/cpu/gemm/qgemm.h"

namespace sy::cpu::qgemm_detail {
namespace {

template <int kRows>
void panel_rows(const uint8_t* a, int64_t lda, const int8_t* b, int64_t kq, int32_t* tile) {
  __m256i acc0[kRows], acc1[kRows];
  for (int i = 0; i < kRows; ++i) acc0[i] = acc1[i] = _mm256_setzero_si256();
  const __m256i low_bytes = _mm256_set1_epi16(0x00FF);
  for (int64_t q = 0; q < kq; ++q) {
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + q * 64));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + q * 64 + 32));
    const __m256i e0 = _mm256_srai_epi16(_mm256_slli_epi16(v0, 8), 8), o0 = _mm256_srai_epi16(v0, 8);
    const __m256i e1 = _mm256_srai_epi16(_mm256_slli_epi16(v1, 8), 8), o1 = _mm256_srai_epi16(v1, 8);
    for (int i = 0; i < kRows; ++i) {
      int32_t quad;
      std::memcpy(&quad, a + i * lda + q * 4, sizeof(quad));
      const __m256i av = _mm256_set1_epi32(quad);
      const __m256i ae = _mm256_and_si256(av, low_bytes), ao = _mm256_srli_epi16(av, 8);
      acc0[i] = _mm256_add_epi32(acc0[i], _mm256_add_epi32(_mm256_madd_epi16(ae, e0), _mm256_madd_epi16(ao, o0)));
      acc1[i] = _mm256_add_epi32(acc1[i], _mm256_add_epi32(_mm256_madd_epi16(ae, e1), _mm256_madd_epi16(ao, o1)));
    }
  }
  for (int i = 0; i < kRows; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(tile + i * kQgemmTileCols), acc0[i]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(tile + i * kQgemmTileCols + 8), acc1[i]);
  }
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

void tile_avx2(const uint8_t* a, int64_t lda, int64_t rows, const int8_t* b0, const int8_t* b1, int64_t kq,
               int32_t* tile) {
  static_assert(kQgemmRows == 6 && kQgemmPanel == 16, "panel_any covers 1 to 6 rows of a 16-column panel");
  panel_any(a, lda, rows, b0, kq, tile);
  if (b1 != nullptr) panel_any(a, lda, rows, b1, kq, tile + kQgemmPanel);
}

}  // namespace sy::cpu::qgemm_detail
