// AVX-512 micro-kernel: 6 rows x 64 columns (24 zmm accumulators, 4 B
// vectors, one broadcast), so each k step does 24 FMAs for 10 loads. Tiles
// narrower than 64 columns run a variant with fewer vectors, and rows below
// 6 one with fewer rows, so edges waste no work.
// GCC 12's AVX-512 headers build "undefined" vectors by self-initialising
// them (__m512 __Y = __Y), which -Wmaybe-uninitialized flags in our code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "providers/cpu/gemm/sgemm_kernels.h"

namespace sy::cpu::gemm_detail {
namespace {

template <int R, int V>
void tile(const MicroTile& t) {
  __m512 acc[R][V];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[i][v] = _mm512_setzero_ps();

  const float* a = t.a;
  const float* b = t.b;
#pragma GCC unroll 4
  for (int64_t k = 0; k < t.kc; ++k) {
    __m512 bv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) bv[v] = _mm512_load_ps(b + 16 * v);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m512 av = _mm512_set1_ps(a[i]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
    }
    a += kMr;
    b += kNrAvx512;
  }

  const __m512 alpha = _mm512_set1_ps(t.alpha);
  const __m512 beta = _mm512_set1_ps(t.beta);
  const __m512 lo = _mm512_set1_ps(t.lo);
  const __m512 hi = _mm512_set1_ps(t.hi);
  const int tail = t.nr - 16 * (V - 1);
  const __mmask16 last_mask = tail >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << tail) - 1);
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    float* c = t.c + i * t.ldc;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __mmask16 mask = v == V - 1 ? last_mask : static_cast<__mmask16>(0xFFFF);
      __m512 x = _mm512_mul_ps(acc[i][v], alpha);
      if (t.beta != 0.0f) x = _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(mask, c + t.c_step16 * v), x);
      if (t.row_bias != nullptr) x = _mm512_add_ps(x, _mm512_set1_ps(t.row_bias[i]));
      if (t.col_bias != nullptr) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mask, t.col_bias + 16 * v));
      if (t.clamp) x = _mm512_min_ps(_mm512_max_ps(x, lo), hi);
      _mm512_mask_storeu_ps(c + t.c_step16 * v, mask, x);
    }
  }
}

template <int R>
void tile_rows(const MicroTile& t) {
  switch ((t.nr + 15) / 16) {
    case 1: tile<R, 1>(t); break;
    case 2: tile<R, 2>(t); break;
    case 3: tile<R, 3>(t); break;
    default: tile<R, 4>(t); break;
  }
}

}  // namespace

void micro_kernel_avx512(const MicroTile& t) {
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
