// Schemas of the optional ops: Optional, OptionalHasElement and
// OptionalGetElement. An optional's type is optional(X) with X a tensor or
// sequence type; from version 18 the two queries also take a plain tensor
// or sequence, which always "has" its element.
#include <string>
#include <utility>
#include <vector>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_optional(InferenceContext& ctx) {
  if (const ValueType* in = ctx.input_type(0); in != nullptr) {
    if (in->kind == ValueType::Kind::kOptional)
      return ctx.error("input 0 has type " + in->type_string() + "; an optional cannot hold an optional");
    ctx.output_type(0) = ValueType::optional(*in);
    return ok_status();
  }
  // Without an input, the type attribute says what the empty optional would hold.
  const Attribute* type = ctx.node().attr("type");
  if (type == nullptr) return ctx.error("has no input, so attribute 'type' is required");
  ValueType element;
  if (!parse_type_string(type->s, element)) return ctx.error("attribute 'type' is '" + type->s + "', not a type this op takes");
  if (element.kind == ValueType::Kind::kOptional)
    return ctx.error("attribute 'type' is " + type->s + "; an optional cannot hold an optional");
  ctx.output_type(0) = ValueType::optional(std::move(element));
  return ok_status();
}

Status infer_optional_has_element(InferenceContext& ctx) {
  if (ctx.opset() < 18 && !ctx.has_input(0)) return ctx.error("input 0 is required before version 18");
  ctx.output_type(0) = ValueType::tensor(DataType::kBool, std::vector<Dim>{});
  return ok_status();
}

Status infer_optional_get_element(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  if (in->kind == ValueType::Kind::kOptional) {
    ctx.output_type(0) = in->element != nullptr ? *in->element : ValueType{};
    return ok_status();
  }
  // Version 18 passes a tensor or sequence through (version 15's type
  // constraint refuses them before inference runs).
  ctx.output_type(0) = *in;
  return ok_status();
}

constexpr OpSchema kOptionalSchemas[] = {
    {"", "Optional", 15, 0, 1, 1, 1, &infer_optional},
    {"", "OptionalHasElement", 15, 1, 1, 1, 1, &infer_optional_has_element},
    {"", "OptionalHasElement", 18, 0, 1, 1, 1, &infer_optional_has_element},  // input optional; takes tensors, sequences
    {"", "OptionalGetElement", 15, 1, 1, 1, 1, &infer_optional_get_element},
    {"", "OptionalGetElement", 18, 1, 1, 1, 1, &infer_optional_get_element},  // takes tensors, sequences
};

}  // namespace

std::span<const OpSchema> optional_schemas() { return kOptionalSchemas; }

}  // namespace sy
