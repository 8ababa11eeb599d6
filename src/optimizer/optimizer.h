// Graph passes, chosen by optimization level (ONNX Runtime's names). The
// generic ones, run on the whole graph before placement:
//   basic:    constant folding, identity and dead-node elimination, and
//             dropping the constants nothing reads any more
//   extended: basic, then Conv + BatchNormalization, the GELU chains into
//             Gelu, decomposed layer norms into LayerNormalization
// After placement each provider gets the rewrites its kernels implement
// (provider_rewrites.h): Conv + residual Add and Conv + Relu / Clip into
// FusedConv, scaled dot-product attention into FusedAttention, MatMul
// epilogues into FusedMatMul, dynamically quantized MatMuls into
// DynamicQuantizeMatMul (extended), the channel-blocked Conv layout
// (all); then, whole-graph again, the level-all layout clean-ups
// (Transpose pairs, Reshape chains).
// Each pass lives in its own file and can be run alone in tests; each adds
// what it did to its counter.
#pragma once

#include "model/graph.h"
#include "switchyard/session.h"
#include "switchyard/status.h"

namespace sy {

struct PassStats {
  int folded = 0;
  int identities_removed = 0;
  int dead_removed = 0;
  int constants_dropped = 0;
  int conv_bn_fused = 0;
  int conv_residuals_fused = 0;
  int conv_activations_fused = 0;
  int gelus_fused = 0;
  int layer_norms_fused = 0;
  int matmul_epilogues_fused = 0;
  int attentions_fused = 0;
  int transposes_removed = 0;
  int reshapes_removed = 0;
  int conv_layouts_blocked = 0;
  int qdq_fused = 0;
  int dynamic_quant_matmuls_fused = 0;
};

// The generic passes of `level`; compacts the graph.
Status optimize(Graph& graph, OptimizationLevel level, PassStats* stats = nullptr);

// ---- basic

// Runs nodes whose inputs are all constant on the CPU and replaces their
// outputs with the results. Shape of a statically shaped value folds too.
// A DequantizeLinear read by a Conv, MatMul or Gemm stays, for the QDQ
// fusion after placement (fuse_qdq); fold_constant_dequantize folds it
// then, if it is still there.
Status fold_constants(Graph& graph, int* folded);
// fold_constants() on the DequantizeLinear nodes only.
Status fold_constant_dequantize(Graph& graph, int* folded);
// Bypasses Identity (and inference-mode Dropout) nodes.
Status eliminate_identities(Graph& graph, int* removed);
// Removes nodes whose outputs nobody uses.
Status eliminate_dead_nodes(Graph& graph, int* removed);
// Erases constants that no live node reads and that are not graph outputs.
Status drop_unused_constants(Graph& graph, int* dropped);

// ---- extended

// Folds an inference BatchNormalization into the Conv before it (constant
// float weights, the Conv output read by the BN only) as new weights and bias.
Status fuse_conv_batchnorm(Graph& graph, int* fused);
// Folds Add(Conv(x), z), z of the Conv output's exact shape, into the Conv,
// which becomes a FusedConv (schema/fused.cc) with z as its input 3. A
// provider rewrite, like every pass that makes a com.switchyard op.
Status fuse_conv_residual(Graph& graph, int* fused);
// DequantizeLinear -> Conv / MatMul / Gemm [-> Relu | Clip] ->
// QuantizeLinear, as static quantizers write it, into QLinearConv /
// QLinearMatMul; the residual Add between DequantizeLinear and
// QuantizeLinear into com.switchyard QLinearAdd, and MaxPool onto the
// 8-bit tensor (qdq_fusion.cc says when). A provider rewrite, run before
// the float Conv and MatMul fusions would take the Conv or MatMul.
Status fuse_qdq(Graph& graph, int* fused);
// DynamicQuantizeLinear -> MatMulInteger (constant B) -> Cast -> Mul by
// the scales [-> Add bias], as dynamic quantizers write it, into one
// com.switchyard DynamicQuantizeMatMul (dynamic_quant_matmul_fusion.cc
// says when). A provider rewrite.
Status fuse_dynamic_quant_matmul(Graph& graph, int* fused);
// Moves a Relu or Clip (constant bounds) after a float Conv into the Conv,
// which becomes a FusedConv with activation / activation_params.
Status fuse_conv_activation(Graph& graph, int* fused);
// Replaces the exported GELU chains (erf form and tanh form) with Gelu.
Status fuse_gelu(Graph& graph, int* fused);
// Folds a following scale, bias Add, residual Add and Relu / Gelu into a
// float MatMul [.., M, K] x [K, N], which becomes a FusedMatMul
// (schema/fused.cc) with alpha, the bias as input 2, the residual as
// input 3 and activation. A provider rewrite.
Status fuse_matmul_epilogue(Graph& graph, int* fused);
// Replaces MatMul(Q, Transpose(K)) [/ scale] [+ mask | Where mask] ->
// Softmax -> MatMul(., V) on float tensors with one FusedAttention node
// (schema/fused.cc). A provider rewrite.
Status fuse_attention(Graph& graph, int* fused);
// Replaces ReduceMean / Sub / Pow / ReduceMean / Add / Sqrt / Div [/ Mul /
// Add] over trailing axes of a float tensor with LayerNormalization.
Status fuse_layer_norm(Graph& graph, int* fused);

// ---- all

// Transpose(Transpose(x)): both removed when the permutations cancel, one
// Transpose with the composed permutation otherwise. Counts nodes removed.
Status cancel_transposes(Graph& graph, int* removed);
// Reshape(Reshape(x, s1), s2) -> Reshape(x, s2) when s2 is constant and
// does not copy input dims. Counts nodes removed.
Status collapse_reshapes(Graph& graph, int* removed);
// Hands Conv outputs over in NCHW16c where every reader is a Conv that takes
// them so (FusedConv's output_layout / input_layout / residual_layout,
// providers/cpu/conv/blocked_layout.h): ResNet's and MobileNetV2's bodies.
// A provider rewrite (the CPU's). Counts the tensors blocked.
Status block_conv_channels(Graph& graph, int* marked);

}  // namespace sy
