// The 8-bit GEMM tile for AVX-512BW without VNNI (qgemm.h): vpdpbusd
// emulated exactly with vpmaddwd on the even and odd bytes widened to
// int16 (vpmaddubsw would saturate at 255 * 127 * 2).
// GCC 12's AVX-512 headers build "undefined" vectors by self-initialising
// them, which -W(maybe-)uninitialized flags (as in simd/vec_avx512.h).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "providers/cpu/gemm/qgemm.h"

namespace sy::cpu::qgemm_detail {
namespace {

struct PreparedB {
  __m512i even, odd;  // int8 at even / odd bytes, sign-extended to int16
};

inline PreparedB prepare_b(__m512i b) {
  return {_mm512_srai_epi16(_mm512_slli_epi16(b, 8), 8), _mm512_srai_epi16(b, 8)};
}

inline __m512i dot4(__m512i acc, __m512i a, const PreparedB& b) {
  const __m512i even = _mm512_and_si512(a, _mm512_set1_epi16(0x00FF));
  const __m512i odd = _mm512_srli_epi16(a, 8);
  return _mm512_add_epi32(acc, _mm512_add_epi32(_mm512_madd_epi16(even, b.even), _mm512_madd_epi16(odd, b.odd)));
}

// Two panels: each needs two prepared vectors of B (even and odd bytes).
constexpr int kMaxPanels = 2;

}  // namespace

#define QGEMM_TILE_NAME tile_avx512
#include "providers/cpu/gemm/qgemm_avx512_body.h"
#undef QGEMM_TILE_NAME

}  // namespace sy::cpu::qgemm_detail
