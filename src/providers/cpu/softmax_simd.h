// Softmax of one contiguous float32 row, the form attention runs (BERT's and
// GPT-2's score rows, axis -1). The loop is written once
// (softmax_simd_body.h) and compiled for AVX-512, AVX2 and the baseline; the
// widest this CPU runs is picked once. The baseline build of the same loop
// keeps the exponential scalar or 4 wide and was about 6x slower on BERT's
// 128-wide rows.
#pragma once

#include <cstdint>

namespace sy::cpu {

// y = exp(x - max(x)) / sum(exp(x - max(x))) over n floats. y may be x.
void softmax_row_f32(const float* x, float* y, int64_t n);

// The same of s = x + bias, one pass fewer than adding first: attention's
// scores and its additive mask row. y may be x.
void softmax_row_biased_f32(const float* x, const float* bias, float* y, int64_t n);

namespace softmax_detail {
// bias may be null.
void softmax_row_f32_avx512(const float* x, const float* bias, float* y, int64_t n);
void softmax_row_f32_avx2(const float* x, const float* bias, float* y, int64_t n);
void softmax_row_f32_portable(const float* x, const float* bias, float* y, int64_t n);
}  // namespace softmax_detail

}  // namespace sy::cpu
