// AVX2+FMA micro-kernel: 6 rows x 16 columns (12 ymm accumulators, 2 B
// vectors, one broadcast). Narrow and short edge tiles run variants with
// fewer vectors or rows.
#include <immintrin.h>

#include "providers/cpu/gemm/sgemm_kernels.h"

namespace sy::cpu::gemm_detail {
namespace {

template <int R, int V>
void tile(const MicroTile& t) {
  __m256 acc[R][V];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) acc[i][v] = _mm256_setzero_ps();

  const float* a = t.a;
  const float* b = t.b;
#pragma GCC unroll 4
  for (int64_t k = 0; k < t.kc; ++k) {
    __m256 bv[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) bv[v] = _mm256_load_ps(b + 8 * v);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m256 av = _mm256_broadcast_ss(a + i);
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[i][v] = _mm256_fmadd_ps(av, bv[v], acc[i][v]);
    }
    a += kMr;
    b += kNrAvx2;
  }

  const __m256 alpha = _mm256_set1_ps(t.alpha);
  const __m256 beta = _mm256_set1_ps(t.beta);
  const __m256 lo = _mm256_set1_ps(t.lo);
  const __m256 hi = _mm256_set1_ps(t.hi);
  const int tail = t.nr - 8 * (V - 1);
  const __m256i all = _mm256_set1_epi32(-1);
  const __m256i last_mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(tail), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    float* c = t.c + i * t.ldc;
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) {
      const __m256i mask = v == V - 1 ? last_mask : all;
      __m256 x = _mm256_mul_ps(acc[i][v], alpha);
      if (t.beta != 0.0f) x = _mm256_fmadd_ps(beta, _mm256_maskload_ps(c + 8 * v, mask), x);
      if (t.row_bias != nullptr) x = _mm256_add_ps(x, _mm256_set1_ps(t.row_bias[i]));
      if (t.col_bias != nullptr) x = _mm256_add_ps(x, _mm256_maskload_ps(t.col_bias + 8 * v, mask));
      if (t.clamp) x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
      _mm256_maskstore_ps(c + 8 * v, mask, x);
    }
  }
}

template <int R>
void tile_rows(const MicroTile& t) {
  if (t.nr > 8) {
    tile<R, 2>(t);
  } else {
    tile<R, 1>(t);
  }
}

}  // namespace

void micro_kernel_avx2(const MicroTile& t) {
  switch (t.mr) {
    case 1: tile_rows<1>(t); break;
    case 2: tile_rows<2>(t); break;
    case 3: tile_rows<3>(t); break;
    case 4: tile_rows<4>(t); break;
    case 5: tile_rows<5>(t); break;
    default: tile_rows<6>(t); break;
  }
}

}  // namespace sy::cpu::gemm_detail
