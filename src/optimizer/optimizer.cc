#include "optimizer/optimizer.h"

namespace sy {

Status optimize(Graph& graph, OptimizationLevel level, PassStats* stats) {
  PassStats local;
  PassStats& s = stats ? *stats : local;
  if (level == OptimizationLevel::kDisableAll) return ok_status();
  SY_RETURN_IF_ERROR(eliminate_identities(graph, &s.identities_removed));
  SY_RETURN_IF_ERROR(fold_constants(graph, &s.folded));
  SY_RETURN_IF_ERROR(eliminate_dead_nodes(graph, &s.dead_removed));
  // Fusions match constant operands, so they run after folding has turned
  // Constant nodes and weight arithmetic into constants.
  if (level == OptimizationLevel::kExtended || level == OptimizationLevel::kAll) {
    // BN first: Conv -> BN -> Relu becomes Conv(+BN) -> Relu, which the
    // providers that take FusedConv then make one node after placement.
    SY_RETURN_IF_ERROR(fuse_conv_batchnorm(graph, &s.conv_bn_fused));
    SY_RETURN_IF_ERROR(fuse_gelu(graph, &s.gelus_fused));
    SY_RETURN_IF_ERROR(fuse_layer_norm(graph, &s.layer_norms_fused));
  }
  SY_RETURN_IF_ERROR(drop_unused_constants(graph, &s.constants_dropped));
  graph.compact();
  return ok_status();
}

}  // namespace sy
