// Conv + Relu / Clip fusion: the activation moves into the Conv, which
// becomes a FusedConv (com.switchyard, schema/fused.cc) with the activation
// / activation_params attributes. The Conv kernels apply it as the GEMM
// stores its result, so the separate pass over the Conv output goes away.
// ReLU6 (Clip 0..6) is what MobileNet exports after every expansion and
// depthwise Conv. A FusedConv the residual pass made (Conv -> Add) takes
// the activation the same way.
#include <vector>

#include "optimizer/optimizer.h"
#include "optimizer/rewrite_util.h"
#include "schema/fused.h"

namespace sy {
namespace {

bool fuse_one(Graph& graph, Node& conv) {
  if (!rewrite::is_conv(conv) || conv.outputs.size() != 1 || conv.has_attr(kActivationAttr)) return false;
  const ValueId conv_out = conv.outputs[0];
  // The CPU Conv kernel is float only; other types keep the separate node.
  if (graph.values[static_cast<size_t>(conv_out)].type.dtype != DataType::kFloat) return false;
  Node* act = rewrite::single_consumer(graph, conv_out);
  if (act == nullptr || act->inputs.empty() || act->inputs[0] != conv_out || act->outputs.size() != 1) return false;
  std::vector<Attribute> fused;
  if (rewrite::is_op(*act, "Relu")) {
    fused.push_back(rewrite::string_attribute(kActivationAttr, "Relu"));
  } else if (rewrite::is_op(*act, "Clip")) {
    float lo = 0, hi = 0;
    if (!rewrite::clip_bounds(graph, *act, &lo, &hi)) return false;
    fused.push_back(rewrite::string_attribute(kActivationAttr, "Clip"));
    Attribute params;
    params.name = kActivationParamsAttr;
    params.type = AttributeType::kFloats;
    params.floats = {lo, hi};
    fused.push_back(std::move(params));
  } else {
    return false;
  }
  rewrite::make_switchyard_op(graph, conv, kFusedConvOp);
  for (Attribute& a : fused) conv.attributes.push_back(std::move(a));
  rewrite::absorb_consumer(graph, conv, *act);
  return true;
}

}  // namespace

Status fuse_conv_activation(Graph& graph, int* fused) {
  rewrite::rewrite_each_node(graph, fuse_one, fused);
  return ok_status();
}

}  // namespace sy
