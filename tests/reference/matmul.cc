// References for the ops of src/schema/matmul.cc.
#include "reference/reference.h"

namespace sy::reference {

// numpy matmul for operands of rank >= 2 (batch dims broadcast); a rank-1
// operand is not handled.
std::vector<Tensor> matmul(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>&) {
  const Array a = to_array(inputs[0]);
  const Array b = to_array(inputs[1]);
  const int64_t m = a.dims[a.dims.size() - 2], k = a.dims.back(), n = b.dims.back();
  const std::vector<int64_t> a_batch(a.dims.begin(), a.dims.end() - 2);
  const std::vector<int64_t> b_batch(b.dims.begin(), b.dims.end() - 2);
  Array out;
  out.dims = broadcast_dims(a_batch, b_batch);
  const std::vector<int64_t> batch = out.dims;
  out.dims.push_back(m);
  out.dims.push_back(n);
  out.v.assign(static_cast<size_t>(out.size()), 0.0);
  int64_t batches = 1;
  for (int64_t d : batch) batches *= d;
  for (int64_t p = 0; p < batches; ++p) {
    const std::vector<int64_t> index = unravel(p, batch);
    const double* pa = a.v.data() + broadcast_offset(index, a_batch) * m * k;
    const double* pb = b.v.data() + broadcast_offset(index, b_batch) * k * n;
    double* po = out.v.data() + p * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t q = 0; q < k; ++q) sum += pa[i * k + q] * pb[q * n + j];
        po[i * n + j] = sum;
      }
  }
  return {to_tensor(out, inputs[0].dtype())};
}

// Y = alpha * A' * B' + beta * C, A' and B' transposed when asked; C
// (optional) broadcasts to [M, N].
std::vector<Tensor> gemm(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs) {
  const Array a = to_array(inputs[0]);
  const Array b = to_array(inputs[1]);
  const bool has_c = inputs.size() > 2 && inputs[2].defined();
  const Array c = has_c ? to_array(inputs[2]) : Array{};
  const bool trans_a = attr_int(attrs, "transA", 0) != 0;
  const bool trans_b = attr_int(attrs, "transB", 0) != 0;
  const double alpha = attr_float(attrs, "alpha", 1.0f);
  const double beta = attr_float(attrs, "beta", 1.0f);
  const int64_t m = trans_a ? a.dims[1] : a.dims[0];
  const int64_t k = trans_a ? a.dims[0] : a.dims[1];
  const int64_t n = trans_b ? b.dims[0] : b.dims[1];
  Array out;
  out.dims = {m, n};
  out.v.resize(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t q = 0; q < k; ++q) {
        const double av = trans_a ? a.v[static_cast<size_t>(q * m + i)] : a.v[static_cast<size_t>(i * k + q)];
        const double bv = trans_b ? b.v[static_cast<size_t>(j * k + q)] : b.v[static_cast<size_t>(q * n + j)];
        sum += av * bv;
      }
      double y = alpha * sum;
      if (has_c) y += beta * c.v[static_cast<size_t>(broadcast_offset({i, j}, c.dims))];
      out.v[static_cast<size_t>(i * n + j)] = y;
    }
  return {to_tensor(out, inputs[0].dtype())};
}

}  // namespace sy::reference
