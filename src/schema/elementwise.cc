// Schemas of the element-wise family: unary math and activations, binary
// arithmetic with broadcasting, comparisons and logic, bitwise ops, the
// variadic Max/Min/Sum/Mean, PRelu, Where, Clip, Cast and CastLike.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

std::string type_name(DataType t) { return std::string(data_type_name(t)); }

// Inputs i and j must have one element type (when both are known).
Status check_same_dtype(const InferenceContext& ctx, size_t i, size_t j) {
  const ValueType* a = ctx.input_type(i);
  const ValueType* b = ctx.input_type(j);
  if (a == nullptr || b == nullptr || a->dtype == DataType::kUndefined || b->dtype == DataType::kUndefined ||
      a->dtype == b->dtype)
    return ok_status();
  return ctx.error("input " + std::to_string(j) + " has type " + type_name(b->dtype) + ", expected " +
                   type_name(a->dtype) + " (the type of input " + std::to_string(i) + ")");
}

Status check_dtype_is(const InferenceContext& ctx, size_t i, DataType expected) {
  const ValueType* t = ctx.input_type(i);
  if (t == nullptr || t->dtype == DataType::kUndefined || t->dtype == expected) return ok_status();
  return ctx.error("input " + std::to_string(i) + " has type " + type_name(t->dtype) + ", expected " +
                   type_name(expected));
}

Status infer_unary_bool(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(infer_same_as_input0(ctx));
  ctx.output_type(0).dtype = DataType::kBool;
  return ok_status();
}

Status infer_not(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(check_dtype_is(ctx, 0, DataType::kBool));
  return infer_same_as_input0(ctx);
}

Status infer_gelu(InferenceContext& ctx) {
  const std::string approximate = ctx.node().attr_string("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return ctx.error("attribute approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
  return infer_same_as_input0(ctx);
}

// Every present input has input 0's type; output broadcast.
Status infer_same_type_broadcast(InferenceContext& ctx) {
  for (size_t i = 1; i < ctx.num_inputs(); ++i) SY_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
  return infer_broadcast(ctx);
}

Status infer_compare(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  return infer_broadcast(ctx, DataType::kBool);
}

Status infer_logic(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(check_dtype_is(ctx, 0, DataType::kBool));
  SY_RETURN_IF_ERROR(check_dtype_is(ctx, 1, DataType::kBool));
  return infer_broadcast(ctx, DataType::kBool);
}

Status infer_pow(InferenceContext& ctx) { return infer_broadcast(ctx); }

Status infer_mod(InferenceContext& ctx) {
  const int64_t fmod = ctx.node().attr_int("fmod", 0);
  if (fmod != 0 && fmod != 1) return ctx.error("attribute fmod must be 0 or 1, got " + std::to_string(fmod));
  return infer_same_type_broadcast(ctx);
}

Status infer_bitshift(InferenceContext& ctx) {
  const std::string direction = ctx.node().attr_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return ctx.error("attribute direction must be \"LEFT\" or \"RIGHT\", got \"" + direction + "\"");
  return infer_same_type_broadcast(ctx);
}

// PRelu: the slope broadcasts to X, so Y is X.
Status infer_prelu(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(check_same_dtype(ctx, 0, 1));
  const ValueType* x = ctx.input_type(0);
  const ValueType* slope = ctx.input_type(1);
  if (x != nullptr && slope != nullptr && x->has_shape && slope->has_shape && slope->rank() > x->rank())
    return ctx.error("slope has rank " + std::to_string(slope->rank()) + ", more than X's rank " +
                     std::to_string(x->rank()));
  return infer_same_as_input0(ctx);
}

Status infer_where(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(check_dtype_is(ctx, 0, DataType::kBool));
  SY_RETURN_IF_ERROR(check_same_dtype(ctx, 1, 2));
  SY_RETURN_IF_ERROR(infer_broadcast(ctx));
  if (const ValueType* x = ctx.input_type(1)) ctx.output_type(0).dtype = x->dtype;
  return ok_status();
}

Status infer_clip(InferenceContext& ctx) {
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    SY_RETURN_IF_ERROR(check_same_dtype(ctx, 0, i));
    const ValueType* b = ctx.input_type(i);
    if (b != nullptr && b->has_shape && b->rank() > 1)
      return ctx.error(std::string(i == 1 ? "min" : "max") + " must be a scalar, got rank " +
                       std::to_string(b->rank()));
  }
  return infer_same_as_input0(ctx);
}

