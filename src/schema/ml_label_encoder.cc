// Schema of LabelEncoder (ai.onnx.ml 1, 2 and 4): Y has X's shape and the
// type of the values attribute given (v1: int64 for string input, string
// for int64 input).
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

DataType values_type(const InferenceContext& ctx, DataType x) {
  const Node& node = ctx.node();
  if (ctx.opset() < 2) return x == DataType::kString ? DataType::kInt64 : DataType::kString;
  if (node.has_attr("values_strings")) return DataType::kString;
  if (node.has_attr("values_int64s")) return DataType::kInt64;
  if (node.has_attr("values_floats")) return DataType::kFloat;
  if (const Attribute* t = node.attr("values_tensor")) return t->t.dtype();
  return DataType::kUndefined;
}

Status infer_label_encoder(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  const DataType y = values_type(ctx, x->dtype);
  if (y == DataType::kUndefined) return ctx.error("one values_* attribute is required");
  ValueType out = *x;
  out.dtype = y;
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

constexpr OpSchema kMlLabelEncoderSchemas[] = {
    {"ai.onnx.ml", "LabelEncoder", 1, 1, 1, 1, 1, &infer_label_encoder},
};

}  // namespace

std::span<const OpSchema> ml_label_encoder_schemas() { return kMlLabelEncoderSchemas; }

}  // namespace sy
