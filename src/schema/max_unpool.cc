// Schema of MaxUnpool: X [N, C, D1..Dr] and indices of X's shape give
// [N, C, (Di - 1) * stride - pad_begin - pad_end + kernel], or the constant
// output_shape when it is given.
#include <string>
#include <vector>

#include "core/checked_math.h"
#include "schema/schema.h"

namespace sy {
namespace {

Status infer_max_unpool(InferenceContext& ctx) {
  const Node& node = ctx.node();
  const std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  const std::vector<int64_t> strides = node.attr_ints("strides");
  const std::vector<int64_t> pads = node.attr_ints("pads");
  if (kernel.empty()) return ctx.error("attribute kernel_shape is required");
  const size_t r = kernel.size();
  if ((!strides.empty() && strides.size() != r) || (!pads.empty() && pads.size() != 2 * r))
    return ctx.error("strides must have " + std::to_string(r) + " values and pads " + std::to_string(2 * r) +
                     " (kernel_shape has " + std::to_string(r) + ")");
  for (size_t d = 0; d < r; ++d) {
    if (kernel[d] < 1 || (!strides.empty() && strides[d] < 1))
      return ctx.error("kernel_shape and strides must be 1 or more, got " + ints_string(kernel) + " and " +
                       ints_string(strides));
  }
  for (int64_t p : pads)
    if (p < 0) return ctx.error("pads must be 0 or more, got " + ints_string(pads));

  const ValueType* x = ctx.input_type(0);
  ValueType out = ValueType::tensor(x != nullptr ? x->dtype : DataType::kUndefined);
  if (x != nullptr && x->has_shape && x->rank() != r + 2)
    return ctx.error("X " + x->shape_string() + " must have rank " + std::to_string(r + 2) + " for kernel_shape " +
                     ints_string(kernel));
  std::vector<int64_t> given;
  if (constant_as_int64s(ctx.input_constant(2), given)) {
    if (given.size() != r + 2)
      return ctx.error("output_shape " + ints_string(given) + " must have " + std::to_string(r + 2) + " values");
    for (int64_t d : given)
      if (d < 0) return ctx.error("output_shape must not hold negative sizes, got " + ints_string(given));
    for (int64_t d : given) out.dims.push_back(Dim::known(d));
    out.has_shape = true;
  } else if (x != nullptr && x->has_shape && !ctx.has_input(2)) {
    out.has_shape = true;
    out.dims = {x->dims[0], x->dims[1]};
    for (size_t d = 0; d < r; ++d) {
      const Dim& in = x->dims[d + 2];
      int64_t v = 0;
      const int64_t stride = strides.empty() ? 1 : strides[d];
      int64_t pad = 0;
      if (in.is_known() && (pads.empty() || checked_add(pads[d], pads[d + r], pad)) &&
          checked_mul(in.value - 1, stride, v) && checked_add(v, kernel[d], v) && checked_sub(v, pad, v) && v >= 0) {
        out.dims.push_back(Dim::known(v));
      } else {
        out.dims.push_back(Dim::unknown());
      }
    }
  } else if (x != nullptr && x->has_shape) {
    out.has_shape = true;
    out.dims.assign(x->rank(), Dim::unknown());
  }
  ctx.output_type(0) = out;
  return ok_status();
}

constexpr OpSchema kMaxUnpoolSchemas[] = {
    {"", "MaxUnpool", 9, 2, 3, 1, 1, &infer_max_unpool},
    {"", "MaxUnpool", 11, 2, 3, 1, 1, &infer_max_unpool},
    {"", "MaxUnpool", 22, 2, 3, 1, 1, &infer_max_unpool},
};

}  // namespace

std::span<const OpSchema> max_unpool_schemas() { return kMaxUnpoolSchemas; }

}  // namespace sy
