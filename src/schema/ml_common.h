// Shape rules the ai.onnx.ml schemas share: their classifiers and
// regressors read X as [N, C], or [C] as one row.
#pragma once

#include <string>

#include "schema/schema.h"

namespace sy::ml_schema {

// N of an X of [N, C] or [C]: its first dim, 1, or unknown. An error when
// X's rank is known and neither.
inline Status batch_dim(const InferenceContext& ctx, Dim& n) {
  n = Dim::unknown();
  const ValueType* x = ctx.input_type(0);
  if (x == nullptr || !x->has_shape) return ok_status();
  if (x->rank() == 1) n = Dim::known(1);
  else if (x->rank() == 2) n = x->dims[0];
  else return ctx.error("X must have rank 1 or 2 ([N, C] or [C]), got " + x->shape_string());
  return ok_status();
}

// C of an X of [N, C] or [C], when known; -1 otherwise.
inline int64_t feature_count(const InferenceContext& ctx) {
  const ValueType* x = ctx.input_type(0);
  if (x == nullptr || !x->has_shape || x->rank() < 1 || x->rank() > 2) return -1;
  return x->dims.back().is_known() ? x->dims.back().value : -1;
}

// A dim from a count that may be unknown (-1).
inline Dim count_dim(int64_t count) { return count >= 0 ? Dim::known(count) : Dim::unknown(); }

// How many class labels a classifier has: classlabels_strings', else the
// integer list `ints_name`'s.
inline int64_t label_count(const Node& node, const std::string& ints_name) {
  if (const Attribute* s = node.attr("classlabels_strings")) return static_cast<int64_t>(s->strings.size());
  return static_cast<int64_t>(node.attr_ints(ints_name).size());
}

// A classifier's outputs: Y, the labels [N] (string when
// classlabels_strings is given, else int64), and Z, the float scores
// [N, columns] (columns -1: unknown).
inline Status infer_classifier_outputs(InferenceContext& ctx, int64_t columns) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  Dim n;
  SY_RETURN_IF_ERROR(batch_dim(ctx, n));
  const DataType label_type = ctx.node().has_attr("classlabels_strings") ? DataType::kString : DataType::kInt64;
  ctx.output_type(0) = x->has_shape ? ValueType::tensor(label_type, {n}) : ValueType::tensor(label_type);
  if (ctx.num_outputs() > 1)
    ctx.output_type(1) = x->has_shape ? ValueType::tensor(DataType::kFloat, {n, count_dim(columns)})
                                      : ValueType::tensor(DataType::kFloat);
  return ok_status();
}

// A regressor's output: float [N, targets].
inline Status infer_regressor_output(InferenceContext& ctx, int64_t targets) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  Dim n;
  SY_RETURN_IF_ERROR(batch_dim(ctx, n));
  ctx.output_type(0) = x->has_shape ? ValueType::tensor(DataType::kFloat, {n, count_dim(targets)})
                                    : ValueType::tensor(DataType::kFloat);
  return ok_status();
}

}  // namespace sy::ml_schema
