// The plain GEMM loop for the types without a blocked kernel (double,
// integers): MatMul and Gemm use it for them, Attention for double. float
// goes to sgemm.h.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/thread_pool.h"

namespace sy::cpu {

// C (M x N, already holding beta * C or 0) += alpha * op(A) * op(B).
template <typename T>
inline void naive_gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
                       int64_t lda, const T* B, int64_t ldb, T* C, int64_t ldc, ThreadPool* pool) {
  auto rows = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      T* c = C + i * ldc;
      if (trans_b) {
        for (int64_t j = 0; j < N; ++j) {
          T sum = T(0);
          for (int64_t k = 0; k < K; ++k) sum += (trans_a ? A[k * lda + i] : A[i * lda + k]) * B[j * ldb + k];
          c[j] += alpha * sum;
        }
      } else {
        for (int64_t k = 0; k < K; ++k) {
          const T a = alpha * (trans_a ? A[k * lda + i] : A[i * lda + k]);
          const T* b = B + k * ldb;
          for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
        }
      }
    }
  };
  const int64_t per_row = std::max<int64_t>(1, N * K);
  if (pool == nullptr) {
    rows(0, M);
  } else {
    pool->parallel_for(M, std::max<int64_t>(1, (1 << 16) / per_row), rows);
  }
}

}  // namespace sy::cpu
