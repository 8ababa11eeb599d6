// Schema of LpNormalization: Y has X's type and shape; p is 1 or 2.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_lp_norm(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  const int64_t p = ctx.node().attr_int("p", 2);
  if (p != 1 && p != 2) return ctx.error("attribute p must be 1 or 2, got " + std::to_string(p));
  if (x->has_shape) {
    if (x->rank() == 0) return ctx.error("input must have rank 1 or more, got a scalar");
    int64_t axis = ctx.node().attr_int("axis", -1);
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, static_cast<int64_t>(x->rank())));
  }
  return infer_same_as_input0(ctx);
}

// 22 adds bfloat16.
constexpr OpSchema kLpNormSchemas[] = {
    {"", "LpNormalization", 1, 1, 1, 1, 1, &infer_lp_norm},
    {"", "LpNormalization", 22, 1, 1, 1, 1, &infer_lp_norm},
};

}  // namespace

std::span<const OpSchema> lp_norm_schemas() { return kLpNormSchemas; }

}  // namespace sy
