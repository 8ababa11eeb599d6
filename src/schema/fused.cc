// Schemas of the com.switchyard domain: the ops the optimizer's fusion and
// layout passes make out of standard ones. They are ops of their own, not
// standard ops with extra attributes, so that a provider without a kernel
// for them declines them ("op not implemented") instead of running the
// standard op and dropping what was fused in. save_model() writes them as
// they are, importing com.switchyard version 1; resolve() reads them back
// and checks their attributes against the lists below.
#include "schema/fused.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "schema/quantize.h"
#include "schema/schema.h"

namespace sy {
namespace {

// Input `i`, when present with a known shape, must have the output's shape
// wherever both dims are known numbers (a residual added element-wise).
Status check_same_shape_as_output(InferenceContext& ctx, size_t i, const char* what) {
  const ValueType* z = ctx.input_type(i);
  const ValueType& y = ctx.output_type(0);
  if (z == nullptr || !z->has_shape || !y.has_shape) return ok_status();
  bool conflict = z->rank() != y.rank();
  for (size_t k = 0; !conflict && k < z->rank(); ++k)
    conflict = z->dims[k].is_known() && y.dims[k].is_known() && z->dims[k].value != y.dims[k].value;
  if (conflict)
    return ctx.error(std::string(what) + " (input " + std::to_string(i) + ") " + z->shape_string() +
                     " does not have the output's shape " + y.shape_string());
  return ok_status();
}

Status infer_fused_conv(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(infer_conv(ctx));
  return check_same_shape_as_output(ctx, 3, "the residual Z");
}

Status infer_fused_attention(InferenceContext& ctx) {
  const std::string mode = ctx.node().attr_string(kMaskedScoresAttr, "add");
  if (mode != "add" && mode != "replace")
    return ctx.error(std::string(kMaskedScoresAttr) + " must be \"add\" or \"replace\"; got \"" + mode + "\"");
  return infer_attention_op(ctx);
}

Status infer_fused_matmul(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(infer_matmul(ctx));
  return check_same_shape_as_output(ctx, 3, "the residual");
}

// Dims with -1 where unknown (check_zero_point_shape's form).
std::vector<int64_t> dims_or_unknown(const ValueType& t) {
  std::vector<int64_t> dims;
  for (const Dim& d : t.dims) dims.push_back(d.is_known() ? d.value : -1);
  return dims;
}

Status infer_dynamic_quantize_matmul(InferenceContext& ctx) {
  constexpr const char* kNames[] = {"A", "B", "B_scale", "B_zero_point", "bias"};
  constexpr uint64_t kFloat = type_bit(DataType::kFloat);
  constexpr uint64_t kInt8Types = type_bit(DataType::kInt8) | type_bit(DataType::kUint8);
  const uint64_t allowed[] = {kFloat, kInt8Types, kFloat, kInt8Types, kFloat};
  for (size_t i = 0; i < 5; ++i) SY_RETURN_IF_ERROR(check_input_dtype(ctx, i, kNames[i], allowed[i]));
  for (size_t i = 0; i < 3; ++i)
    if (ctx.input_type(i) == nullptr) return ctx.error(std::string("input ") + kNames[i] + " is required");
  const ValueType& a = *ctx.input_type(0);
  const ValueType& b = *ctx.input_type(1);
  const ValueType& scale = *ctx.input_type(2);
  const ValueType* zp = ctx.input_type(3);
  const ValueType* bias = ctx.input_type(4);
  if (zp != nullptr && zp->dtype != DataType::kUndefined && b.dtype != DataType::kUndefined && zp->dtype != b.dtype)
    return ctx.error("input 3 (B_zero_point) has type " + zp->type_string() + " but input 1 (B) has " +
                     b.type_string() + "; they must match");
  // B is one matrix [K, N]: its scale and zero point are per tensor or per
  // column, and the kernel packs it once.
  if (b.has_shape && b.rank() != 2) return ctx.error("input 1 (B) must be 2-D [K, N]; got " + b.shape_string());
  if (a.has_shape && a.rank() < 1) return ctx.error("input 0 (A) must have rank >= 1; got a scalar");
  const int64_t n = b.has_shape && b.dims[1].is_known() ? b.dims[1].value : -1;
  const int64_t scales = known_count(&scale);
  if (scale.has_shape && (scale.rank() > 1 || (scales >= 0 && scales != 1 && (n < 0 || scales != n))))
    return ctx.error("input 2 (B_scale) has shape " + scale.shape_string() + "; expected a scalar or 1-D with 1" +
                     (n >= 0 ? " or " + std::to_string(n) : std::string()) + " values (per tensor or per column)");
  if (zp != nullptr && zp->has_shape && scale.has_shape) {
    const std::string problem = check_zero_point_shape(dims_or_unknown(scale), dims_or_unknown(*zp),
                                                       "input 2 (B_scale)", "input 3 (B_zero_point)");
    if (!problem.empty()) return ctx.error(problem);
  }
  if (bias != nullptr && bias->has_shape &&
      (bias->rank() != 1 || (n >= 0 && bias->dims[0].is_known() && bias->dims[0].value != n)))
    return ctx.error("input 4 (bias) has shape " + bias->shape_string() + "; expected [" +
                     (n >= 0 ? std::to_string(n) : std::string("N")) + "]");
  ValueType out = ValueType::tensor(DataType::kFloat);
  SY_RETURN_IF_ERROR(infer_matmul_shape(ctx, a, b, out));
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// FusedConv-1: Conv with its epilogue and its tensors' layouts.
//   Inputs:  X, W, B (optional), Z (optional): Conv's X, W and B, and a
//            residual of Y's exact shape. An omitted B with a Z present is
//            an empty name.
//   Output:  Y = activation(Conv(X, W, B) + Z)
//   Attributes: Conv's (auto_pad, dilations, group, kernel_shape, pads,
//            strides), and
//     activation         string  "" (none, the default), "Relu" or "Clip"
//     activation_params  floats  for "Clip": [min, max] (absent: -inf, +inf)
//     input_layout       string  X's layout: "NCHW" (the default) or
//     output_layout      string  Y's,        "NCHW16c", the channel-blocked
//     residual_layout    string  Z's         layout of providers/cpu/conv/
//                                            blocked_layout.h (2-D only)
//   A layout is how the tensor lies in memory; its shape stays [N, C, H, W].
//   Made by optimizer/conv_residual_fusion.cc (Z), conv_activation_fusion.cc
//   (activation) and conv_blocked_layout.cc (the layouts).
//
// FusedMatMul-1: MatMul with its epilogue.
//   Inputs:  A, B, bias (optional), Z (optional): MatMul's A and B (numpy
//            semantics), a vector of Y's last dimension added to every row,
//            and a residual of Y's exact shape. An omitted bias with a Z
//            present is an empty name.
//   Output:  Y = activation(alpha * MatMul(A, B) + bias + Z)
//   Attributes:
//     alpha              float   the product's scale (default 1)
//     activation         string  "" (none, the default), "Relu", "Gelu"
//                                (erf) or "GeluTanh" (Gelu's tanh
//                                approximation)
//     activation_params  floats  unused by these activations; listed so
//                                that the activation attributes are the
//                                same as FusedConv's
//   Made by optimizer/matmul_epilogue_fusion.cc.
//
// FusedAttention-1: a transformer's MatMul / [scale] / [mask] / Softmax /
// MatMul chain as one op, with the chain's answers.
//   Inputs:  Q, K, V, attn_mask (optional): as ai.onnx Attention-23's first
//            four (4-D, or 3-D with the heads attributes; a float mask).
//   Output:  Y = softmax(S) V per head, S = scale * Q K^T and the mask:
//     masked_scores  string  "add" (default): S + mask, as Add(scores,
//                            mask) did; "replace": where the mask is at or
//                            below -1e30 the score is the mask's value, as
//                            Where(cond, fill, scores) did
//     causal_fill    float   under "replace", the score of a key is_causal
//                            masks (the Where's fill); "add": -inf
//   and Attention-23's scale, is_causal, q_num_heads, kv_num_heads.
//   It differs from ai.onnx Attention where Attention's text departs from
//   the chain: a row whose every score is -inf is NaN (Attention: 0), and a
//   NaN or infinite value at a masked key reaches the result as the chain's
//   softmax and 0 * x carry it (Attention skips masked keys). The CPU kernel
//   runs Attention's fast path and recomputes, the chain's way, the rows
//   where non-finite Q, K or V values could make the two differ.
//   Made by optimizer/attention_fusion.cc.
//
// DynamicQuantizeMatMul-1: the dynamic quantization ONNX Runtime's
// quantize_dynamic writes around a MatMul with constant weights,
//   DynamicQuantizeLinear(A) -> MatMulInteger(., B, ., B_zero_point)
//   -> Cast(float) -> Mul(., Mul(a_scale, B_scale)) [-> Add(bias)]
// as one op with the chain's answers.
//   Inputs:  A        float [..., M, K]
//            B        int8 or uint8 [K, N]
//            B_scale  float, a scalar or [N] (per tensor or per column)
//            B_zero_point (optional) B's type, B_scale's shape; absent: 0
//            bias     (optional) float [N]
//   Output:  Y float [..., M, N]: A quantized as DynamicQuantizeLinear
//            does, over the whole tensor (uint8, a_scale, a_zero_point),
//            then Y[.., m, n] = float(sum_k (a_q - a_zero_point)(B - B_zero_point[n]))
//            * (a_scale * B_scale[n]) [+ bias[n]], rounded in that order.
//   No attributes. Made by optimizer/dynamic_quant_matmul_fusion.cc.
const OpSchema kFusedSchemas[] = {
    {kSwitchyardDomain, kDynamicQuantizeMatMulOp, 1, 3, 5, 1, 1, &infer_dynamic_quantize_matmul},
    {kSwitchyardDomain, kFusedAttentionOp, 1, 3, 4, 1, 1, &infer_fused_attention},
    {kSwitchyardDomain, kFusedConvOp, 1, 2, 4, 1, 1, &infer_fused_conv},
    {kSwitchyardDomain, kFusedMatMulOp, 1, 2, 4, 1, 1, &infer_fused_matmul},
};

// The attributes resolve() accepts on them, in op_versions.inc's form;
// QLinearAdd's schema is in schema/qlinear.cc.
constexpr OpVersion kFusedOpVersions[] = {
    {kSwitchyardDomain, kDynamicQuantizeMatMulOp, 1, ""},
    {kSwitchyardDomain, kFusedAttentionOp, 1,
     "causal_fill:float is_causal:int kv_num_heads:int masked_scores:string q_num_heads:int scale:float"},
    {kSwitchyardDomain, kFusedConvOp, 1,
     "activation:string activation_params:floats auto_pad:string dilations:ints group:int input_layout:string "
     "kernel_shape:ints output_layout:string pads:ints residual_layout:string strides:ints"},
    {kSwitchyardDomain, kFusedMatMulOp, 1, "activation:string activation_params:floats alpha:float"},
    {kSwitchyardDomain, kQLinearAddOp, 1, "activation:string"},
};

constexpr bool version_less(const OpVersion& a, const OpVersion& b) {
  return std::tie(a.op_type, a.since_version) < std::tie(b.op_type, b.since_version);
}
static_assert(std::is_sorted(std::begin(kFusedOpVersions), std::end(kFusedOpVersions), version_less),
              "kFusedOpVersions must be sorted by (op_type, since_version)");

}  // namespace

std::span<const OpSchema> fused_schemas() { return kFusedSchemas; }

std::span<const OpVersion> switchyard_op_versions() { return kFusedOpVersions; }

}  // namespace sy
