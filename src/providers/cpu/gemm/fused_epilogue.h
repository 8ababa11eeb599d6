// How the CPU's Conv and MatMul kernels read the epilogue of the fused ops
// FusedConv and FusedMatMul (com.switchyard, schema/fused.cc, made by the
// optimizer's fusion passes), which they apply as the GEMM stores its
// result: y = activation(alpha * product + bias + residual).
//   activation         "Relu", "Clip", "Gelu" (erf) or "GeluTanh" (Gelu's
//                      tanh approximation), applied last; "" for none
//   activation_params  for "Clip": [min, max] (absent: -inf, +inf)
// The residual is input 3, the bias (FusedMatMul) input 2, alpha
// (FusedMatMul) an attribute. The plain ai.onnx Conv and MatMul have none of
// these: their kernels read them only from the fused ops.
#pragma once

#include <cstdint>

#include "providers/cpu/gemm/sgemm.h"
#include "providers/kernel.h"

namespace sy::cpu {

// Whether the node being created is one of the com.switchyard fused ops,
// whose epilogue attributes the kernel reads.
bool is_fused_op(const KernelCreateContext& ctx);

// Reads activation / activation_params into `ep` (activation only).
Status read_fused_activation(const KernelCreateContext& ctx, GemmEpilogue& ep);

}  // namespace sy::cpu
