// numpy-style MatMul shape analysis shared by MatMul and MatMulInteger: 1-D
// operands are promoted, batch dims broadcast.
#pragma once

#include <cstdint>

#include "providers/kernel.h"

namespace sy::cpu {

struct MatMulDims {
  int64_t M = 1, N = 1, K = 1;
  bool a_vector = false;  // A was 1-D (its M dim is dropped from the output)
  bool b_vector = false;
  Shape batch;            // broadcast batch dims
  Shape a_strides;        // per batch dim, in elements; 0 where broadcast
  Shape b_strides;
  int64_t batch_count = 1;
  bool b_has_batch = false;  // some batch of B differs from another
  Shape out_shape;
};

// Fills `d` for A x B; errors (naming the node) when the shapes do not fit.
Status matmul_dims(const KernelContext& ctx, const Shape& a, const Shape& b, MatMulDims& d);

// Offsets of batch `index` into A and B.
inline void batch_offsets(const MatMulDims& d, int64_t index, int64_t& a_off, int64_t& b_off) {
  a_off = 0;
  b_off = 0;
  for (size_t k = d.batch.rank(); k-- > 0;) {
    const int64_t i = index % d.batch[k];
    index /= d.batch[k];
    a_off += i * d.a_strides[k];
    b_off += i * d.b_strides[k];
  }
}

}  // namespace sy::cpu
