// The loop of com.switchyard QLinearAdd (qlinear_add.cc) over a contiguous
// run of 8-bit elements. AVX2 and the baseline share one body in GCC
// vectors (qlinear_add_simd_body.h); AVX-512 has its own in intrinsics
// (qlinear_add_simd_avx512.cc); the widest this CPU runs is picked once.
//
// It rounds where the unfused DequantizeLinear -> Add -> QuantizeLinear
// rounds (each product, the sum, the quotient), so the two agree bit for
// bit: the files are compiled with -ffp-contract=off (CMakeLists.txt), since
// a fused multiply-add would skip the product's rounding.
#pragma once

#include <cstdint>

namespace sy::cpu {

struct QLinearAddParams {
  float a_scale = 1, b_scale = 1, c_scale = 1;
  int32_t a_zero_point = 0, b_zero_point = 0, c_zero_point = 0;
  // C's bounds: the type's range, with lo raised to c_zero_point for Relu.
  int32_t lo = 0, hi = 255;
};

struct QLinearAddSimd {
  // c[i] = clamp(round_half_even(((a[i] - a_zp) * a_scale + (b[j] - b_zp) *
  // b_scale) / c_scale) + c_zp, lo, hi), j = i where b moves, 0 where it
  // stays (a broadcast scalar); NaN (from a NaN scale) gives lo.
  void (*add_u8)(const uint8_t* a, const uint8_t* b, bool b_moves, int64_t n, const QLinearAddParams& p, uint8_t* c);
  void (*add_s8)(const int8_t* a, const int8_t* b, bool b_moves, int64_t n, const QLinearAddParams& p, int8_t* c);
};

// The variant for this CPU (best_cpu_isa()).
const QLinearAddSimd& qlinear_add_simd();

namespace qlinear_add_detail {
const QLinearAddSimd& qlinear_add_simd_avx512();
const QLinearAddSimd& qlinear_add_simd_avx2();
const QLinearAddSimd& qlinear_add_simd_portable();
}  // namespace qlinear_add_detail

}  // namespace sy::cpu
