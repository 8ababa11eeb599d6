// LayerNormalization of one contiguous float32 row with a full-length scale
// (and bias): what BERT and GPT-2 run 25 times per inference over their
// 768-wide hidden rows. Written once (layer_norm_simd_body.h) and compiled
// for AVX-512, AVX2 and the baseline; the widest this CPU runs is picked
// once. The generic template in normalization.cc reduces one float at a
// time (a float sum does not vectorise without fast-math), which made
// LayerNormalization about 1.5x slower than ONNX Runtime's.
#pragma once

#include <cstdint>

namespace sy::cpu {

// mean = sum(x) / n; var = sum((x - mean)^2) / n (two passes, no
// cancellation); inv = 1 / sqrt(var + epsilon);
// y = (x - mean) * inv * scale + bias (bias may be null).
void layer_norm_row_f32(const float* x, float* y, int64_t n, const float* scale, const float* bias, float epsilon,
                        float* mean, float* inv);

namespace layer_norm_detail {
void layer_norm_row_f32_avx512(const float* x, float* y, int64_t n, const float* scale, const float* bias,
                               float epsilon, float* mean, float* inv);
void layer_norm_row_f32_avx2(const float* x, float* y, int64_t n, const float* scale, const float* bias,
                             float epsilon, float* mean, float* inv);
void layer_norm_row_f32_portable(const float* x, float* y, int64_t n, const float* scale, const float* bias,
                                 float epsilon, float* mean, float* inv);
}  // namespace layer_norm_detail

}  // namespace sy::cpu
