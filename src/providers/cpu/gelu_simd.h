// Gelu over a float32 span, the hot elementwise op of BERT and GPT-2 once
// the optimizer has fused their Gelu patterns. The loop is written once
// (gelu_simd_body.h) and compiled for AVX-512, AVX2 and the baseline; the
// widest this CPU runs is picked once. The baseline build of the same loop
// is about 3x slower (SSE2 vectors and no FMA).
#pragma once

#include <cstdint>

namespace sy::cpu {

// y[i] = Gelu(x[i]); the tanh form when `tanh_form`, else the erf form.
void gelu_f32(const float* x, float* y, int64_t n, bool tanh_form);

namespace gelu_detail {
void gelu_f32_avx512(const float* x, float* y, int64_t n, bool tanh_form);
void gelu_f32_avx2(const float* x, float* y, int64_t n, bool tanh_form);
void gelu_f32_portable(const float* x, float* y, int64_t n, bool tanh_form);
}  // namespace gelu_detail

}  // namespace sy::cpu