Status infer_cast(InferenceContext& ctx) {
  const Attribute* to = ctx.node().attr("to");
  if (to == nullptr) return ctx.error("attribute 'to' is required");
  if (!is_valid_data_type(static_cast<int32_t>(to->i)))
    return ctx.error("attribute 'to' is " + std::to_string(to->i) + ", not a valid data type");
  SY_RETURN_IF_ERROR(infer_same_as_input0(ctx));
  ctx.output_type(0).dtype = static_cast<DataType>(to->i);
  return ok_status();
}

Status infer_cast_like(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(infer_same_as_input0(ctx));
  const ValueType* like = ctx.input_type(1);
  if (like == nullptr) return ctx.error("input 1 (target_type) is required");
  ctx.output_type(0).dtype = like->dtype;
  return ok_status();
}

constexpr OpSchema unary(std::string_view op, int since, InferFn infer = &infer_same_as_input0) {
  return {"", op, since, 1, 1, 1, 1, infer};
}
constexpr OpSchema binary(std::string_view op, int since, InferFn infer = &infer_same_type_broadcast) {
  return {"", op, since, 2, 2, 1, 1, infer};
}
constexpr OpSchema variadic(std::string_view op, int since) {
  return {"", op, since, 1, -1, 1, 1, &infer_same_type_broadcast};
}

constexpr OpSchema kElementwiseSchemas[] = {
    // Unary math and activations: Y is X.
    unary("Abs", 6), unary("Neg", 6), unary("Reciprocal", 6), unary("Floor", 6), unary("Ceil", 6),
    unary("Round", 11), unary("Sqrt", 6), unary("Exp", 6), unary("Log", 6), unary("Sin", 7), unary("Cos", 7),
    unary("Tan", 7), unary("Asin", 7), unary("Acos", 7), unary("Atan", 7), unary("Sinh", 9), unary("Cosh", 9),
    unary("Asinh", 9), unary("Acosh", 9), unary("Atanh", 9), unary("Sign", 9), unary("Erf", 9), unary("Tanh", 6),
    unary("Sigmoid", 6), unary("Relu", 6), unary("LeakyRelu", 6), unary("Elu", 6), unary("Selu", 6),
    unary("Celu", 12), unary("ThresholdedRelu", 10), unary("HardSigmoid", 6), unary("HardSwish", 14),
    unary("Softplus", 1), unary("Softsign", 1), unary("Mish", 18), unary("Gelu", 20, &infer_gelu),
    unary("Shrink", 9), unary("BitwiseNot", 18), unary("Not", 1, &infer_not),
    unary("IsNaN", 9, &infer_unary_bool), unary("IsInf", 10, &infer_unary_bool),
    // Clip: bounds are attributes until opset 11, optional inputs after.
    {"", "Clip", 6, 1, 1, 1, 1, &infer_clip},
    {"", "Clip", 11, 1, 3, 1, 1, &infer_clip},
    // Binary, multidirectional broadcasting.
    binary("Add", 7), binary("Sub", 7), binary("Mul", 7), binary("Div", 7),
    binary("Pow", 7, &infer_pow), binary("Mod", 10, &infer_mod),
    binary("Equal", 7, &infer_compare), binary("Less", 7, &infer_compare), binary("Greater", 7, &infer_compare),
    binary("LessOrEqual", 12, &infer_compare), binary("GreaterOrEqual", 12, &infer_compare),
    binary("And", 7, &infer_logic), binary("Or", 7, &infer_logic), binary("Xor", 7, &infer_logic),
    binary("BitShift", 11, &infer_bitshift), binary("BitwiseAnd", 18), binary("BitwiseOr", 18),
    binary("BitwiseXor", 18), binary("PRelu", 7, &infer_prelu),
    variadic("Max", 6), variadic("Min", 6), variadic("Sum", 6), variadic("Mean", 6),
    {"", "Where", 9, 3, 3, 1, 1, &infer_where},
    // Casts.
    {"", "Cast", 6, 1, 1, 1, 1, &infer_cast},
    {"", "CastLike", 15, 2, 2, 1, 1, &infer_cast_like},
};

}  // namespace

std::span<const OpSchema> elementwise_schemas() { return kElementwiseSchemas; }

}  // namespace sy
