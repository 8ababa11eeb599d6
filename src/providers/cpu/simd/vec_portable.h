// The portable vector policy: one float per "vector", for CPUs without AVX2.
//
// A vector policy is what kernel bodies written once for every ISA are
// instantiated with (e.g. conv/winograd_transforms_body.h). Each policy is a
// struct Vec with:
//   using T; static constexpr int kLanes;
//   T load(const float*); void store(float*, T); T set1(float);
//   T load_n(const float* p, int n): p[0 .. n) with zeros after (n <= kLanes;
//     nothing past p + n is read);
//   void store_n(float* p, T v, int n): the first n lanes (nothing past p + n
//     is written);
//   T add(T, T); T sub(T, T); T mul(T, T); T fmadd(T a, T b, T c) (a*b+c);
//   T max(T a, T b); T min(T a, T b): b when either is NaN or a == b, as
//     x86's maxps / minps do. A clamp is therefore written
//     min(hi, max(lo, x)), x last, so that a NaN x comes through as NaN
//     (what a separate Relu or Clip gives, and numpy); max(x, lo) would
//     turn it into lo at no saving.
//   void transpose(const float* src, int64_t src_stride, float* dst, int64_t dst_stride):
//     dst[j * dst_stride + i] = src[i * src_stride + j] for i, j < kLanes.
// The AVX2 and AVX-512 ones (vec_avx2.h, vec_avx512.h) live in namespaces
// of their own and are included only by the files compiled for that ISA.
#pragma once

#include <cstdint>

namespace sy::cpu::simd_portable {

struct Vec {
  using T = float;
  static constexpr int kLanes = 1;
  static T load(const float* p) { return *p; }
  static void store(float* p, T v) { *p = v; }
  static T set1(float v) { return v; }
  static T load_n(const float* p, int n) { return n > 0 ? *p : 0.0f; }
  static void store_n(float* p, T v, int n) {
    if (n > 0) *p = v;
  }
  static T add(T a, T b) { return a + b; }
  static T sub(T a, T b) { return a - b; }
  static T mul(T a, T b) { return a * b; }
  static T fmadd(T a, T b, T c) { return a * b + c; }
  static T max(T a, T b) { return a > b ? a : b; }
  static T min(T a, T b) { return a < b ? a : b; }
  static void transpose(const float* src, int64_t, float* dst, int64_t) { *dst = *src; }
};

}  // namespace sy::cpu::simd_portable
