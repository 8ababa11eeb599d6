// The CPU provider's kernel tables, one per op family file, collected in
// cpu_provider.cc. To add a family: write src/providers/cpu/<family>.cc with
// its table function, declare it here, list it in cpu_provider.cc.
#pragma once

#include <span>

#include "providers/kernel.h"

namespace sy::cpu {

std::span<const KernelDef> elementwise_kernels();  // unary/binary math, activations, compare, logic, Where, Clip
std::span<const KernelDef> cast_kernels();         // Cast
std::span<const KernelDef> conv_kernels();         // Conv, FusedConv
std::span<const KernelDef> pool_kernels();         // MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool
std::span<const KernelDef> normalization_kernels();  // BatchNormalization, LayerNormalization
std::span<const KernelDef> softmax_kernels();      // Softmax, LogSoftmax
std::span<const KernelDef> matmul_kernels();       // MatMul, Gemm, FusedMatMul
std::span<const KernelDef> reduce_kernels();       // ReduceMean, ReduceSum, ...
std::span<const KernelDef> shape_kernels();        // shape_ops.cc: Reshape, Flatten, Squeeze, Unsqueeze, Shape, Identity, Size
std::span<const KernelDef> concat_split_kernels(); // Concat, Split
std::span<const KernelDef> slice_kernels();        // Slice
std::span<const KernelDef> gather_kernels();       // Gather
std::span<const KernelDef> transpose_kernels();    // Transpose
std::span<const KernelDef> expand_kernels();       // Expand
std::span<const KernelDef> generator_kernels();    // Constant, ConstantOfShape, Range
std::span<const KernelDef> trilu_kernels();        // Trilu
std::span<const KernelDef> pad_kernels();  // pad.cc: Pad, CenterCropPad
std::span<const KernelDef> scatter_kernels();  // scatter.cc: Scatter, ScatterElements, ScatterND, TensorScatter
std::span<const KernelDef> indexing_kernels();  // indexing.cc: OneHot, Compress, NonZero, ReverseSequence, BitCast
std::span<const KernelDef> space_depth_kernels();  // space_depth.cc: DepthToSpace, SpaceToDepth
std::span<const KernelDef> resize_kernels();  // resize.cc: Resize, Upsample
std::span<const KernelDef> einsum_kernels();  // einsum.cc: Einsum
std::span<const KernelDef> linalg_kernels();  // linalg.cc: Det, MatMulInteger
std::span<const KernelDef> topk_kernels();  // topk.cc: TopK
std::span<const KernelDef> unique_kernels();  // unique.cc: Unique
std::span<const KernelDef> cumulative_kernels();  // cumulative.cc: CumSum, CumProd
std::span<const KernelDef> dropout_kernels();  // dropout.cc: Dropout, Swish
std::span<const KernelDef> rnn_kernels();  // rnn.cc: LSTM, GRU, RNN
std::span<const KernelDef> attention_kernels();  // attention.cc: Attention

}  // namespace sy::cpu
