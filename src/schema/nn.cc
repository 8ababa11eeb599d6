// Conv and pooling schemas. Output spatial dims follow the ONNX formulas
// (explicit pads with floor or ceil, SAME_UPPER/SAME_LOWER, VALID); a dim is
// computed when the input's is known, the batch dim (symbolic or not) is
// carried over.
#include <string>
#include <vector>

#include "schema/schema_tables.h"

namespace sy {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Spatial output dims for input `x` (rank >= 3). `kernel` holds -1 where
// the kernel size is unknown.
Status infer_window_dims(InferenceContext& ctx, const ValueType& x, const std::vector<int64_t>& kernel,
                         bool has_ceil_mode, std::vector<Dim>& out) {
  const Node& n = ctx.node();
  const size_t rank = x.rank() - 2;
  if (kernel.size() != rank)
    return ctx.error("the kernel has " + std::to_string(kernel.size()) + " dims but input " + x.shape_string() +
                     " has " + std::to_string(rank) + " spatial dims");
  const std::vector<int64_t> strides = n.attr_ints("strides");
  const std::vector<int64_t> dilations = n.attr_ints("dilations");
  const std::vector<int64_t> pads = n.attr_ints("pads");
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  const bool ceil_mode = has_ceil_mode && n.attr_int("ceil_mode", 0) != 0;
  if (!strides.empty() && strides.size() != rank)
    return ctx.error("strides " + ints_string(strides) + " must have " + std::to_string(rank) + " values");
  if (!dilations.empty() && dilations.size() != rank)
    return ctx.error("dilations " + ints_string(dilations) + " must have " + std::to_string(rank) + " values");
  if (!pads.empty() && pads.size() != 2 * rank)
    return ctx.error("pads " + ints_string(pads) + " must have " + std::to_string(2 * rank) + " values");
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID" &&
      !auto_pad.empty())
    return ctx.error("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID; got \"" + auto_pad + "\"");
  for (int64_t s : strides)
    if (s <= 0) return ctx.error("strides must be positive; got " + ints_string(strides));
  for (int64_t d : dilations)
    if (d <= 0) return ctx.error("dilations must be positive; got " + ints_string(dilations));
  for (int64_t p : pads)
    if (p < 0) return ctx.error("pads must be >= 0; got " + ints_string(pads));
  for (size_t i = 0; i < rank; ++i) {
    const Dim& in = x.dims[i + 2];
    const int64_t s = strides.empty() ? 1 : strides[i];
    if (!in.is_known()) {
      out.push_back(Dim::unknown());
      continue;
    }
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out.push_back(Dim::known(ceil_div(in.value, s)));
      continue;
    }
    if (kernel[i] < 0) {
      out.push_back(Dim::unknown());
      continue;
    }
    const int64_t d = dilations.empty() ? 1 : dilations[i];
    const int64_t ek = (kernel[i] - 1) * d + 1;
    const int64_t pb = auto_pad == "VALID" || pads.empty() ? 0 : pads[i];
    const int64_t pe = auto_pad == "VALID" || pads.empty() ? 0 : pads[i + rank];
    const int64_t avail = in.value + pb + pe - ek;
    if (avail < 0)
      return ctx.error("the window (" + std::to_string(ek) + " after dilation) is larger than spatial dim " +
                       std::to_string(i) + " of input " + x.shape_string() + " plus padding");
    int64_t o = ceil_mode ? ceil_div(avail, s) + 1 : avail / s + 1;
    if (ceil_mode && (o - 1) * s >= in.value + pb) --o;
    out.push_back(Dim::known(o));
  }
  return ok_status();
}

// X must be a tensor of rank >= 3 when its rank is known.
Status check_image_input(InferenceContext& ctx, const ValueType* x) {
  if (x == nullptr) return ctx.error("input X is required");
  if (x->has_shape && x->rank() < 3)
    return ctx.error("X must have rank >= 3 (N, C, spatial...); got " + x->shape_string());
  return ok_status();
}

