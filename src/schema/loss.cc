// Schemas of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
//
// Both take scores of shape [N, C, d1, ..., dk], class indices of shape
// [N, d1, ..., dk] and optional per-class weights [C]. The loss has the
// target's shape under reduction "none" and is a scalar otherwise;
// SoftmaxCrossEntropyLoss's optional second output, the log-probabilities,
// has the scores' type and shape.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

// Two dims that must agree: an error only when both are known numbers.
bool dims_conflict(const Dim& a, const Dim& b) { return a.is_known() && b.is_known() && a.value != b.value; }

Status infer_loss(InferenceContext& ctx) {
  // The inputs' names in the spec, for messages.
  const bool softmax = ctx.node().op_type == "SoftmaxCrossEntropyLoss";
  const std::string x_name = softmax ? "input 0 (scores)" : "input 0 (input)";
  const std::string t_name = softmax ? "input 1 (labels)" : "input 1 (target)";
  const std::string w_name = softmax ? "input 2 (weights)" : "input 2 (weight)";
  SY_ASSIGN_OR_RETURN(const ValueType* scores, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* target, required_input(ctx, 1));
  const ValueType* weight = ctx.input_type(2);
  const std::string reduction = ctx.node().attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return ctx.error("attribute reduction must be \"none\", \"sum\" or \"mean\", got \"" + reduction + "\"");
  if (scores->has_shape && scores->rank() < 2)
    return ctx.error(x_name + " must have shape [N, C, d1, ..., dk] (rank 2 or more), got " +
                     scores->shape_string());
  if (scores->has_shape && target->has_shape) {
    if (target->rank() + 1 != scores->rank())
      return ctx.error(t_name + " " + target->shape_string() + " must have the shape of " + x_name + " " +
                       scores->shape_string() + " without its dim 1 (C)");
    for (size_t d = 0; d < target->rank(); ++d) {
      if (dims_conflict(target->dims[d], scores->dims[d == 0 ? 0 : d + 1]))
        return ctx.error(t_name + " " + target->shape_string() + " must have the shape of " + x_name + " " +
                         scores->shape_string() + " without its dim 1 (C)");
    }
  }
  if (weight != nullptr && weight->has_shape) {
    if (weight->rank() != 1)
      return ctx.error(w_name + " must have shape [C], got " + weight->shape_string());
    if (scores->has_shape && dims_conflict(weight->dims[0], scores->dims[1]))
      return ctx.error(w_name + " " + weight->shape_string() + " must have one element per class (C = " +
                       scores->dims[1].to_string() + ")");
  }

  ValueType loss = ValueType::tensor(scores->dtype);
  if (reduction != "none") {
    loss.has_shape = true;
  } else if (target->has_shape) {
    loss = ValueType::tensor(scores->dtype, target->dims);
  } else if (scores->has_shape) {
    loss = ValueType::tensor(scores->dtype, scores->dims);
    loss.dims.erase(loss.dims.begin() + 1);
  }
  ctx.output_type(0) = loss;
  if (ctx.num_outputs() > 1) ctx.output_type(1) = *scores;
  return ok_status();
}

constexpr OpSchema kLossSchemas[] = {
    {"", "NegativeLogLikelihoodLoss", 12, 2, 3, 1, 1, &infer_loss},
    {"", "NegativeLogLikelihoodLoss", 13, 2, 3, 1, 1, &infer_loss},
    {"", "NegativeLogLikelihoodLoss", 22, 2, 3, 1, 1, &infer_loss},
    {"", "SoftmaxCrossEntropyLoss", 12, 2, 3, 1, 2, &infer_loss},
    {"", "SoftmaxCrossEntropyLoss", 13, 2, 3, 1, 2, &infer_loss},
};

}  // namespace

std::span<const OpSchema> loss_schemas() { return kLossSchemas; }

}  // namespace sy
