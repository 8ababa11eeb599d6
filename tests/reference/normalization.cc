// References for the ops of src/schema/normalization.cc.
#include <algorithm>
#include <cmath>

#include "reference/reference.h"

namespace sy::reference {
namespace {

// The array seen as [outer, n, inner] around `axis`.
struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
};

AxisView view_around(const std::vector<int64_t>& dims, int64_t axis) {
  AxisView s;
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i) {
    if (i < axis) s.outer *= dims[static_cast<size_t>(i)];
    if (i == axis) s.n = dims[static_cast<size_t>(i)];
    if (i > axis) s.inner *= dims[static_cast<size_t>(i)];
  }
  return s;
}

}  // namespace

std::vector<Tensor> softmax(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs) {
  Array x = to_array(inputs[0]);
  const AxisView s = view_around(x.dims, normalize_axis(attr_int(attrs, "axis", -1), x.rank()));
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t in = 0; in < s.inner; ++in) {
      auto at = [&](int64_t k) -> double& { return x.v[static_cast<size_t>((o * s.n + k) * s.inner + in)]; };
      double max = at(0);
      for (int64_t k = 1; k < s.n; ++k) max = std::max(max, at(k));
      double sum = 0.0;
      for (int64_t k = 0; k < s.n; ++k) sum += std::exp(at(k) - max);
      for (int64_t k = 0; k < s.n; ++k) at(k) = std::exp(at(k) - max) / sum;
    }
  }
  return {to_tensor(x, inputs[0].dtype())};
}

// Normalizes over the axes from `axis` to the end; Scale and the optional
// B have the shape of those axes.
std::vector<Tensor> layer_normalization(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs) {
  Array x = to_array(inputs[0]);
  const Array scale = to_array(inputs[1]);
  const bool has_bias = inputs.size() > 2 && inputs[2].defined();
  const Array bias = has_bias ? to_array(inputs[2]) : Array{};
  const int64_t axis = normalize_axis(attr_int(attrs, "axis", -1), x.rank());
  const double epsilon = attr_float(attrs, "epsilon", 1e-5f);
  int64_t n = 1;
  for (int64_t i = axis; i < x.rank(); ++i) n *= x.dims[static_cast<size_t>(i)];
  const int64_t rows = x.size() / n;
  for (int64_t r = 0; r < rows; ++r) {
    double* row = x.v.data() + r * n;
    double mean = 0.0;
    for (int64_t k = 0; k < n; ++k) mean += row[k];
    mean /= static_cast<double>(n);
    double var = 0.0;
    for (int64_t k = 0; k < n; ++k) var += (row[k] - mean) * (row[k] - mean);
    var /= static_cast<double>(n);
    const double inv_std = 1.0 / std::sqrt(var + epsilon);
    for (int64_t k = 0; k < n; ++k) {
      const double b = has_bias ? bias.v[static_cast<size_t>(k)] : 0.0;
      row[k] = (row[k] - mean) * inv_std * scale.v[static_cast<size_t>(k)] + b;
    }
  }
  return {to_tensor(x, inputs[0].dtype())};
}

}  // namespace sy::reference
