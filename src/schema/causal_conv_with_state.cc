// Schema of CausalConvWithState (opset 27): a depthwise causal Conv1d that
// carries its last k - 1 padded positions from call to call.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

// Dim i of a tensor type, or unknown when the rank is.
Dim dim_of(const ValueType* t, size_t i) {
  if (t == nullptr || !t->has_shape || i >= t->rank()) return Dim::unknown();
  return t->dims[i];
}

Status check_rank(const InferenceContext& ctx, const ValueType* t, size_t rank, const char* what) {
  if (t != nullptr && t->has_shape && t->rank() != rank)
    return ctx.error(std::string(what) + " must have rank " + std::to_string(rank) + ", got " + t->shape_string());
  return ok_status();
}

Status infer_causal_conv_with_state(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* w, required_input(ctx, 1));
  const std::string activation = ctx.node().attr_string("activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish")
    return ctx.error("activation must be 'none', 'silu' or 'swish', got '" + activation + "'");
  SY_RETURN_IF_ERROR(check_rank(ctx, x, 3, "input 0 (input)"));
  SY_RETURN_IF_ERROR(check_rank(ctx, w, 3, "input 1 (weight)"));
  SY_RETURN_IF_ERROR(check_rank(ctx, ctx.input_type(2), 1, "input 2 (bias)"));
  SY_RETURN_IF_ERROR(check_rank(ctx, ctx.input_type(3), 3, "input 3 (past_state)"));
  const Dim k = dim_of(w, 2);
  if (k.is_known() && k.value < 1) return ctx.error("weight's kernel size must be at least 1, got " + w->shape_string());
  ctx.output_type(0) = *x;
  if (ctx.num_outputs() > 1) {
    ValueType state = ValueType::tensor(x->dtype);
    if (x->has_shape) {
      const Dim len = k.is_known() ? Dim::known(k.value - 1) : Dim::unknown();
      state = ValueType::tensor(x->dtype, {x->dims[0], x->dims[1], len});
    }
    ctx.output_type(1) = std::move(state);
  }
  return ok_status();
}

constexpr OpSchema kCausalConvWithStateSchemas[] = {
    {"", "CausalConvWithState", 27, 2, 4, 1, 2, &infer_causal_conv_with_state},
};

}  // namespace

std::span<const OpSchema> causal_conv_with_state_schemas() { return kCausalConvWithStateSchemas; }

}  // namespace sy
