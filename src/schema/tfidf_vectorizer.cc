// Schema of TfIdfVectorizer. The attributes are checked in full when the
// kernel is created (providers/cpu/tfidf_vectorizer.cc); here only what
// the output type needs.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_tfidf_vectorizer(InferenceContext& ctx) {
  const std::string mode = ctx.node().attr_string("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return ctx.error("attribute mode must be TF, IDF or TFIDF, got '" + mode + "'");
  const std::vector<int64_t> indexes = ctx.node().attr_ints("ngram_indexes");
  if (indexes.empty()) return ctx.error("attribute ngram_indexes is required and must not be empty");
  const int64_t largest = *std::max_element(indexes.begin(), indexes.end());
  const int64_t smallest = *std::min_element(indexes.begin(), indexes.end());
  if (smallest < 0) return ctx.error("ngram_indexes must be >= 0, got " + std::to_string(smallest));
  // Every output row holds max(ngram_indexes) + 1 floats.
  const Dim width = Dim::known(largest + 1);
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  ValueType y = ValueType::tensor(DataType::kFloat);
  if (x->has_shape) {
    if (x->rank() <= 1) {
      y = ValueType::tensor(DataType::kFloat, {width});
    } else if (x->rank() == 2) {
      y = ValueType::tensor(DataType::kFloat, {x->dims[0], width});
    } else {
      return ctx.error("input 0 (X) must have shape [C] or [N, C], got " + x->shape_string());
    }
  }
  ctx.output_type(0) = std::move(y);
  return ok_status();
}

constexpr OpSchema kTfidfVectorizerSchemas[] = {
    {"", "TfIdfVectorizer", 9, 1, 1, 1, 1, &infer_tfidf_vectorizer},
};

}  // namespace

std::span<const OpSchema> tfidf_vectorizer_schemas() { return kTfidfVectorizerSchemas; }

}  // namespace sy
