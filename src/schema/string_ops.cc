// Schemas of StringNormalizer, StringSplit, StringConcat and RegexFullMatch.
#include <string>
#include <utility>

#include "schema/schema.h"

namespace sy {
namespace {

// StringNormalizer drops stop words, so the count of strings along the
// last axis depends on the data. [C] and [1, C] are what the spec accepts;
// [B, C] with B > 1 keeps its shape, as ONNX's reference does (it drops
// nothing then, only blanks the stop words).
Status infer_string_normalizer(InferenceContext& ctx) {
  const std::string action = ctx.node().attr_string("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return ctx.error("case_change_action must be LOWER, UPPER or NONE, got '" + action + "'");
  const int64_t sensitive = ctx.node().attr_int("is_case_sensitive", 0);
  if (sensitive != 0 && sensitive != 1)
    return ctx.error("is_case_sensitive must be 0 or 1, got " + std::to_string(sensitive));
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  ValueType y = ValueType::tensor(DataType::kString);
  if (x->has_shape) {
    if (x->rank() == 1) {
      y = ValueType::tensor(DataType::kString, {Dim::unknown()});
    } else if (x->rank() == 2) {
      const Dim& rows = x->dims[0];
      const bool keeps_shape = rows.is_known() && rows.value != 1;
      y = ValueType::tensor(DataType::kString, {rows, keeps_shape ? x->dims[1] : Dim::unknown()});
    } else {
      return ctx.error("input 0 (X) must have shape [C] or [1, C], got " + x->shape_string());
    }
  }
  ctx.output_type(0) = std::move(y);
  return ok_status();
}

// Y has one more axis than X, as long as the most pieces any string splits
// into; Z, the counts, has X's shape.
Status infer_string_split(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  ValueType y = ValueType::tensor(DataType::kString);
  ValueType z = ValueType::tensor(DataType::kInt64);
  if (x->has_shape) {
    z.has_shape = true;
    z.dims = x->dims;
    y.has_shape = true;
    y.dims = x->dims;
    y.dims.push_back(Dim::unknown());
  }
  ctx.output_type(0) = std::move(y);
  ctx.output_type(1) = std::move(z);
  return ok_status();
}

Status infer_regex_full_match(InferenceContext& ctx) {
  const Attribute* pattern = ctx.node().attr("pattern");
  if (pattern == nullptr || pattern->type != AttributeType::kString)
    return ctx.error("attribute 'pattern' (a string) is required");
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  ValueType y = *x;
  y.dtype = DataType::kBool;
  ctx.output_type(0) = std::move(y);
  return ok_status();
}

Status infer_string_concat(InferenceContext& ctx) { return infer_broadcast(ctx, DataType::kString); }

constexpr OpSchema kStringOpsSchemas[] = {
    {"", "StringNormalizer", 10, 1, 1, 1, 1, &infer_string_normalizer},
    {"", "StringSplit", 20, 1, 1, 2, 2, &infer_string_split},
    {"", "StringConcat", 20, 2, 2, 1, 1, &infer_string_concat},
    {"", "RegexFullMatch", 20, 1, 1, 1, 1, &infer_regex_full_match},
};

}  // namespace

std::span<const OpSchema> string_ops_schemas() { return kStringOpsSchemas; }

}  // namespace sy
