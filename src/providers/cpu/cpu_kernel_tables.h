// The CPU provider's kernel tables, one per op family file, collected in
// cpu_provider.cc. To add a family: write src/providers/cpu/<family>.cc with
// its table function, declare it here, list it in cpu_provider.cc.
#pragma once

#include <span>

#include "providers/kernel.h"

namespace sy::cpu {

std::span<const KernelDef> elementwise_kernels();  // unary/binary math, activations, compare, logic, Where, Clip
std::span<const KernelDef> cast_kernels();         // Cast
std::span<const KernelDef> conv_kernels();         // Conv
std::span<const KernelDef> pool_kernels();         // MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool
std::span<const KernelDef> normalization_kernels();  // BatchNormalization, LayerNormalization
std::span<const KernelDef> softmax_kernels();      // Softmax, LogSoftmax
std::span<const KernelDef> matmul_kernels();       // MatMul, Gemm
std::span<const KernelDef> reduce_kernels();       // ReduceMean, ReduceSum, ...
std::span<const KernelDef> shape_kernels();        // shape_ops.cc: Reshape, Flatten, Squeeze, Unsqueeze, Shape, Identity, Size
std::span<const KernelDef> concat_split_kernels(); // Concat, Split
std::span<const KernelDef> slice_kernels();        // Slice
std::span<const KernelDef> gather_kernels();       // Gather
std::span<const KernelDef> transpose_kernels();    // Transpose
std::span<const KernelDef> expand_kernels();       // Expand
std::span<const KernelDef> generator_kernels();    // Constant, ConstantOfShape, Range
std::span<const KernelDef> trilu_kernels();        // Trilu

}  // namespace sy::cpu
