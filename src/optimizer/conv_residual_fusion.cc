// Conv + residual Add fusion: Add(Conv(x), z), where z has exactly the Conv
// output's shape, becomes one FusedConv (com.switchyard, schema/fused.cc)
// with z as its input 3. The Conv kernels add z as the result is stored,
// before any fused activation, so a ResNet block's Conv -> Add -> Relu
// tail becomes one node once the activation pass (which runs after this
// one) folds the Relu in too: two full passes over the block output go
// away.
#include <vector>

#include "optimizer/optimizer.h"
#include "optimizer/rewrite_util.h"
#include "optimizer/symbolic_dims.h"
#include "schema/fused.h"

namespace sy {
namespace {

bool fuse_one(Graph& graph, Node& conv) {
  if (!rewrite::is_conv(conv) || conv.outputs.size() != 1 || conv.inputs.size() > 3 ||
      conv.has_attr(kActivationAttr))
    return false;
  const ValueId conv_out = conv.outputs[0];
  const ValueType& out_type = graph.values[static_cast<size_t>(conv_out)].type;
  // The CPU Conv kernel is float only; other types keep the separate node.
  if (out_type.dtype != DataType::kFloat) return false;
  Node* add = rewrite::single_consumer(graph, conv_out);
  if (add == nullptr || !rewrite::is_op(*add, "Add") || add->since_version < 7 || add->outputs.size() != 1)
    return false;
  const ValueId z = rewrite::other_input(*add, conv_out);
  if (z == kNoValue || z == conv_out) return false;
  const ValueType& z_type = graph.values[static_cast<size_t>(z)].type;
  if (z_type.dtype != DataType::kFloat || !symbolic::same_shape(graph, conv_out, z)) return false;
  // Missing optional inputs are empty names; the bias slot must exist for z
  // to be input 3.
  while (conv.inputs.size() < 3) conv.inputs.push_back(kNoValue);
  conv.inputs.push_back(z);
  rewrite::make_switchyard_op(graph, conv, kFusedConvOp);
  rewrite::absorb_consumer(graph, conv, *add);
  return true;
}

}  // namespace

Status fuse_conv_residual(Graph& graph, int* fused) {
  rewrite::rewrite_each_node(graph, fuse_one, fused);
  return ok_status();
}

}  // namespace sy
