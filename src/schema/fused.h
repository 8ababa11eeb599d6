// The names of Switchyard's own ops, in the com.switchyard domain: the
// fused ops the optimizer makes (schemas and their documentation in
// schema/fused.cc) and the device copies the partitioner inserts. A
// provider that does not implement them declines them like any other op,
// instead of running a standard op and ignoring what was fused into it.
#pragma once

#include <span>

#include "schema/op_versions.h"

namespace sy {

inline constexpr const char* kSwitchyardDomain = "com.switchyard";
// The one version of the domain so far; the optimizer's nodes carry it.
inline constexpr int kSwitchyardOpset = 1;

inline constexpr const char* kFusedConvOp = "FusedConv";
inline constexpr const char* kFusedMatMulOp = "FusedMatMul";
inline constexpr const char* kFusedAttentionOp = "FusedAttention";
// The quantized Add (schema and documentation in schema/qlinear.cc, beside
// the standard QLinear ops).
inline constexpr const char* kQLinearAddOp = "QLinearAdd";
inline constexpr const char* kDynamicQuantizeMatMulOp = "DynamicQuantizeMatMul";
// FusedAttention's: how its mask meets the scores ("add", the default, or
// "replace"), and the score of the keys is_causal masks under "replace".
inline constexpr const char* kMaskedScoresAttr = "masked_scores";
inline constexpr const char* kCausalFillAttr = "causal_fill";

// Attributes of FusedConv and FusedMatMul (and QLinearAdd's activation).
inline constexpr const char* kActivationAttr = "activation";
inline constexpr const char* kActivationParamsAttr = "activation_params";
inline constexpr const char* kAlphaAttr = "alpha";  // FusedMatMul only
// FusedConv's layouts of X, Y and the residual: kLayoutNchw (the default)
// or kLayoutNchw16c (providers/cpu/conv/blocked_layout.h).
inline constexpr const char* kInputLayoutAttr = "input_layout";
inline constexpr const char* kOutputLayoutAttr = "output_layout";
inline constexpr const char* kResidualLayoutAttr = "residual_layout";
inline constexpr const char* kLayoutNchw = "NCHW";
inline constexpr const char* kLayoutNchw16c = "NCHW16c";

// Every com.switchyard op version with its attributes, as op_versions.inc
// lists the ONNX spec's, sorted by (op_type, since_version). The lookups
// of op_versions.h read it for the com.switchyard domain.
std::span<const OpVersion> switchyard_op_versions();

}  // namespace sy
