// References for the ops of src/schema/tensor.cc.
#include <algorithm>

#include "reference/reference.h"

namespace sy::reference {

// perm defaults to the reversed axes.
std::vector<Tensor> transpose(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs) {
  const Array x = to_array(inputs[0]);
  std::vector<int64_t> reversed;
  for (int64_t i = x.rank(); i-- > 0;) reversed.push_back(i);
  const std::vector<int64_t> perm = attr_ints(attrs, "perm", reversed);
  Array out;
  for (int64_t p : perm) out.dims.push_back(x.dims[static_cast<size_t>(p)]);
  out.v.resize(x.v.size());
  const std::vector<int64_t> x_strides = strides_of(x.dims);
  for (int64_t i = 0; i < out.size(); ++i) {
    const std::vector<int64_t> index = unravel(i, out.dims);
    int64_t src = 0;
    for (size_t d = 0; d < perm.size(); ++d) src += index[d] * x_strides[static_cast<size_t>(perm[d])];
    out.v[static_cast<size_t>(i)] = x.v[static_cast<size_t>(src)];
  }
  return {to_tensor(out, inputs[0].dtype())};
}

std::vector<Tensor> concat(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs) {
  std::vector<Array> parts;
  for (const Tensor& t : inputs) parts.push_back(to_array(t));
  const int64_t axis = normalize_axis(attr_int(attrs, "axis", 0), parts[0].rank());
  Array out;
  out.dims = parts[0].dims;
  out.dims[static_cast<size_t>(axis)] = 0;
  for (const Array& p : parts) out.dims[static_cast<size_t>(axis)] += p.dims[static_cast<size_t>(axis)];
  out.v.resize(static_cast<size_t>(out.size()));
  for (int64_t i = 0; i < out.size(); ++i) {
    std::vector<int64_t> index = unravel(i, out.dims);
    size_t part = 0;
    while (index[static_cast<size_t>(axis)] >= parts[part].dims[static_cast<size_t>(axis)]) {
      index[static_cast<size_t>(axis)] -= parts[part].dims[static_cast<size_t>(axis)];
      ++part;
    }
    const std::vector<int64_t> strides = strides_of(parts[part].dims);
    int64_t src = 0;
    for (size_t d = 0; d < index.size(); ++d) src += index[d] * strides[d];
    out.v[static_cast<size_t>(i)] = parts[part].v[static_cast<size_t>(src)];
  }
  return {to_tensor(out, inputs[0].dtype())};
}

// out[i.., j.., k..] = data[i.., indices[j..] (negative from the end), k..].
std::vector<Tensor> gather(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs) {
  const Array data = to_array(inputs[0]);
  const Array indices = to_array(inputs[1]);
  const int64_t axis = normalize_axis(attr_int(attrs, "axis", 0), data.rank());
  Array out;
  out.dims.assign(data.dims.begin(), data.dims.begin() + axis);
  out.dims.insert(out.dims.end(), indices.dims.begin(), indices.dims.end());
  out.dims.insert(out.dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  out.v.resize(static_cast<size_t>(out.size()));
  const std::vector<int64_t> data_strides = strides_of(data.dims);
  const size_t index_rank = indices.dims.size();
  for (int64_t i = 0; i < out.size(); ++i) {
    const std::vector<int64_t> index = unravel(i, out.dims);
    // The position in `indices` is the middle part of the output index.
    int64_t k = 0;
    for (size_t d = 0; d < index_rank; ++d) k = k * indices.dims[d] + index[static_cast<size_t>(axis) + d];
    int64_t picked = static_cast<int64_t>(indices.v[static_cast<size_t>(k)]);
    if (picked < 0) picked += data.dims[static_cast<size_t>(axis)];
    int64_t src = picked * data_strides[static_cast<size_t>(axis)];
    for (int64_t d = 0; d < axis; ++d) src += index[static_cast<size_t>(d)] * data_strides[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < data.rank(); ++d)
      src += index[static_cast<size_t>(d) + index_rank - 1] * data_strides[static_cast<size_t>(d)];
    out.v[static_cast<size_t>(i)] = data.v[static_cast<size_t>(src)];
  }
  return {to_tensor(out, inputs[0].dtype())};
}

// Inputs: data, starts, ends, optional axes (default 0..n-1) and steps
// (default 1); starts and ends clamped as the spec says.
std::vector<Tensor> slice(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>&) {
  const Array x = to_array(inputs[0]);
  const Array starts = to_array(inputs[1]);
  const Array ends = to_array(inputs[2]);
  const bool has_axes = inputs.size() > 3 && inputs[3].defined();
  const bool has_steps = inputs.size() > 4 && inputs[4].defined();
  const Array axes = has_axes ? to_array(inputs[3]) : Array{};
  const Array steps = has_steps ? to_array(inputs[4]) : Array{};
  std::vector<int64_t> first(x.dims.size(), 0), step(x.dims.size(), 1);
  Array out;
  out.dims = x.dims;
  for (size_t i = 0; i < starts.v.size(); ++i) {
    const int64_t axis = has_axes ? normalize_axis(static_cast<int64_t>(axes.v[i]), x.rank()) : static_cast<int64_t>(i);
    const int64_t dim = x.dims[static_cast<size_t>(axis)];
    const int64_t s = has_steps ? static_cast<int64_t>(steps.v[i]) : 1;
    int64_t b = static_cast<int64_t>(starts.v[i]);
    int64_t e = static_cast<int64_t>(ends.v[i]);
    if (b < 0) b += dim;
    if (e < 0) e += dim;
    int64_t count = 0;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count = b > e ? (b - e - s - 1) / -s : 0;
    }
    first[static_cast<size_t>(axis)] = b;
    step[static_cast<size_t>(axis)] = s;
    out.dims[static_cast<size_t>(axis)] = count;
  }
  out.v.resize(static_cast<size_t>(out.size()));
  const std::vector<int64_t> x_strides = strides_of(x.dims);
  for (int64_t i = 0; i < out.size(); ++i) {
    const std::vector<int64_t> index = unravel(i, out.dims);
    int64_t src = 0;
    for (size_t d = 0; d < index.size(); ++d) src += (first[d] + index[d] * step[d]) * x_strides[d];
    out.v[static_cast<size_t>(i)] = x.v[static_cast<size_t>(src)];
  }
  return {to_tensor(out, inputs[0].dtype())};
}

}  // namespace sy::reference
