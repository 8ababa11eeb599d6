// Helpers the reference kernels share: tensors to double arrays and back,
// numpy broadcasting, attribute lookups.
#include <algorithm>
#include <cmath>
#include <span>

#include "reference/reference.h"

namespace sy::reference {

int64_t Array::size() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Array to_array(const Tensor& t) {
  Array a;
  const std::span<const int64_t> dims = t.shape().dims();
  a.dims.assign(dims.begin(), dims.end());
  a.v.resize(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    double x = 0.0;
    switch (t.dtype()) {
      case DataType::kFloat: x = t.data<float>()[i]; break;
      case DataType::kDouble: x = t.data<double>()[i]; break;
      case DataType::kInt32: x = t.data<int32_t>()[i]; break;
      case DataType::kInt64: x = static_cast<double>(t.data<int64_t>()[i]); break;
      case DataType::kBool: x = t.data<bool>()[i] ? 1.0 : 0.0; break;
      default: x = std::nan(""); break;  // a dtype the references do not take
    }
    a.v[static_cast<size_t>(i)] = x;
  }
  return a;
}

Tensor to_tensor(const Array& a, DataType dtype) {
  Tensor t = Tensor::allocate(dtype, Shape(a.dims)).value();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const double x = a.v[static_cast<size_t>(i)];
    switch (dtype) {
      case DataType::kFloat: t.data<float>()[i] = static_cast<float>(x); break;
      case DataType::kDouble: t.data<double>()[i] = x; break;
      case DataType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(x); break;
      case DataType::kInt64: t.data<int64_t>()[i] = static_cast<int64_t>(x); break;
      case DataType::kBool: t.data<bool>()[i] = x != 0.0; break;
      default: break;
    }
  }
  return t;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

std::vector<int64_t> broadcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t broadcast_offset(const std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  const size_t skip = index.size() - dims.size();
  int64_t offset = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t k = dims[i] == 1 ? 0 : index[skip + i];
    offset = offset * dims[i] + k;
  }
  return offset;
}

std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size(), 0);
  for (size_t i = dims.size(); i-- > 0;) {
    index[i] = flat % dims[i];
    flat /= dims[i];
  }
  return index;
}

int64_t normalize_axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

int64_t attr_int(const std::vector<AttrSpec>& attrs, const std::string& name, int64_t fallback) {
  for (const AttrSpec& a : attrs)
    if (a.name == name) return a.i;
  return fallback;
}

float attr_float(const std::vector<AttrSpec>& attrs, const std::string& name, float fallback) {
  for (const AttrSpec& a : attrs)
    if (a.name == name) return a.f;
  return fallback;
}

std::vector<int64_t> attr_ints(const std::vector<AttrSpec>& attrs, const std::string& name,
                               std::vector<int64_t> fallback) {
  for (const AttrSpec& a : attrs)
    if (a.name == name) return a.ints;
  return fallback;
}

}  // namespace sy::reference
