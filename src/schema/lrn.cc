// Schema of LRN (local response normalization across channels): Y has X's
// type and shape.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_lrn(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  if (!ctx.node().has_attr("size")) return ctx.error("attribute size is required");
  const int64_t size = ctx.node().attr_int("size", 0);
  if (size <= 0) return ctx.error("attribute size must be positive, got " + std::to_string(size));
  if (x->has_shape && x->rank() < 2)
    return ctx.error("X must have rank 2 or more (N, C, ...), got " + x->shape_string());
  return infer_same_as_input0(ctx);
}

// 13 adds bfloat16.
constexpr OpSchema kLrnSchemas[] = {
    {"", "LRN", 1, 1, 1, 1, 1, &infer_lrn},
    {"", "LRN", 13, 1, 1, 1, 1, &infer_lrn},
};

}  // namespace

std::span<const OpSchema> lrn_schemas() { return kLrnSchemas; }

}  // namespace sy
