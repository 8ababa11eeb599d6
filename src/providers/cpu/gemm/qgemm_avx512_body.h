// The AVX-512 tile of the 8-bit GEMM (qgemm.h), included by
// qgemm_avx512.cc and qgemm_avx512vnni.cc after they define, in an
// anonymous namespace,
//   PreparedB prepare_b(__m512i b);             // a 64-byte group of a panel
//   __m512i dot4(__m512i acc, __m512i a, const PreparedB& b);
// (acc lane j += the dot product of a's 4 uint8 with column j's 4 int8),
// kMaxPanels (how many panels' accumulators and prepared B fit the 32
// registers at 6 rows) and QGEMM_TILE_NAME, the function to define.
namespace {

// rows x kPanels accumulators, a 4-byte broadcast of A per row and a
// vector of B per panel each k step. Arrays unrolled by pragma: GCC keeps
// them in registers (6 x 4 uses 24 of the 32), where without full
// unrolling it shuffled accumulators between registers every step. Four
// panels load B once per 24 vpdpbusd, against 12 with two: about 1.3-1.6x
// the throughput of a 6 x 2 tile on K from 64 to 2048.
template <int kRows, int kPanels>
void tile_rows(const uint8_t* a, int64_t lda, const int8_t* b, int64_t panel_bytes, int64_t kq, int32_t* tile) {
  __m512i c[kRows][kPanels];
#pragma GCC unroll 8
  for (int i = 0; i < kRows; ++i)
#pragma GCC unroll 4
    for (int p = 0; p < kPanels; ++p) c[i][p] = _mm512_setzero_si512();
  for (int64_t q = 0; q < kq; ++q) {
    PreparedB bv[kPanels];
#pragma GCC unroll 4
    for (int p = 0; p < kPanels; ++p) bv[p] = prepare_b(_mm512_loadu_si512(b + p * panel_bytes + q * 64));
#pragma GCC unroll 8
    for (int i = 0; i < kRows; ++i) {
      int32_t quad;
      std::memcpy(&quad, a + i * lda + q * 4, sizeof(quad));
      const __m512i av = _mm512_set1_epi32(quad);
#pragma GCC unroll 4
      for (int p = 0; p < kPanels; ++p) c[i][p] = dot4(c[i][p], av, bv[p]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < kRows; ++i)
#pragma GCC unroll 4
    for (int p = 0; p < kPanels; ++p) _mm512_storeu_si512(tile + i * kQgemmTileCols + p * kQgemmPanel, c[i][p]);
}

template <int kPanels>
void tile_any(const uint8_t* a, int64_t lda, int64_t rows, const int8_t* b, int64_t panel_bytes, int64_t kq,
              int32_t* tile) {
  switch (rows) {
    case 1: return tile_rows<1, kPanels>(a, lda, b, panel_bytes, kq, tile);
    case 2: return tile_rows<2, kPanels>(a, lda, b, panel_bytes, kq, tile);
    case 3: return tile_rows<3, kPanels>(a, lda, b, panel_bytes, kq, tile);
    case 4: return tile_rows<4, kPanels>(a, lda, b, panel_bytes, kq, tile);
    case 5: return tile_rows<5, kPanels>(a, lda, b, panel_bytes, kq, tile);
    default: return tile_rows<6, kPanels>(a, lda, b, panel_bytes, kq, tile);
  }
}

}  // namespace

void QGEMM_TILE_NAME(const uint8_t* a, int64_t lda, int64_t rows, const int8_t* b, int64_t panel_bytes,
                     int64_t panels, int64_t kq, int32_t* tile) {
  static_assert(kQgemmRows == 6 && kQgemmPanel == 16 && kMaxPanels >= 2 && kMaxPanels <= kQgemmPanelsPerTile,
                "tile_any covers 1 to 6 rows of 1 to kMaxPanels 16-lane panels");
  for (int64_t p = 0; p < panels; p += kMaxPanels) {
    const int8_t* bp = b + p * panel_bytes;
    int32_t* tp = tile + p * kQgemmPanel;
    switch (std::min<int64_t>(kMaxPanels, panels - p)) {
      case 1: tile_any<1>(a, lda, rows, bp, panel_bytes, kq, tp); break;
      case 2: tile_any<2>(a, lda, rows, bp, panel_bytes, kq, tp); break;
      case 3:
        if constexpr (kMaxPanels >= 3) tile_any<3>(a, lda, rows, bp, panel_bytes, kq, tp);
        break;
      default: tile_any<kMaxPanels>(a, lda, rows, bp, panel_bytes, kq, tp); break;
    }
  }
}
