// The AVX-512 vector policy: 16 floats, 16x16 transposes in registers.
// Kernel bodies written once against a vector policy (see vec_portable.h for
// the interface) are instantiated with it in files named *_avx512.cc, which
// CMake compiles with the matching -m flags; include it from nowhere else.
#pragma once

// GCC 12's AVX-512 headers build "undefined" vectors by self-initialising
// them (__m512 __Y = __Y), which -W(maybe-)uninitialized flags in our code.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstdint>

namespace sy::cpu::simd_avx512 {

struct Vec {
  using T = __m512;
  static constexpr int kLanes = 16;
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static T set1(float v) { return _mm512_set1_ps(v); }
  static T load_n(const float* p, int n) { return _mm512_maskz_loadu_ps(first_lanes(n), p); }
  static void store_n(float* p, T v, int n) { _mm512_mask_storeu_ps(p, first_lanes(n), v); }
  static __mmask16 first_lanes(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static T max(T a, T b) { return _mm512_max_ps(a, b); }
  static T min(T a, T b) { return _mm512_min_ps(a, b); }

  // 16x16: unpack pairs of rows, then 64-bit pairs, which leaves 4x4
  // blocks transposed inside each 128-bit lane; two rounds of 128-bit lane
  // shuffles put the blocks in place.
  static void transpose(const float* src, int64_t ss, float* dst, int64_t ds) {
    __m512 r[16], t[16], u[16];
    for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * ss);
    for (int k = 0; k < 8; ++k) {
      t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
      t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
    // u[4k + e], lane l: column 4l + e of rows 4k .. 4k + 3.
    for (int k = 0; k < 4; ++k) {
      u[4 * k + 0] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], 0x44);
      u[4 * k + 1] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], 0xEE);
      u[4 * k + 2] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
      u[4 * k + 3] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xEE);
    }
    for (int e = 0; e < 4; ++e) {
      const __m512 x0 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0x44);
      const __m512 x1 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0xEE);
      const __m512 y0 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0x44);
      const __m512 y1 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0xEE);
      _mm512_storeu_ps(dst + (0 + e) * ds, _mm512_shuffle_f32x4(x0, y0, 0x88));
      _mm512_storeu_ps(dst + (4 + e) * ds, _mm512_shuffle_f32x4(x0, y0, 0xDD));
      _mm512_storeu_ps(dst + (8 + e) * ds, _mm512_shuffle_f32x4(x1, y1, 0x88));
      _mm512_storeu_ps(dst + (12 + e) * ds, _mm512_shuffle_f32x4(x1, y1, 0xDD));
    }
  }
};

}  // namespace sy::cpu::simd_avx512