Status infer_conv(InferenceContext& ctx) {
  const ValueType* x = ctx.input_type(0);
  const ValueType* w = ctx.input_type(1);
  SY_RETURN_IF_ERROR(check_image_input(ctx, x));
  if (w == nullptr) return ctx.error("input W is required");
  ValueType out = ValueType::tensor(x->dtype);
  const int64_t group = ctx.node().attr_int("group", 1);
  if (group <= 0) return ctx.error("group must be positive; got " + std::to_string(group));
  if (x->has_shape && w->has_shape && w->rank() != x->rank())
    return ctx.error("W " + w->shape_string() + " must have the rank of X " + x->shape_string());
  if (x->has_shape && w->has_shape) {
    const Dim& c = x->dims[1];
    const Dim& wc = w->dims[1];
    if (c.is_known() && wc.is_known() && c.value != wc.value * group)
      return ctx.error("X has " + c.to_string() + " channels but W " + w->shape_string() + " with group " +
                       std::to_string(group) + " expects " + std::to_string(wc.value * group));
  }
  if (!x->has_shape) {
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  std::vector<int64_t> kernel = ctx.node().attr_ints("kernel_shape");
  if (kernel.empty()) {
    for (size_t i = 2; i < x->rank(); ++i)
      kernel.push_back(w->has_shape && w->dims[i].is_known() ? w->dims[i].value : -1);
  }
  out.has_shape = true;
  out.dims.push_back(x->dims[0]);
  out.dims.push_back(w->has_shape ? w->dims[0] : Dim::unknown());
  SY_RETURN_IF_ERROR(infer_window_dims(ctx, *x, kernel, false, out.dims));
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_pool(InferenceContext& ctx, bool has_ceil_mode) {
  const ValueType* x = ctx.input_type(0);
  SY_RETURN_IF_ERROR(check_image_input(ctx, x));
  const std::vector<int64_t> kernel = ctx.node().attr_ints("kernel_shape");
  if (kernel.empty()) return ctx.error("attribute kernel_shape is required");
  for (int64_t k : kernel)
    if (k <= 0) return ctx.error("kernel_shape must be positive; got " + ints_string(kernel));
  ValueType out = ValueType::tensor(x->dtype);
  if (x->has_shape) {
    out.has_shape = true;
    out.dims.push_back(x->dims[0]);
    out.dims.push_back(x->dims[1]);
    SY_RETURN_IF_ERROR(infer_window_dims(ctx, *x, kernel, has_ceil_mode, out.dims));
  }
  if (ctx.num_outputs() > 1) {
    ValueType indices = out;
    indices.dtype = DataType::kInt64;
    ctx.output_type(1) = std::move(indices);
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_max_pool(InferenceContext& ctx) {
  const int64_t order = ctx.node().attr_int("storage_order", 0);
  if (order != 0 && order != 1) return ctx.error("storage_order must be 0 or 1; got " + std::to_string(order));
  return infer_pool(ctx, ctx.opset() >= 10);
}

Status infer_average_pool(InferenceContext& ctx) { return infer_pool(ctx, ctx.opset() >= 10); }

Status infer_global_pool(InferenceContext& ctx) {
  const ValueType* x = ctx.input_type(0);
  SY_RETURN_IF_ERROR(check_image_input(ctx, x));
  ValueType out = ValueType::tensor(x->dtype);
  if (x->has_shape) {
    out.has_shape = true;
    out.dims = {x->dims[0], x->dims[1]};
    for (size_t i = 2; i < x->rank(); ++i) out.dims.push_back(Dim::known(1));
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

const OpSchema kNnSchemas[] = {
    {"", "Conv", 1, 2, 3, 1, 1, &infer_conv},
    {"", "MaxPool", 1, 1, 1, 1, 1, &infer_max_pool},
    {"", "MaxPool", 8, 1, 1, 1, 2, &infer_max_pool},
    {"", "AveragePool", 1, 1, 1, 1, 1, &infer_average_pool},
    {"", "GlobalAveragePool", 1, 1, 1, 1, 1, &infer_global_pool},
    {"", "GlobalMaxPool", 1, 1, 1, 1, 1, &infer_global_pool},
};

}  // namespace

std::span<const OpSchema> nn_schemas() { return kNnSchemas; }

}  // namespace sy
