#include "optimizer/optimizer.h"

namespace sy {

Status optimize(Graph& graph, OptimizationLevel level, PassStats* stats, const OptimizerOptions& options) {
  PassStats local;
  PassStats& s = stats ? *stats : local;
  if (level == OptimizationLevel::kDisableAll) return ok_status();
  SY_RETURN_IF_ERROR(eliminate_identities(graph, &s.identities_removed));
  SY_RETURN_IF_ERROR(fold_constants(graph, &s.folded));
  SY_RETURN_IF_ERROR(eliminate_dead_nodes(graph, &s.dead_removed));
  // Fusions match constant operands, so they run after folding has turned
  // Constant nodes and weight arithmetic into constants.
  if (level == OptimizationLevel::kExtended || level == OptimizationLevel::kAll) {
    // BN first: Conv -> BN -> Relu becomes Conv(+BN) -> Relu, then one Conv.
    // The residual Add before the activation: Conv -> Add -> Relu is one Conv.
    SY_RETURN_IF_ERROR(fuse_conv_batchnorm(graph, &s.conv_bn_fused));
    SY_RETURN_IF_ERROR(fuse_conv_residual(graph, &s.conv_residuals_fused));
    SY_RETURN_IF_ERROR(fuse_conv_activation(graph, &s.conv_activations_fused));
    SY_RETURN_IF_ERROR(fuse_gelu(graph, &s.gelus_fused));
    SY_RETURN_IF_ERROR(fuse_layer_norm(graph, &s.layer_norms_fused));
    // Attention before the epilogues, which would take the scores' scale
    // into their MatMul; the epilogues after GELU fusion, so that the FFN's
    // Gelu folds into its MatMul.
    if (options.cpu_only) {
      SY_RETURN_IF_ERROR(fuse_attention(graph, &s.attentions_fused));
      SY_RETURN_IF_ERROR(fuse_matmul_epilogue(graph, &s.matmul_epilogues_fused));
    }
  }
  if (level == OptimizationLevel::kAll) {
    SY_RETURN_IF_ERROR(cancel_transposes(graph, &s.transposes_removed));
    SY_RETURN_IF_ERROR(collapse_reshapes(graph, &s.reshapes_removed));
    // After the fusions: the producer's activation is already folded in, and
    // a residual Add (which rules the pair out) already taken.
    if (options.cpu_only) SY_RETURN_IF_ERROR(block_conv_channels(graph, &s.conv_layouts_blocked));
  }
  if (level == OptimizationLevel::kExtended || level == OptimizationLevel::kAll) {
    // Once, after every rewrite: Attention's 3D form leaves the Shape
    // arithmetic of the Reshapes it dropped unread, and a Reshape now
    // reading its input directly may leave its shape value so.
    SY_RETURN_IF_ERROR(eliminate_dead_nodes(graph, &s.dead_removed));
  }
  SY_RETURN_IF_ERROR(drop_unused_constants(graph, &s.constants_dropped));
  graph.compact();
  return ok_status();
}

}  // namespace sy
