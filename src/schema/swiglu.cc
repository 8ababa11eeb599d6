// Schema of SwiGLU (opset 28): Y = Swish_alpha(A) * B with A and B of one
// shape; the op does not broadcast.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_swiglu(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* a, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* b, required_input(ctx, 1));
  if (a->is_tensor() && b->is_tensor() && a->dtype != DataType::kUndefined && b->dtype != DataType::kUndefined &&
      a->dtype != b->dtype)
    return ctx.error("inputs A and B must have the same element type, got " + a->type_string() + " and " +
                     b->type_string());
  if (a->has_shape && b->has_shape) {
    bool mismatch = a->rank() != b->rank();
    for (size_t i = 0; !mismatch && i < a->rank(); ++i) {
      const Dim& da = a->dims[i];
      const Dim& db = b->dims[i];
      mismatch = da.value >= 0 && db.value >= 0 && da.value != db.value;
    }
    if (mismatch)
      return ctx.error("inputs A and B must have the same shape, got " + a->shape_string() + " and " +
                       b->shape_string());
  }
  return infer_same_as_input0(ctx);
}

constexpr OpSchema kSwigluSchemas[] = {
    {"", "SwiGLU", 28, 2, 2, 1, 1, &infer_swiglu},
};

}  // namespace

std::span<const OpSchema> swiglu_schemas() { return kSwigluSchemas; }

}  // namespace sy
