// The attributes through which the optimizer's fusion passes hand a GEMM
// epilogue to the Conv and MatMul kernels (ai.onnx ops carrying extra
// sy_ attributes; save_model() writes such nodes in the com.switchyard
// domain):
//   sy_activation         string  "Relu", "Clip", "Gelu" (erf) or "GeluTanh"
//                                 (Gelu's tanh approximation), applied last
//   sy_activation_params  floats  for "Clip": [min, max] (absent: -inf, +inf)
//   sy_residual           int     1: input 3 (Y's exact shape) is added to
//                                 the result, before the activation
//   sy_bias               int     1 (MatMul only): input 2, a vector of Y's
//                                 last dimension, is added to every row
//   sy_alpha              float   (MatMul only) the product is scaled by it
//                                 first: y = act(alpha * A.B + bias + z)
// Conv: sy_activation (Relu, Clip) and sy_residual (an empty bias slot when
// it had none). MatMul: all of them. Other providers must decline a node
// carrying these attributes unless they apply them too.
#pragma once

#include <cstdint>

#include "providers/cpu/gemm/sgemm.h"
#include "providers/kernel.h"

namespace sy::cpu {

inline constexpr const char* kFusedActivationAttr = "sy_activation";
inline constexpr const char* kFusedActivationParamsAttr = "sy_activation_params";
inline constexpr const char* kFusedResidualAttr = "sy_residual";
inline constexpr const char* kFusedBiasAttr = "sy_bias";
inline constexpr const char* kFusedAlphaAttr = "sy_alpha";

// Reads sy_activation / sy_activation_params into `ep` (activation only).
Status read_fused_activation(const KernelCreateContext& ctx, GemmEpilogue& ep);

}  // namespace sy::cpu
