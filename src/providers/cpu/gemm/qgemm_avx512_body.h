// The AVX-512 tile of the 8-bit GEMM (qgemm.h), included by
// qgemm_avx512.cc and qgemm_avx512vnni.cc after they define, in an
// anonymous namespace,
//   PreparedB prepare_b(__m512i b);             // a 64-byte group of a panel
//   __m512i dot4(__m512i acc, __m512i a, const PreparedB& b);
// (acc lane j += the dot product of a's 4 uint8 with column j's 4 int8),
// and QGEMM_TILE_NAME, the function to define. A tile is up to 6 rows by
// 2 panels: 12 accumulators, each vector of B used for 6 rows, each
// broadcast of A for 2 panels.
namespace {

template <int kRows, bool kTwo>
void tile_rows(const uint8_t* a, int64_t lda, const int8_t* b0, const int8_t* b1, int64_t kq, int32_t* tile) {
  __m512i acc0[kRows], acc1[kRows];
  for (int i = 0; i < kRows; ++i) acc0[i] = acc1[i] = _mm512_setzero_si512();
  for (int64_t q = 0; q < kq; ++q) {
    const PreparedB v0 = prepare_b(_mm512_loadu_si512(b0 + q * 64));
    PreparedB v1 = v0;
    if constexpr (kTwo) v1 = prepare_b(_mm512_loadu_si512(b1 + q * 64));
    for (int i = 0; i < kRows; ++i) {
      int32_t quad;
      std::memcpy(&quad, a + i * lda + q * 4, sizeof(quad));
      const __m512i av = _mm512_set1_epi32(quad);
      acc0[i] = dot4(acc0[i], av, v0);
      if constexpr (kTwo) acc1[i] = dot4(acc1[i], av, v1);
    }
  }
  for (int i = 0; i < kRows; ++i) {
    _mm512_storeu_si512(tile + i * kQgemmTileCols, acc0[i]);
    if constexpr (kTwo) _mm512_storeu_si512(tile + i * kQgemmTileCols + kQgemmPanel, acc1[i]);
  }
}

template <bool kTwo>
void tile_any(const uint8_t* a, int64_t lda, int64_t rows, const int8_t* b0, const int8_t* b1, int64_t kq,
              int32_t* tile) {
  switch (rows) {
    case 1: return tile_rows<1, kTwo>(a, lda, b0, b1, kq, tile);
    case 2: return tile_rows<2, kTwo>(a, lda, b0, b1, kq, tile);
    case 3: return tile_rows<3, kTwo>(a, lda, b0, b1, kq, tile);
    case 4: return tile_rows<4, kTwo>(a, lda, b0, b1, kq, tile);
    case 5: return tile_rows<5, kTwo>(a, lda, b0, b1, kq, tile);
    default: return tile_rows<6, kTwo>(a, lda, b0, b1, kq, tile);
  }
}

}  // namespace

void QGEMM_TILE_NAME(const uint8_t* a, int64_t lda, int64_t rows, const int8_t* b0, const int8_t* b1, int64_t kq,
                     int32_t* tile) {
  static_assert(kQgemmRows == 6 && kQgemmPanel == 16, "tile_any covers 1 to 6 rows of one 16-lane panel pair");
  if (b1 != nullptr) {
    tile_any<true>(a, lda, rows, b0, b1, kq, tile);
  } else {
    tile_any<false>(a, lda, rows, b0, b1, kq, tile);
  }
}
