// References for the ops of src/schema/elementwise.cc.
#include <cmath>
#include <functional>

#include "reference/reference.h"

namespace sy::reference {
namespace {

// a (op) b with numpy broadcasting, in a's dtype.
std::vector<Tensor> binary(const std::vector<Tensor>& inputs, const std::function<double(double, double)>& op) {
  const Array a = to_array(inputs[0]);
  const Array b = to_array(inputs[1]);
  Array out;
  out.dims = broadcast_dims(a.dims, b.dims);
  out.v.resize(static_cast<size_t>(out.size()));
  for (int64_t i = 0; i < out.size(); ++i) {
    const std::vector<int64_t> index = unravel(i, out.dims);
    out.v[static_cast<size_t>(i)] = op(a.v[static_cast<size_t>(broadcast_offset(index, a.dims))],
                                       b.v[static_cast<size_t>(broadcast_offset(index, b.dims))]);
  }
  return {to_tensor(out, inputs[0].dtype())};
}

std::vector<Tensor> unary(const std::vector<Tensor>& inputs, double (*op)(double)) {
  Array a = to_array(inputs[0]);
  for (double& x : a.v) x = op(x);
  return {to_tensor(a, inputs[0].dtype())};
}

}  // namespace

std::vector<Tensor> add(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>&) {
  return binary(inputs, [](double x, double y) { return x + y; });
}

std::vector<Tensor> sub(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>&) {
  return binary(inputs, [](double x, double y) { return x - y; });
}

std::vector<Tensor> mul(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>&) {
  return binary(inputs, [](double x, double y) { return x * y; });
}

std::vector<Tensor> div(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>&) {
  return binary(inputs, [](double x, double y) { return x / y; });
}

std::vector<Tensor> relu(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>&) {
  return unary(inputs, [](double x) { return x > 0.0 ? x : 0.0; });
}

std::vector<Tensor> sigmoid(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>&) {
  return unary(inputs, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
}

std::vector<Tensor> tanh(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>&) {
  return unary(inputs, [](double x) { return std::tanh(x); });
}

std::vector<Tensor> exp(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>&) {
  return unary(inputs, [](double x) { return std::exp(x); });
}

std::vector<Tensor> erf(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>&) {
  return unary(inputs, [](double x) { return std::erf(x); });
}

// Where(condition, X, Y), all three broadcast together.
std::vector<Tensor> where(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>&) {
  const Array c = to_array(inputs[0]);
  const Array x = to_array(inputs[1]);
  const Array y = to_array(inputs[2]);
  Array out;
  out.dims = broadcast_dims(broadcast_dims(c.dims, x.dims), y.dims);
  out.v.resize(static_cast<size_t>(out.size()));
  for (int64_t i = 0; i < out.size(); ++i) {
    const std::vector<int64_t> index = unravel(i, out.dims);
    const bool take_x = c.v[static_cast<size_t>(broadcast_offset(index, c.dims))] != 0.0;
    out.v[static_cast<size_t>(i)] = take_x ? x.v[static_cast<size_t>(broadcast_offset(index, x.dims))]
                                           : y.v[static_cast<size_t>(broadcast_offset(index, y.dims))];
  }
  return {to_tensor(out, inputs[1].dtype())};
}

}  // namespace sy::reference
