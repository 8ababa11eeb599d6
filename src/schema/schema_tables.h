// One table of schemas per op family, each defined beside its inference
// functions in src/schema/<family>.cc and collected in schema.cc. To add a
// family: write the file, declare its table here, list it in schema.cc.
#pragma once

#include <span>

#include "schema/schema.h"

namespace sy {

std::span<const OpSchema> elementwise_schemas();    // schema/elementwise.cc: unary/binary math, compare, logic, Where, Clip, Cast
std::span<const OpSchema> normalization_schemas();  // schema/normalization.cc: BatchNormalization, LayerNormalization, Softmax
std::span<const OpSchema> reduce_schemas();         // schema/reduce.cc: Reduce*
std::span<const OpSchema> nn_schemas();             // schema/nn.cc: Conv, pooling, Attention
std::span<const OpSchema> matmul_schemas();         // schema/matmul.cc: MatMul, Gemm
std::span<const OpSchema> tensor_schemas();         // schema/tensor.cc: shape and data movement ops
std::span<const OpSchema> indexing_schemas();  // schema/indexing.cc: Pad, CenterCropPad, Scatter*, TensorScatter, OneHot, Compress, NonZero, ReverseSequence, BitCast, DepthToSpace, SpaceToDepth
std::span<const OpSchema> image_schemas();  // schema/image.cc: Resize, Upsample, Einsum, Det, MatMulInteger
std::span<const OpSchema> sorting_schemas();  // schema/sorting.cc: TopK, Unique, CumSum, CumProd, Dropout, Swish
std::span<const OpSchema> rnn_schemas();  // schema/rnn.cc: LSTM, GRU, RNN
std::span<const OpSchema> fused_schemas();  // schema/fused.cc: com.switchyard's FusedConv, FusedMatMul, FusedAttention

// Inference functions the fused ops reuse from the standard ones they extend.
Status infer_conv(InferenceContext& ctx);    // schema/nn.cc
Status infer_matmul(InferenceContext& ctx);  // schema/matmul.cc
Status infer_attention_op(InferenceContext& ctx);  // schema/nn.cc: Attention's

}  // namespace sy
