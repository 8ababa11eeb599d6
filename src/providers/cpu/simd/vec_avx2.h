// The AVX2+FMA vector policy: 8 floats, 8x8 transposes in registers.
// Kernel bodies written once against a vector policy (see vec_portable.h for
// the interface) are instantiated with it in files named *_avx2.cc, which
// CMake compiles with the matching -m flags; include it from nowhere else.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace sy::cpu::simd_avx2 {

struct Vec {
  using T = __m256;
  static constexpr int kLanes = 8;
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static T set1(float v) { return _mm256_set1_ps(v); }
  static T load_n(const float* p, int n) { return _mm256_maskload_ps(p, first_lanes(n)); }
  static void store_n(float* p, T v, int n) { _mm256_maskstore_ps(p, first_lanes(n), v); }
  // All ones in lanes [0, n).
  static __m256i first_lanes(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T sub(T a, T b) { return _mm256_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static T max(T a, T b) { return _mm256_max_ps(a, b); }
  static T min(T a, T b) { return _mm256_min_ps(a, b); }

  // 8x8: unpack pairs of rows, then 64-bit pairs (4x4 blocks transposed in
  // each 128-bit half), then swap the halves into place.
  static void transpose(const float* src, int64_t ss, float* dst, int64_t ds) {
    __m256 r[8], t[8], u[8];
    for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ss);
    for (int k = 0; k < 4; ++k) {
      t[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
      t[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
    for (int k = 0; k < 2; ++k) {
      u[4 * k + 0] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], 0x44);
      u[4 * k + 1] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], 0xEE);
      u[4 * k + 2] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
      u[4 * k + 3] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xEE);
    }
    for (int e = 0; e < 4; ++e) {
      _mm256_storeu_ps(dst + e * ds, _mm256_permute2f128_ps(u[e], u[4 + e], 0x20));
      _mm256_storeu_ps(dst + (4 + e) * ds, _mm256_permute2f128_ps(u[e], u[4 + e], 0x31));
    }
  }
};

}  // namespace sy::cpu::simd_avx2
