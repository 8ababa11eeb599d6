// Schemas of the integer matrix ops: MatMulInteger, ConvInteger,
// QLinearMatMul and QLinearConv; and com.switchyard QLinearAdd, the
// quantized residual Add the QDQ fusion makes (documented below).
//
// Besides types and shapes, inference checks what it can see of the
// quantization parameters: a zero point has its tensor's type, a scale or
// zero point has as many values as its granularity allows, and a constant
// scale is not zero. The kernels check the same at run time for values
// that only arrive then.
#include <cmath>
#include <cstdint>
#include <string>

#include "schema/fused.h"
#include "schema/schema.h"

namespace sy {
namespace {

constexpr uint64_t kInt8Types = type_bit(DataType::kInt8) | type_bit(DataType::kUint8);

// Input `zp` (when present with a known type) has input `x`'s type.
Status check_zero_point_type(const InferenceContext& ctx, size_t zp, const char* zp_name, size_t x,
                             const char* x_name) {
  const ValueType* z = ctx.input_type(zp);
  const ValueType* t = ctx.input_type(x);
  if (z == nullptr || t == nullptr || z->dtype == DataType::kUndefined || t->dtype == DataType::kUndefined ||
      z->dtype == t->dtype)
    return ok_status();
  return ctx.error("input " + std::to_string(zp) + " (" + zp_name + ") has type " + z->type_string() + " but input " +
                   std::to_string(x) + " (" + x_name + ") has " + t->type_string() + "; they must match");
}

// A per-tensor parameter (scale or zero point), or, when `channels` > 0,
// one per channel too: a scalar or 1-D tensor of 1 or `channels` values.
Status check_parameter_shape(const InferenceContext& ctx, size_t i, const char* name, int64_t channels) {
  const ValueType* t = ctx.input_type(i);
  const int64_t n = known_count(t);
  if (n < 0) return ok_status();
  const bool per_channel = channels > 0;
  if (t->rank() <= 1 && (n == 1 || (per_channel && n == channels))) return ok_status();
  return ctx.error("input " + std::to_string(i) + " (" + name + ") has shape " + t->shape_string() + "; expected " +
                   (per_channel ? "a scalar or a 1-D tensor of 1 or " + std::to_string(channels) + " values"
                                : std::string("a scalar or a 1-element 1-D tensor")));
}

// A constant scale holds no zero (the requantization divides by y_scale and
// a zero x or w scale zeroes every output).
Status check_constant_scale(const InferenceContext& ctx, size_t i, const char* name) {
  const Tensor* t = ctx.input_constant(i);
  if (t == nullptr || t->dtype() != DataType::kFloat) return ok_status();
  const float* v = t->data<float>();
  for (int64_t k = 0; k < t->num_elements(); ++k)
    if (v[k] == 0.0f || !std::isfinite(v[k]))
      return ctx.error("input " + std::to_string(i) + " (" + name + ") holds " + std::to_string(v[k]) +
                       " at index " + std::to_string(k) + "; scales must be finite and non-zero");
  return ok_status();
}

// ---- MatMulInteger, QLinearMatMul -----------------------------------------------------------

Status infer_matmul_integer(InferenceContext& ctx) {
  const ValueType* a = ctx.input_type(0);
  const ValueType* b = ctx.input_type(1);
  if (a == nullptr || b == nullptr) return ctx.error("inputs A and B are required");
  const char* const names[] = {"A", "B", "a_zero_point", "b_zero_point"};
  for (size_t i = 0; i < 4; ++i) SY_RETURN_IF_ERROR(check_input_dtype(ctx, i, names[i], kInt8Types));
  SY_RETURN_IF_ERROR(check_zero_point_type(ctx, 2, "a_zero_point", 0, "A"));
  SY_RETURN_IF_ERROR(check_zero_point_type(ctx, 3, "b_zero_point", 1, "B"));
  ValueType out = ValueType::tensor(DataType::kInt32);
  SY_RETURN_IF_ERROR(infer_matmul_shape(ctx, *a, *b, out));
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

constexpr const char* kQLinearMatMulNames[] = {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point",
                                               "y_scale", "y_zero_point"};

Status infer_qlinear_matmul(InferenceContext& ctx) {
  for (size_t i = 0; i < 8; ++i)
    if (ctx.input_type(i) == nullptr) return ctx.error(std::string("input ") + kQLinearMatMulNames[i] + " is required");
  const uint64_t scale_types = ctx.opset() >= 21 ? type_bit(DataType::kFloat) | type_bit(DataType::kFloat16) |
                                                       type_bit(DataType::kBfloat16)
                                                 : type_bit(DataType::kFloat);
  for (size_t i : {1, 4, 6}) {
    SY_RETURN_IF_ERROR(check_input_dtype(ctx, i, kQLinearMatMulNames[i], scale_types));
    SY_RETURN_IF_ERROR(check_constant_scale(ctx, i, kQLinearMatMulNames[i]));
  }
  const DataType ts = ctx.input_type(1)->dtype;
  for (size_t i : {4, 6}) {
    const DataType t = ctx.input_type(i)->dtype;
    if (ts != DataType::kUndefined && t != DataType::kUndefined && t != ts)
      return ctx.error(std::string("input ") + std::to_string(i) + " (" + kQLinearMatMulNames[i] + ") has type " +
                       ctx.input_type(i)->type_string() + " but a_scale has " + ctx.input_type(1)->type_string() +
                       "; the scales share one type");
  }
  SY_RETURN_IF_ERROR(check_zero_point_type(ctx, 2, "a_zero_point", 0, "a"));
  SY_RETURN_IF_ERROR(check_zero_point_type(ctx, 5, "b_zero_point", 3, "b"));
  SY_RETURN_IF_ERROR(check_parameter_shape(ctx, 6, "y_scale", 0));
  SY_RETURN_IF_ERROR(check_parameter_shape(ctx, 7, "y_zero_point", 0));
  ValueType out = ValueType::tensor(ctx.input_type(7)->dtype);
  SY_RETURN_IF_ERROR(infer_matmul_shape(ctx, *ctx.input_type(0), *ctx.input_type(3), out));
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- ConvInteger, QLinearConv --------------------------------------------------------------

// W's output channels M when known, else 0.
int64_t output_channels(const ValueType* w) {
  return w != nullptr && w->has_shape && w->rank() >= 1 && w->dims[0].is_known() ? w->dims[0].value : 0;
}

Status infer_conv_integer(InferenceContext& ctx) {
  const char* const names[] = {"x", "w", "x_zero_point", "w_zero_point"};
  for (size_t i = 0; i < 4; ++i) SY_RETURN_IF_ERROR(check_input_dtype(ctx, i, names[i], kInt8Types));
  SY_RETURN_IF_ERROR(check_zero_point_type(ctx, 2, "x_zero_point", 0, "x"));
  SY_RETURN_IF_ERROR(check_zero_point_type(ctx, 3, "w_zero_point", 1, "w"));
  SY_RETURN_IF_ERROR(check_parameter_shape(ctx, 2, "x_zero_point", 0));
  SY_RETURN_IF_ERROR(check_parameter_shape(ctx, 3, "w_zero_point", output_channels(ctx.input_type(1))));
  return infer_conv_output(ctx, 1, DataType::kInt32);
}

constexpr const char* kQLinearConvNames[] = {"x", "x_scale", "x_zero_point", "w", "w_scale",
                                             "w_zero_point", "y_scale", "y_zero_point", "B"};

Status infer_qlinear_conv(InferenceContext& ctx) {
  for (size_t i = 0; i < 8; ++i)
    if (ctx.input_type(i) == nullptr) return ctx.error(std::string("input ") + kQLinearConvNames[i] + " is required");
  for (size_t i : {0, 2, 3, 5, 7}) SY_RETURN_IF_ERROR(check_input_dtype(ctx, i, kQLinearConvNames[i], kInt8Types));
  for (size_t i : {1, 4, 6}) {
    SY_RETURN_IF_ERROR(check_input_dtype(ctx, i, kQLinearConvNames[i], type_bit(DataType::kFloat)));
    SY_RETURN_IF_ERROR(check_constant_scale(ctx, i, kQLinearConvNames[i]));
  }
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 8, "B", type_bit(DataType::kInt32)));
  SY_RETURN_IF_ERROR(check_zero_point_type(ctx, 2, "x_zero_point", 0, "x"));
  SY_RETURN_IF_ERROR(check_zero_point_type(ctx, 5, "w_zero_point", 3, "w"));
  const int64_t m = output_channels(ctx.input_type(3));
  for (size_t i : {1, 2, 6, 7}) SY_RETURN_IF_ERROR(check_parameter_shape(ctx, i, kQLinearConvNames[i], 0));
  for (size_t i : {4, 5}) SY_RETURN_IF_ERROR(check_parameter_shape(ctx, i, kQLinearConvNames[i], m));
  const ValueType* bias = ctx.input_type(8);
  const int64_t nb = known_count(bias);
  if (nb >= 0 && m > 0 && (bias->rank() != 1 || nb != m))
    return ctx.error("input 8 (B) has shape " + bias->shape_string() + "; expected [" + std::to_string(m) + "]");
  return infer_conv_output(ctx, 3, ctx.input_type(7)->dtype);
}

// ---- com.switchyard QLinearAdd ------------------------------------------------------------

// QLinearAdd-1 (com.switchyard): the Add of two quantized tensors, what
//   DequantizeLinear(A) + DequantizeLinear(B) -> [Relu] -> QuantizeLinear
// computes, without the float tensors in between.
//   Inputs:  A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale,
//            C_zero_point. A, B and the zero points are one type T (int8 or
//            uint8); the scales are float; every scale and zero point is
//            per tensor (a scalar or one value in a 1-D tensor).
//   Output:  C of type T and A's and B's numpy broadcast shape,
//            C = saturate(round_half_even((A_scale * (A - A_zero_point) +
//                B_scale * (B - B_zero_point)) / C_scale) + C_zero_point)
//            with each product, the sum and the quotient rounded to float
//            as the unfused graph rounds them, so that the two agree bit
//            for bit.
//   Attributes:
//     activation  string  "" (none, the default) or "Relu": C is then at
//                         least C_zero_point. That is exactly what Relu
//                         before QuantizeLinear does: quantization is
//                         monotone and maps 0 to C_zero_point.
//   Made by optimizer/qdq_fusion.cc. (com.microsoft has an op of the same
//   name and inputs; this one is ours so that its rounding is ours to say.)
constexpr const char* kQLinearAddNames[] = {"A", "A_scale", "A_zero_point", "B", "B_scale", "B_zero_point",
                                            "C_scale", "C_zero_point"};

Status infer_qlinear_add(InferenceContext& ctx) {
  for (size_t i = 0; i < 8; ++i)
    if (ctx.input_type(i) == nullptr) return ctx.error(std::string("input ") + kQLinearAddNames[i] + " is required");
  const std::string activation = ctx.node().attr_string(kActivationAttr, "");
  if (!activation.empty() && activation != "Relu")
    return ctx.error(std::string(kActivationAttr) + " must be \"\" or \"Relu\"; got \"" + activation + "\"");
  for (size_t i : {0, 2, 3, 5, 7}) SY_RETURN_IF_ERROR(check_input_dtype(ctx, i, kQLinearAddNames[i], kInt8Types));
  for (size_t i : {1, 4, 6}) {
    SY_RETURN_IF_ERROR(check_input_dtype(ctx, i, kQLinearAddNames[i], type_bit(DataType::kFloat)));
    SY_RETURN_IF_ERROR(check_constant_scale(ctx, i, kQLinearAddNames[i]));
  }
  // One T: the zero points, B and C (through its zero point) all have A's type.
  for (size_t i : {2, 3, 5, 7}) SY_RETURN_IF_ERROR(check_zero_point_type(ctx, i, kQLinearAddNames[i], 0, "A"));
  for (size_t i : {1, 2, 4, 5, 6, 7}) SY_RETURN_IF_ERROR(check_parameter_shape(ctx, i, kQLinearAddNames[i], 0));
  const ValueType* ab[] = {ctx.input_type(0), ctx.input_type(3)};
  SY_ASSIGN_OR_RETURN(ValueType out, broadcast_types(ctx, ab));
  out.dtype = ctx.input_type(7)->dtype;
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

const OpSchema kQLinearSchemas[] = {
    {"", "ConvInteger", 10, 2, 4, 1, 1, &infer_conv_integer},
    {"", "MatMulInteger", 10, 2, 4, 1, 1, &infer_matmul_integer},
    {"", "QLinearConv", 10, 8, 9, 1, 1, &infer_qlinear_conv},
    {"", "QLinearMatMul", 10, 8, 8, 1, 1, &infer_qlinear_matmul},
    {"", "QLinearMatMul", 21, 8, 8, 1, 1, &infer_qlinear_matmul},
    {kSwitchyardDomain, kQLinearAddOp, 1, 8, 8, 1, 1, &infer_qlinear_add},
};

}  // namespace

std::span<const OpSchema> qlinear_schemas() { return kQLinearSchemas; }

}  // namespace sy
