// Schemas of LinearClassifier and LinearRegressor (ai.onnx.ml 1).
#include <algorithm>
#include <string>

#include "schema/ml_common.h"
#include "schema/schema.h"

namespace sy {
namespace {

// Z: scores [N, K], K the rows of coefficients (two for a single row and
// two labels: the binary case).
Status infer_linear_classifier(InferenceContext& ctx) {
  const Node& node = ctx.node();
  const int64_t labels = ml_schema::label_count(node, "classlabels_ints");
  const auto coefficients = static_cast<int64_t>(node.attr_floats("coefficients").size());
  const int64_t features = ml_schema::feature_count(ctx);
  int64_t k = features > 0 && coefficients % features == 0 ? coefficients / features : -1;
  if (k == 1 && labels == 2) k = 2;
  return ml_schema::infer_classifier_outputs(ctx, k);
}

Status infer_linear_regressor(InferenceContext& ctx) {
  return ml_schema::infer_regressor_output(ctx, ctx.node().attr_int("targets", 1));
}

constexpr OpSchema kMlLinearSchemas[] = {
    {"ai.onnx.ml", "LinearClassifier", 1, 1, 1, 1, 2, &infer_linear_classifier},
    {"ai.onnx.ml", "LinearRegressor", 1, 1, 1, 1, 1, &infer_linear_regressor},
};

}  // namespace

std::span<const OpSchema> ml_linear_schemas() { return kMlLinearSchemas; }

}  // namespace sy
