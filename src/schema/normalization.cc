// Schemas of BatchNormalization, LayerNormalization, InstanceNormalization,
// Softmax, LogSoftmax and Hardmax.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

// Checks `axis` against the input's rank when the rank is known; the
// normalized axis in `out` (or -1 when the rank is unknown).
Status check_axis(const InferenceContext& ctx, int64_t axis, bool allow_rank, int64_t& out) {
  out = -1;
  const ValueType* x = ctx.input_type(0);
  if (x == nullptr || !x->has_shape) return ok_status();
  const auto rank = static_cast<int64_t>(x->rank());
  const int64_t hi = allow_rank ? rank : rank - 1;
  if (axis < -rank || axis > hi)
    return ctx.error("axis " + std::to_string(axis) + " is out of range for input of rank " + std::to_string(rank));
  out = axis < 0 ? axis + rank : axis;
  return ok_status();
}

Status infer_softmax(InferenceContext& ctx) {
  const int64_t axis = ctx.node().attr_int("axis", ctx.opset() < 13 ? 1 : -1);
  const ValueType* x = ctx.input_type(0);
  // A scalar softmax is allowed (one element, axis 0 or -1).
  if (!(x != nullptr && x->has_shape && x->rank() == 0)) {
    int64_t normalized = 0;
    SY_RETURN_IF_ERROR(check_axis(ctx, axis, ctx.opset() < 13, normalized));
  }
  return infer_same_as_input0(ctx);
}

Status infer_batch_norm(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(infer_same_as_input0(ctx));
  const ValueType* x = ctx.input_type(0);
  if (x != nullptr && x->has_shape && x->rank() < 1) return ctx.error("X must have rank 1 or more, got a scalar");
  // Extra outputs (running or saved statistics) are per channel.
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    const ValueType* mean = ctx.input_type(3);
    ValueType t = ValueType::tensor(mean ? mean->dtype : DataType::kFloat);
    if (x != nullptr && x->has_shape && x->rank() >= 2) {
      t.has_shape = true;
      t.dims = {x->dims[1]};
    }
    ctx.output_type(i) = t;
  }
  return ok_status();
}

Status infer_layer_norm(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(infer_same_as_input0(ctx));
  int64_t axis = 0;
  SY_RETURN_IF_ERROR(check_axis(ctx, ctx.node().attr_int("axis", -1), false, axis));
  SY_RETURN_IF_ERROR(check_stash_type(ctx));
  const int64_t stash = ctx.node().attr_int("stash_type", 1);
  const ValueType* x = ctx.input_type(0);
  for (size_t i = 1; i < ctx.num_outputs() && i < 3; ++i) {
    ValueType t = ValueType::tensor(static_cast<DataType>(stash));
    if (axis >= 0) {
      t.has_shape = true;
      t.dims = x->dims;
      for (size_t d = static_cast<size_t>(axis); d < t.dims.size(); ++d) t.dims[d] = Dim::known(1);
    }
    ctx.output_type(i) = t;
  }
  return ok_status();
}

Status infer_instance_norm(InferenceContext& ctx) {
  const ValueType* x = ctx.input_type(0);
  if (x != nullptr && x->has_shape && x->rank() < 2)
    return ctx.error("input must have rank 2 or more (N, C, ...), got rank " + std::to_string(x->rank()));
  return infer_same_as_input0(ctx);
}

constexpr OpSchema kNormalizationSchemas[] = {
    {"", "BatchNormalization", 7, 5, 5, 1, 5, &infer_batch_norm},
    {"", "BatchNormalization", 14, 5, 5, 1, 3, &infer_batch_norm},
    {"", "LayerNormalization", 17, 2, 3, 1, 3, &infer_layer_norm},
    {"", "InstanceNormalization", 6, 3, 3, 1, 1, &infer_instance_norm},
    {"", "Softmax", 1, 1, 1, 1, 1, &infer_softmax},
    {"", "LogSoftmax", 1, 1, 1, 1, 1, &infer_softmax},
    {"", "Hardmax", 1, 1, 1, 1, 1, &infer_softmax},
};

}  // namespace

std::span<const OpSchema> normalization_schemas() { return kNormalizationSchemas; }

}  // namespace sy
