#include "providers/cpu/matmul_dims.h"

#include <algorithm>
#include <string>

namespace sy::cpu {

Status matmul_dims(const KernelContext& ctx, const Shape& a, const Shape& b, MatMulDims& d) {
  if (a.rank() == 0 || b.rank() == 0)
    return kernel_error(ctx, "inputs must have rank >= 1; got A " + a.to_string() + " and B " + b.to_string());
  d.a_vector = a.rank() == 1;
  d.b_vector = b.rank() == 1;
  d.M = d.a_vector ? 1 : a[a.rank() - 2];
  d.K = a[a.rank() - 1];
  const int64_t kb = d.b_vector ? b[0] : b[b.rank() - 2];
  d.N = d.b_vector ? 1 : b[b.rank() - 1];
  if (kb != d.K)
    return kernel_error(ctx, "A " + a.to_string() + " and B " + b.to_string() + " have different inner dimensions (" +
                                 std::to_string(d.K) + " vs " + std::to_string(kb) + ")");
  const size_t a_batch = d.a_vector ? 0 : a.rank() - 2;
  const size_t b_batch = d.b_vector ? 0 : b.rank() - 2;
  const size_t r = std::max(a_batch, b_batch);
  d.batch.resize(r);
  d.a_strides.resize(r);
  d.b_strides.resize(r);
  int64_t a_stride = d.M * d.K;
  int64_t b_stride = d.K * d.N;
  for (size_t k = r; k-- > 0;) {
    const int64_t ad = k + a_batch >= r ? a[k + a_batch - r] : 1;
    const int64_t bd = k + b_batch >= r ? b[k + b_batch - r] : 1;
    if (ad != bd && ad != 1 && bd != 1)
      return kernel_error(ctx, "batch dimensions of A " + a.to_string() + " and B " + b.to_string() +
                                   " cannot be broadcast (" + std::to_string(ad) + " vs " + std::to_string(bd) + ")");
    d.batch[k] = (ad == 0 || bd == 0) ? 0 : std::max(ad, bd);
    d.a_strides[k] = ad == 1 ? 0 : a_stride;
    d.b_strides[k] = bd == 1 ? 0 : b_stride;
    a_stride *= ad;
    b_stride *= bd;
    if (bd != 1) d.b_has_batch = true;
  }
  d.batch_count = d.batch.num_elements();
  d.out_shape = d.batch;
  if (!d.a_vector) d.out_shape.push_back(d.M);
  if (!d.b_vector) d.out_shape.push_back(d.N);
  return ok_status();
}

}  // namespace sy::cpu
