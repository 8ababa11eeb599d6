// The transcendental activations over a float32 span: Gelu (the hot
// elementwise op of BERT and GPT-2 once the optimizer has fused their Gelu
// patterns), Sigmoid and Tanh (LSTM and GRU gates, and the ops of the same
// names). The loops are written once (activation_simd_body.h) and compiled
// for AVX-512, AVX2 and the baseline; the widest this CPU runs is picked
// once. The baseline build of the same loops is about 3x slower (SSE2
// vectors and no FMA).
#pragma once

#include <cstdint>

namespace sy::cpu {

enum class SimdActivation : int {
  kGeluErf,   // x * Phi(x)
  kGeluTanh,  // Gelu's tanh approximation
  kSigmoid,
  kTanh,
};

// y[i] = f(x[i]) for i < n; y may be x.
void activation_f32(SimdActivation f, const float* x, float* y, int64_t n);

// The same over `rows` rows of n floats, row r at x + r * ld and y + r * ld:
// one call per GEMM output tile (its constants loaded once, not per row),
// and a row's last n % 16 floats on vectors too, as for a tile's edge.
void activation_f32_rows(SimdActivation f, const float* x, float* y, int64_t rows, int64_t n, int64_t ld);

namespace activation_detail {
void activation_f32_avx512(SimdActivation f, const float* x, float* y, int64_t rows, int64_t n, int64_t ld);
void activation_f32_avx2(SimdActivation f, const float* x, float* y, int64_t rows, int64_t n, int64_t ld);
void activation_f32_portable(SimdActivation f, const float* x, float* y, int64_t rows, int64_t n, int64_t ld);
}  // namespace activation_detail

}  // namespace sy::cpu
