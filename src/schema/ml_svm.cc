// Schemas of SVMClassifier and SVMRegressor (ai.onnx.ml 1).
#include "schema/ml_common.h"
#include "schema/schema.h"

namespace sy {
namespace {

// Z's width depends on whether the model has support vectors and
// probabilities (per class) or not (per pair of classes), and on the
// binary case's extra column: left unknown.
Status infer_svm_classifier(InferenceContext& ctx) { return ml_schema::infer_classifier_outputs(ctx, -1); }

Status infer_svm_regressor(InferenceContext& ctx) { return ml_schema::infer_regressor_output(ctx, 1); }

constexpr OpSchema kMlSvmSchemas[] = {
    {"ai.onnx.ml", "SVMClassifier", 1, 1, 1, 1, 2, &infer_svm_classifier},
    {"ai.onnx.ml", "SVMRegressor", 1, 1, 1, 1, 1, &infer_svm_regressor},
};

}  // namespace

std::span<const OpSchema> ml_svm_schemas() { return kMlSvmSchemas; }

}  // namespace sy
