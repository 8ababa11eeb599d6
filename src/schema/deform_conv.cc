// Schema of DeformConv: X [N, C, H, W], W [oC, C / group, kH, kW] and
// offset [N, offset_group * kH * kW * 2, oH, oW] give Y [N, oC, oH, oW],
// oH and oW following Conv's rule (explicit pads only).
#include <string>
#include <vector>

#include "core/checked_math.h"
#include "schema/schema.h"

namespace sy {
namespace {

Status infer_deform_conv(InferenceContext& ctx) {
  const Node& node = ctx.node();
  const int64_t group = node.attr_int("group", 1);
  const int64_t offset_group = node.attr_int("offset_group", 1);
  if (group < 1 || offset_group < 1)
    return ctx.error("group and offset_group must be 1 or more, got " + std::to_string(group) + " and " +
                     std::to_string(offset_group));
  const ValueType* x = ctx.input_type(0);
  const ValueType* w = ctx.input_type(1);
  const ValueType* offset = ctx.input_type(2);
  ValueType y = ValueType::tensor(x != nullptr ? x->dtype : DataType::kUndefined);
  if (x == nullptr || !x->has_shape) {
    ctx.output_type(0) = y;
    return ok_status();
  }
  if (x->rank() < 3) return ctx.error("X must have rank 3 or more [N, C, D1, ...], got " + x->shape_string());
  const size_t r = x->rank() - 2;
  y.has_shape = true;
  y.dims.assign(x->rank(), Dim::unknown());
  y.dims[0] = x->dims[0];
  if (w != nullptr && w->has_shape) {
    if (w->rank() != x->rank())
      return ctx.error("W " + w->shape_string() + " must have X's rank " + std::to_string(x->rank()));
    y.dims[1] = w->dims[0];
  }
  // The spatial output dims: from offset when its shape is known, else by
  // Conv's rule from X, the kernel and the attributes.
  if (offset != nullptr && offset->has_shape) {
    if (offset->rank() != x->rank())
      return ctx.error("offset " + offset->shape_string() + " must have X's rank " + std::to_string(x->rank()));
    for (size_t d = 0; d < r; ++d) y.dims[d + 2] = offset->dims[d + 2];
    ctx.output_type(0) = y;
    return ok_status();
  }
  std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  if (kernel.empty() && w != nullptr && w->has_shape) {
    for (size_t d = 0; d < r; ++d) kernel.push_back(w->dims[d + 2].is_known() ? w->dims[d + 2].value : -1);
  }
  const std::vector<int64_t> strides = node.attr_ints("strides");
  const std::vector<int64_t> dilations = node.attr_ints("dilations");
  const std::vector<int64_t> pads = node.attr_ints("pads");
  if (kernel.size() != r || (!strides.empty() && strides.size() != r) ||
      (!dilations.empty() && dilations.size() != r) || (!pads.empty() && pads.size() != 2 * r)) {
    ctx.output_type(0) = y;
    return ok_status();
  }
  for (size_t d = 0; d < r; ++d) {
    const Dim& in = x->dims[d + 2];
    const int64_t stride = strides.empty() ? 1 : strides[d];
    const int64_t dilation = dilations.empty() ? 1 : dilations[d];
    int64_t room = 0, span = 0;
    if (!in.is_known() || kernel[d] < 1 || stride < 1 || dilation < 1) continue;
    if (checked_mul(dilation, kernel[d] - 1, span) && checked_add(span, 1, span) &&
        checked_add(in.value, pads.empty() ? 0 : pads[d], room) &&
        checked_add(room, pads.empty() ? 0 : pads[d + r], room) && checked_sub(room, span, room) && room >= 0)
      y.dims[d + 2] = Dim::known(room / stride + 1);
  }
  ctx.output_type(0) = y;
  return ok_status();
}

constexpr OpSchema kDeformConvSchemas[] = {
    {"", "DeformConv", 19, 3, 5, 1, 1, &infer_deform_conv},
    {"", "DeformConv", 22, 3, 5, 1, 1, &infer_deform_conv},
};

}  // namespace

std::span<const OpSchema> deform_conv_schemas() { return kDeformConvSchemas; }

}  // namespace sy
