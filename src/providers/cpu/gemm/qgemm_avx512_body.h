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

// One row of A (its 4 bytes at `a`) against the panel(s).
template <bool kTwo>
inline void row_step(__m512i& c0, __m512i& c1, const uint8_t* a, const PreparedB& v0, const PreparedB& v1) {
  int32_t quad;
  std::memcpy(&quad, a, sizeof(quad));
  const __m512i av = _mm512_set1_epi32(quad);
  c0 = dot4(c0, av, v0);
  if constexpr (kTwo) c1 = dot4(c1, av, v1);
}

template <bool kTwo>
inline void store_row(int32_t* tile, __m512i c0, __m512i c1) {
  _mm512_storeu_si512(tile, c0);
  if constexpr (kTwo) _mm512_storeu_si512(tile + kQgemmPanel, c1);
}

// Named accumulators rather than an array: with an array GCC 12 copies
// every accumulator between registers on each step, 24 moves for 12
// vpdpbusd, and the loop runs at about half speed.
template <int kRows, bool kTwo>
void tile_rows(const uint8_t* a, int64_t lda, const int8_t* b0, const int8_t* b1, int64_t kq, int32_t* tile) {
  __m512i c00 = _mm512_setzero_si512(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m512i c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t q = 0; q < kq; ++q) {
    const PreparedB v0 = prepare_b(_mm512_loadu_si512(b0 + q * 64));
    PreparedB v1 = v0;
    if constexpr (kTwo) v1 = prepare_b(_mm512_loadu_si512(b1 + q * 64));
    const uint8_t* aq = a + q * 4;
    row_step<kTwo>(c00, c01, aq, v0, v1);
    if constexpr (kRows > 1) row_step<kTwo>(c10, c11, aq + lda, v0, v1);
    if constexpr (kRows > 2) row_step<kTwo>(c20, c21, aq + 2 * lda, v0, v1);
    if constexpr (kRows > 3) row_step<kTwo>(c30, c31, aq + 3 * lda, v0, v1);
    if constexpr (kRows > 4) row_step<kTwo>(c40, c41, aq + 4 * lda, v0, v1);
    if constexpr (kRows > 5) row_step<kTwo>(c50, c51, aq + 5 * lda, v0, v1);
  }
  store_row<kTwo>(tile, c00, c01);
  if constexpr (kRows > 1) store_row<kTwo>(tile + kQgemmTileCols, c10, c11);
  if constexpr (kRows > 2) store_row<kTwo>(tile + 2 * kQgemmTileCols, c20, c21);
  if constexpr (kRows > 3) store_row<kTwo>(tile + 3 * kQgemmTileCols, c30, c31);
  if constexpr (kRows > 4) store_row<kTwo>(tile + 4 * kQgemmTileCols, c40, c41);
  if constexpr (kRows > 5) store_row<kTwo>(tile + 5 * kQgemmTileCols, c50, c51);
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
