// ConvTranspose's schema. Y has W[1] * group channels; each spatial dim is
// the transposed window's (provider_sdk/window_dim.h, the same arithmetic
// the kernels use), computed where X's dim and the kernel size are known.
#include <string>
#include <vector>

#include "schema/schema.h"
#include "switchyard/provider_sdk/window_dim.h"

namespace sy {
namespace {

// attribute `name` has `want` values, or none.
Status check_count(const InferenceContext& ctx, const char* name, const std::vector<int64_t>& v, size_t want) {
  if (v.empty() || v.size() == want) return ok_status();
  return ctx.error(std::string(name) + " " + ints_string(v) + " must have " + std::to_string(want) + " values");
}

// Every value of attribute `name` is at least `least` (0 or 1).
Status check_at_least(const InferenceContext& ctx, const char* name, const std::vector<int64_t>& v, int64_t least) {
  for (int64_t x : v)
    if (x < least)
      return ctx.error(std::string(name) + " must be " + (least == 1 ? "positive" : "non-negative") + "; got " +
                       ints_string(v));
  return ok_status();
}

Status infer_conv_transpose(InferenceContext& ctx) {
  const Node& n = ctx.node();
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* w, required_input(ctx, 1));
  const int64_t group = n.attr_int("group", 1);
  if (group <= 0) return ctx.error("group must be positive; got " + std::to_string(group));
  provider_sdk::AutoPad auto_pad;
  const std::string pad_text = n.attr_string("auto_pad", "NOTSET");
  if (!provider_sdk::parse_auto_pad(pad_text, auto_pad))
    return ctx.error("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID; got \"" + pad_text + "\"");
  ValueType out = ValueType::tensor(x->dtype);
  if (!x->has_shape) {
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  if (x->rank() < 3) return ctx.error("X must have rank >= 3 (N, C, spatial...); got " + x->shape_string());
  if (w->has_shape && w->rank() != x->rank())
    return ctx.error("W " + w->shape_string() + " must have the rank of X " + x->shape_string());
  if (w->has_shape && x->dims[1].is_known() && w->dims[0].is_known() && x->dims[1].value != w->dims[0].value)
    return ctx.error("X has " + x->dims[1].to_string() + " channels but W " + w->shape_string() + " has " +
                     w->dims[0].to_string() + " input channels");
  const size_t rank = x->rank() - 2;
  std::vector<int64_t> kernel = n.attr_ints("kernel_shape");
  const std::vector<int64_t> strides = n.attr_ints("strides");
  const std::vector<int64_t> dilations = n.attr_ints("dilations");
  const std::vector<int64_t> pads = n.attr_ints("pads");
  const std::vector<int64_t> output_padding = n.attr_ints("output_padding");
  const std::vector<int64_t> output_shape = n.attr_ints("output_shape");
  SY_RETURN_IF_ERROR(check_count(ctx, "kernel_shape", kernel, rank));
  SY_RETURN_IF_ERROR(check_count(ctx, "strides", strides, rank));
  SY_RETURN_IF_ERROR(check_count(ctx, "dilations", dilations, rank));
  SY_RETURN_IF_ERROR(check_count(ctx, "pads", pads, 2 * rank));
  SY_RETURN_IF_ERROR(check_count(ctx, "output_padding", output_padding, rank));
  // output_shape may also be written with N and C in front.
  if (!output_shape.empty() && output_shape.size() != rank && output_shape.size() != rank + 2)
    return ctx.error("output_shape " + ints_string(output_shape) + " must have " + std::to_string(rank) + " values");
  SY_RETURN_IF_ERROR(check_at_least(ctx, "kernel_shape", kernel, 1));
  SY_RETURN_IF_ERROR(check_at_least(ctx, "strides", strides, 1));
  SY_RETURN_IF_ERROR(check_at_least(ctx, "dilations", dilations, 1));
  SY_RETURN_IF_ERROR(check_at_least(ctx, "pads", pads, 0));
  SY_RETURN_IF_ERROR(check_at_least(ctx, "output_padding", output_padding, 0));
  SY_RETURN_IF_ERROR(check_at_least(ctx, "output_shape", output_shape, 0));
  if (kernel.empty())
    for (size_t i = 0; i < rank; ++i)
      kernel.push_back(w->has_shape && w->dims[i + 2].is_known() ? w->dims[i + 2].value : -1);

  out.has_shape = true;
  out.dims.push_back(x->dims[0]);
  out.dims.push_back(w->has_shape && w->dims[1].is_known() ? Dim::known(w->dims[1].value * group) : Dim::unknown());
  const size_t shape_skip = output_shape.size() == rank + 2 ? 2 : 0;
  for (size_t i = 0; i < rank; ++i) {
    const Dim& in = x->dims[i + 2];
    if (!in.is_known() || kernel[i] < 0) {
      out.dims.push_back(output_shape.empty() ? Dim::unknown() : Dim::known(output_shape[i + shape_skip]));
      continue;
    }
    provider_sdk::WindowDim wd;
    const std::string problem = provider_sdk::transposed_window_dim(
        static_cast<int>(i), in.value, kernel[i], strides.empty() ? 1 : strides[i],
        dilations.empty() ? 1 : dilations[i], auto_pad, pads.empty() ? 0 : pads[i], pads.empty() ? 0 : pads[i + rank],
        output_padding.empty() ? 0 : output_padding[i], output_shape.empty() ? -1 : output_shape[i + shape_skip], wd);
    if (!problem.empty()) return ctx.error(problem);
    out.dims.push_back(Dim::known(wd.out));
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

constexpr OpSchema kConvTransposeSchemas[] = {
    {"", "ConvTranspose", 1, 2, 3, 1, 1, &infer_conv_transpose},
};

}  // namespace

std::span<const OpSchema> conv_transpose_schemas() { return kConvTransposeSchemas; }

}  // namespace sy
