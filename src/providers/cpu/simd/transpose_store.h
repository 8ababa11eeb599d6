// Storing a block of a product transposed, with the residual and the clamp
// that follow it: what the convolution's transposed product (Y^T = X^T W^T,
// for maps of few positions) needs to put Y^T back into NCHW while the
// block is still in cache, instead of one more pass over Y (or two, with a
// residual). 16x16 (AVX-512) or 8x8 (AVX2) register transposes; the CPU's
// widest is picked once.
#pragma once

#include <cstdint>

namespace sy::cpu {

struct TransposeStoreArgs {
  const float* src = nullptr;  // rows x cols, row stride ld_src
  int64_t ld_src = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  float* dst = nullptr;  // cols x rows, row stride ld_dst
  int64_t ld_dst = 0;
  const float* residual = nullptr;  // laid out like dst, or nullptr
  bool clamp = false;               // clamp to [lo, hi] after the residual
  float lo = 0.0f;
  float hi = 0.0f;
};

// dst[j * ld_dst + i] = clamp(src[i * ld_src + j] + residual[j * ld_dst + i]).
void transpose_store_f32(const TransposeStoreArgs& a);

// The plain transpose: dst[j * ld_dst + i] = src[i * ld_src + j] for rows x
// cols of src (a block of 16 channels into or out of NCHW16c, say).
void transpose_f32(const float* src, int64_t ld_src, int64_t rows, int64_t cols, float* dst, int64_t ld_dst);

namespace transpose_store_detail {
void transpose_store_f32_avx512(const TransposeStoreArgs& a);
void transpose_store_f32_avx2(const TransposeStoreArgs& a);
void transpose_store_f32_portable(const TransposeStoreArgs& a);
}  // namespace transpose_store_detail

}  // namespace sy::cpu
