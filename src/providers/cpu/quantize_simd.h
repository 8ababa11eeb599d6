// The hot loops of QuantizeLinear, DequantizeLinear and
// DynamicQuantizeLinear for their common case: float32 to and from int8 and
// uint8 with one scale and zero point over a contiguous run. Written once
// (quantize_simd_body.h) with GCC vectors as wide as each ISA's registers
// and compiled for AVX-512, AVX2 and the baseline; the widest this CPU runs
// is picked once.
#pragma once

#include <cstdint>

namespace sy::cpu {

struct QuantizeSimd {
  // y[i] = saturate(round_half_even(x[i] / scale) + zero_point); NaN gives
  // the type's lowest value.
  void (*quantize_u8)(const float* x, int64_t n, float scale, int32_t zero_point, uint8_t* y);
  void (*quantize_s8)(const float* x, int64_t n, float scale, int32_t zero_point, int8_t* y);
  // y[i] = (x[i] - zero_point) * scale
  void (*dequantize_u8)(const uint8_t* x, int64_t n, float scale, int32_t zero_point, float* y);
  void (*dequantize_s8)(const int8_t* x, int64_t n, float scale, int32_t zero_point, float* y);
  // The smallest and largest of x[0, n), NaNs skipped (+inf and -inf when
  // there is nothing else).
  void (*min_max)(const float* x, int64_t n, float& min, float& max);
};

// The variant for this CPU (best_cpu_isa()).
const QuantizeSimd& quantize_simd();

namespace quantize_detail {
const QuantizeSimd& quantize_simd_avx512();
const QuantizeSimd& quantize_simd_avx2();
const QuantizeSimd& quantize_simd_portable();
}  // namespace quantize_detail

}  // namespace sy::cpu
