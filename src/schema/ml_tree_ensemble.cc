// Schemas of TreeEnsemble (ai.onnx.ml 5), TreeEnsembleRegressor and
// TreeEnsembleClassifier (1 and 3; both deprecated from 5 on, where the
// spec lists them without attributes).
#include <algorithm>
#include <string>

#include "schema/ml_common.h"
#include "schema/schema.h"

namespace sy {
namespace {

// 1 + the largest of the ids, for an n_targets the model leaves out.
int64_t targets_of(const Node& node, const std::string& ids) {
  int64_t n = 0;
  for (int64_t id : node.attr_ints(ids)) n = std::max(n, id + 1);
  return node.attr_int("n_targets", n);
}

// Y: [N, n_targets] of X's type.
Status infer_tree_ensemble(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  SY_RETURN_IF_ERROR(ml_schema::infer_regressor_output(ctx, targets_of(ctx.node(), "leaf_targetids")));
  ctx.output_type(0).dtype = x->dtype;
  return ok_status();
}

Status infer_tree_regressor(InferenceContext& ctx) {
  return ml_schema::infer_regressor_output(ctx, targets_of(ctx.node(), "target_ids"));
}

// Z has two columns for a single label (its binary case).
Status infer_tree_classifier(InferenceContext& ctx) {
  const int64_t labels = ml_schema::label_count(ctx.node(), "classlabels_int64s");
  return ml_schema::infer_classifier_outputs(ctx, labels == 1 ? 2 : labels);
}

Status infer_deprecated(InferenceContext& ctx) {
  return ctx.error(ctx.node().op_type + " is deprecated from ai.onnx.ml opset 5 on; use TreeEnsemble instead");
}

constexpr OpSchema kMlTreeEnsembleSchemas[] = {
    {"ai.onnx.ml", "TreeEnsemble", 5, 1, 1, 1, 1, &infer_tree_ensemble},
    {"ai.onnx.ml", "TreeEnsembleRegressor", 1, 1, 1, 1, 1, &infer_tree_regressor},
    {"ai.onnx.ml", "TreeEnsembleRegressor", 5, 1, 1, 1, 1, &infer_deprecated},
    {"ai.onnx.ml", "TreeEnsembleClassifier", 1, 1, 1, 1, 2, &infer_tree_classifier},
    {"ai.onnx.ml", "TreeEnsembleClassifier", 5, 1, 1, 1, 2, &infer_deprecated},
};

}  // namespace

std::span<const OpSchema> ml_tree_ensemble_schemas() { return kMlTreeEnsembleSchemas; }

}  // namespace sy
