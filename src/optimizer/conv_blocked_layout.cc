// Channel-blocked hand-off from a Conv to the depthwise Conv that is its only
// reader (MobileNet's 1x1 expansion -> 3x3 depthwise): the producer gets
// sy_output_layout = "NCHW16c", the consumer sy_input_layout = "NCHW16c"
// (providers/cpu/conv/blocked_layout.h), and the depthwise kernel then
// copies rows instead of transposing every block of 16 channels.
//
// Both must run on the CPU provider (CPU-only sessions), and both Convs
// must be ones the CPU kernels take this layout for: the producer a
// float, group-1, 1x1 Conv with a constant W of whole blocks of 16 output
// channels and no residual; the consumer a 2-D depthwise Conv (group ==
// channels, W [C, 1, kh, kw]) reading it as X.
#include <string>

#include "optimizer/optimizer.h"
#include "optimizer/rewrite_util.h"
#include "providers/cpu/conv/blocked_layout.h"
#include "providers/cpu/gemm/fused_epilogue.h"

namespace sy {
namespace {

using cpu::kInputLayoutAttr;
using cpu::kLayoutBlock;
using cpu::kNchw16c;
using cpu::kOutputLayoutAttr;

// A float constant W of rank 4, or nullptr.
const Tensor* weight_4d(const Graph& graph, const Node& conv) {
  const Tensor* w = conv.has_input(1) ? graph.constant(conv.inputs[1]) : nullptr;
  if (w == nullptr || w->dtype() != DataType::kFloat || w->shape().rank() != 4) return nullptr;
  return w;
}

bool mark_one(Graph& graph, Node& conv) {
  if (!rewrite::is_op(conv, "Conv") || conv.outputs.size() != 1 || conv.has_attr(kOutputLayoutAttr) ||
      conv.has_attr(cpu::kFusedResidualAttr) || conv.attr_int("group", 1) != 1)
    return false;
  const ValueId y = conv.outputs[0];
  if (graph.values[static_cast<size_t>(y)].type.dtype != DataType::kFloat) return false;
  // 1x1 only: a spatial producer (an image stem) has a direct kernel of its
  // own that writes NCHW, which beats the blocked GEMM path.
  const Tensor* w = weight_4d(graph, conv);
  if (w == nullptr || w->shape()[0] % kLayoutBlock != 0 || w->shape()[2] != 1 || w->shape()[3] != 1) return false;
  const int64_t channels = w->shape()[0];
  Node* dw = rewrite::single_consumer(graph, y);
  if (dw == nullptr || !rewrite::is_op(*dw, "Conv") || dw->inputs.empty() || dw->inputs[0] != y ||
      dw->has_attr(kInputLayoutAttr) || dw->attr_int("group", 1) != channels)
    return false;
  // Y read only as X (not also as W or B).
  for (size_t i = 1; i < dw->inputs.size(); ++i)
    if (dw->inputs[i] == y) return false;
  const Tensor* dw_w = weight_4d(graph, *dw);
  if (dw_w == nullptr || dw_w->shape()[0] != channels || dw_w->shape()[1] != 1) return false;
  conv.attributes.push_back(rewrite::string_attribute(kOutputLayoutAttr, kNchw16c));
  dw->attributes.push_back(rewrite::string_attribute(kInputLayoutAttr, kNchw16c));
  return true;
}

}  // namespace

Status block_conv_channels(Graph& graph, int* marked) {
  rewrite::rewrite_each_node(graph, mark_one, marked);
  return ok_status();
}

}  // namespace sy
