// The 8-bit GEMM tile for AVX-512 VNNI (qgemm.h): one vpdpbusd per 64
// multiply-adds.
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

using PreparedB = __m512i;

inline PreparedB prepare_b(__m512i b) { return b; }

inline __m512i dot4(__m512i acc, __m512i a, const PreparedB& b) { return _mm512_dpbusd_epi32(acc, a, b); }

// Four panels: 24 accumulators, 4 of B, 1 of A.
constexpr int kMaxPanels = 4;

}  // namespace

#define QGEMM_TILE_NAME tile_avx512vnni
#include "providers/cpu/gemm/qgemm_avx512_body.h"
#undef QGEMM_TILE_NAME

}  // namespace sy::cpu::qgemm_detail
