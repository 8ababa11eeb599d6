// References for the ops of src/schema/reduce.cc.
#include <set>

#include "reference/reference.h"

namespace sy::reference {
namespace {

// The sum over the reduced axes, divided by their element count when
// `mean`; keepdims (default 1) keeps them as size-1 dims.
std::vector<Tensor> reduce(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs, bool mean) {
  const Array x = to_array(inputs[0]);
  std::vector<int64_t> axes = attr_ints(attrs, "axes", {});
  if (inputs.size() > 1 && inputs[1].defined()) {
    const Array a = to_array(inputs[1]);
    axes.assign(a.v.begin(), a.v.end());
  }
  std::set<int64_t> reduced;
  for (int64_t a : axes) reduced.insert(normalize_axis(a, x.rank()));
  if (reduced.empty())
    for (int64_t i = 0; i < x.rank(); ++i) reduced.insert(i);
  const bool keepdims = attr_int(attrs, "keepdims", 1) != 0;

  std::vector<int64_t> kept_dims = x.dims;  // the result with size-1 reduced dims
  for (int64_t a : reduced) kept_dims[static_cast<size_t>(a)] = 1;
  Array out;
  out.dims = kept_dims;
  out.v.assign(static_cast<size_t>(out.size()), 0.0);
  for (int64_t i = 0; i < x.size(); ++i) {
    const std::vector<int64_t> index = unravel(i, x.dims);
    int64_t o = 0;
    for (size_t d = 0; d < index.size(); ++d) o = o * kept_dims[d] + (reduced.count(static_cast<int64_t>(d)) ? 0 : index[d]);
    out.v[static_cast<size_t>(o)] += x.v[static_cast<size_t>(i)];
  }
  if (mean) {
    const double count = static_cast<double>(x.size()) / static_cast<double>(out.size());
    for (double& v : out.v) v /= count;
  }
  if (!keepdims) {
    out.dims.clear();
    for (int64_t d = 0; d < x.rank(); ++d)
      if (reduced.count(d) == 0) out.dims.push_back(x.dims[static_cast<size_t>(d)]);
  }
  return {to_tensor(out, inputs[0].dtype())};
}

}  // namespace

std::vector<Tensor> reduce_sum(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs) {
  return reduce(inputs, attrs, false);
}

std::vector<Tensor> reduce_mean(const std::vector<Tensor>& inputs, const std::vector<AttrSpec>& attrs) {
  return reduce(inputs, attrs, true);
}

}  // namespace sy::reference
