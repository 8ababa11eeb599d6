// Schemas of the ai.onnx.preview.training optimizers Momentum, Adagrad and
// Adam (all version 1). Inputs are R, T, then n X's, n G's and n of each
// state tensor (V and/or H); outputs are n new X's then n of each new state.
// Each output group takes the type of the input group it updates.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

constexpr uint64_t kFloatTypes = type_bit(DataType::kFloat) | type_bit(DataType::kDouble);

// `groups_in` tensors per optimized value among the inputs (X, G, states),
// `groups_out` among the outputs (X, states).
Status infer_optimizer(InferenceContext& ctx, size_t groups_in, size_t groups_out) {
  const size_t per_group = ctx.num_inputs() - 2;
  if (per_group % groups_in != 0)
    return ctx.error("expects R, T and " + std::to_string(groups_in) + " equal groups of inputs, got " +
                     std::to_string(ctx.num_inputs()) + " inputs");
  const size_t n = per_group / groups_in;
  if (ctx.num_outputs() != n * groups_out)
    return ctx.error("expects " + std::to_string(n * groups_out) + " outputs for " + std::to_string(n) +
                     " optimized tensors, got " + std::to_string(ctx.num_outputs()));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 0, "R", kFloatTypes));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "T", type_bit(DataType::kInt64)));
  for (size_t o = 0; o < groups_out; ++o) {
    // Output group 0 is the new X (input group 0); the others are the new
    // states, which follow G (input group 1).
    const size_t in_group = o == 0 ? 0 : o + 1;
    for (size_t j = 0; j < n; ++j) {
      SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 2 + in_group * n + j));
      ctx.output_type(o * n + j) = *in;
    }
  }
  return ok_status();
}

Status infer_momentum(InferenceContext& ctx) { return infer_optimizer(ctx, 3, 2); }
Status infer_adagrad(InferenceContext& ctx) { return infer_optimizer(ctx, 3, 2); }
Status infer_adam(InferenceContext& ctx) { return infer_optimizer(ctx, 4, 3); }

constexpr OpSchema kTrainingSchemas[] = {
    {"ai.onnx.preview.training", "Momentum", 1, 5, -1, 2, -1, &infer_momentum},
    {"ai.onnx.preview.training", "Adagrad", 1, 5, -1, 2, -1, &infer_adagrad},
    {"ai.onnx.preview.training", "Adam", 1, 6, -1, 3, -1, &infer_adam},
};

}  // namespace

std::span<const OpSchema> training_schemas() { return kTrainingSchemas; }

}  // namespace sy
