// Schemas of the ai.onnx.ml feature transforms (all version 1):
// Normalizer, Scaler, Binarizer, Imputer, OneHotEncoder,
// ArrayFeatureExtractor, FeatureVectorizer and CategoryMapper.
#include <string>
#include <vector>

#include "schema/ml_common.h"
#include "schema/schema.h"

namespace sy {
namespace {

// Y: X's shape, element type `dtype`.
Status same_shape_as(InferenceContext& ctx, DataType dtype) {
  SY_RETURN_IF_ERROR(infer_same_as_input0(ctx));
  ctx.output_type(0).dtype = dtype;
  return ok_status();
}

Status infer_float_same_shape(InferenceContext& ctx) { return same_shape_as(ctx, DataType::kFloat); }

// Normalizer: X is [N, C] or [C].
Status infer_normalizer(InferenceContext& ctx) {
  Dim n;
  SY_RETURN_IF_ERROR(ml_schema::batch_dim(ctx, n));
  return same_shape_as(ctx, DataType::kFloat);
}

// OneHotEncoder: X's shape plus a dim for the categories.
Status infer_one_hot_encoder(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  const Node& node = ctx.node();
  const std::vector<int64_t> ints = node.attr_ints("cats_int64s");
  const Attribute* strings = node.attr("cats_strings");
  const auto categories = static_cast<int64_t>(!ints.empty() ? ints.size() : strings ? strings->strings.size() : 0);
  ValueType out = ValueType::tensor(DataType::kFloat);
  if (x->has_shape) {
    out.has_shape = true;
    out.dims = x->dims;
    out.dims.push_back(Dim::known(categories));
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ArrayFeatureExtractor: X's dims but the last, then the number of indices;
// a vector X counts as one row.
Status infer_array_feature_extractor(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "Y", type_bit(DataType::kInt64)));
  ValueType out = ValueType::tensor(x->dtype);
  if (x->has_shape) {
    if (x->rank() == 0) return ctx.error("X must have rank 1 or more");
    out.has_shape = true;
    out.dims = x->rank() == 1 ? std::vector<Dim>{Dim::known(1)} : std::vector<Dim>(x->dims.begin(), x->dims.end() - 1);
    out.dims.push_back(ml_schema::count_dim(known_count(ctx.input_type(1))));
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// FeatureVectorizer: [N, sum of inputdimensions], float.
Status infer_feature_vectorizer(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  int64_t total = 0;
  for (int64_t w : ctx.node().attr_ints("inputdimensions")) total += w;
  ctx.output_type(0) = x->has_shape && x->rank() >= 1 && x->rank() <= 2
                           ? ValueType::tensor(DataType::kFloat, {x->dims[0], Dim::known(total)})
                           : ValueType::tensor(DataType::kFloat);
  return ok_status();
}

// CategoryMapper: strings become int64s and int64s strings.
Status infer_category_mapper(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  const DataType out = x->dtype == DataType::kString  ? DataType::kInt64
                       : x->dtype == DataType::kInt64 ? DataType::kString
                                                      : DataType::kUndefined;
  return same_shape_as(ctx, out);
}

constexpr OpSchema kMlPreprocessSchemas[] = {
    {"ai.onnx.ml", "Normalizer", 1, 1, 1, 1, 1, &infer_normalizer},
    {"ai.onnx.ml", "Scaler", 1, 1, 1, 1, 1, &infer_float_same_shape},
    {"ai.onnx.ml", "Binarizer", 1, 1, 1, 1, 1, &infer_same_as_input0},
    {"ai.onnx.ml", "Imputer", 1, 1, 1, 1, 1, &infer_same_as_input0},
    {"ai.onnx.ml", "OneHotEncoder", 1, 1, 1, 1, 1, &infer_one_hot_encoder},
    {"ai.onnx.ml", "ArrayFeatureExtractor", 1, 2, 2, 1, 1, &infer_array_feature_extractor},
    {"ai.onnx.ml", "FeatureVectorizer", 1, 1, -1, 1, 1, &infer_feature_vectorizer},
    {"ai.onnx.ml", "CategoryMapper", 1, 1, 1, 1, 1, &infer_category_mapper},
};

}  // namespace

std::span<const OpSchema> ml_preprocess_schemas() { return kMlPreprocessSchemas; }

}  // namespace sy
