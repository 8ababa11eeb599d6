// The largest |x| over a block of float32 rows: Attention's bound on its
// scores (attention.cc, trim_negligible), taken over a head's Q and K
// blocks on every call where the mask could let it skip keys. Written once
// (abs_max_simd_body.h) and compiled for AVX-512, AVX2 and the baseline;
// the widest this CPU runs is picked once. Built in attention.cc (baseline
// SSE2) the loop took a fifth of a BERT-shaped attention's time, against
// about 5 % here (most of it Q and K coming into cache for the products).
#pragma once

#include <cstdint>

namespace sy::cpu {

// max |x[r * ld + i]| over r < rows, i < n; +inf when any of them is NaN
// or infinite (or their sum overflows), so that a caller using it as a
// bound gets none.
float abs_max_f32_rows(const float* x, int64_t rows, int64_t n, int64_t ld);

namespace abs_max_detail {
float abs_max_f32_rows_avx512(const float* x, int64_t rows, int64_t n, int64_t ld);
float abs_max_f32_rows_avx2(const float* x, int64_t rows, int64_t n, int64_t ld);
float abs_max_f32_rows_portable(const float* x, int64_t rows, int64_t n, int64_t ld);
}  // namespace abs_max_detail

}  // namespace sy::cpu
