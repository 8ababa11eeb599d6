// Schema of GroupNormalization: Y has X's type and shape. Scale and bias
// have one value per group in version 18 and one per channel from 21.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_group_norm(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  const Node& n = ctx.node();
  if (!n.has_attr("num_groups")) return ctx.error("attribute num_groups is required");
  const int64_t groups = n.attr_int("num_groups", 0);
  if (groups <= 0) return ctx.error("attribute num_groups must be positive, got " + std::to_string(groups));
  SY_RETURN_IF_ERROR(check_stash_type(ctx));
  if (x->has_shape && x->rank() < 2)
    return ctx.error("X must have rank 2 or more (N, C, ...), got " + x->shape_string());
  const bool per_group = ctx.opset() < 21;
  int64_t want = per_group ? groups : -1;
  if (x->has_shape && x->dims[1].is_known()) {
    const int64_t channels = x->dims[1].value;
    if (channels % groups != 0)
      return ctx.error("X " + x->shape_string() + " has " + std::to_string(channels) +
                       " channels, not a multiple of num_groups " + std::to_string(groups));
    if (!per_group) want = channels;
  }
  for (size_t i = 1; i <= 2; ++i) {
    const char* name = i == 1 ? "scale" : "bias";
    const ValueType* p = ctx.input_type(i);
    if (p == nullptr) return ctx.error(std::string("input ") + name + " is required");
    if (!p->has_shape) continue;
    if (p->rank() != 1)
      return ctx.error(std::string(name) + " must be 1-D, got " + p->shape_string());
    if (want >= 0 && p->dims[0].is_known() && p->dims[0].value != want)
      return ctx.error(std::string(name) + " " + p->shape_string() + " must have " + std::to_string(want) +
                       (per_group ? " values (one per group)" : " values (one per channel)"));
  }
  return infer_same_as_input0(ctx);
}

constexpr OpSchema kGroupNormSchemas[] = {
    {"", "GroupNormalization", 18, 3, 3, 1, 1, &infer_group_norm},
    {"", "GroupNormalization", 21, 3, 3, 1, 1, &infer_group_norm},
};

}  // namespace

std::span<const OpSchema> group_norm_schemas() { return kGroupNormSchemas; }

}  // namespace sy
