// Channel-blocked hand-offs around a depthwise Conv, each between a Conv
// and the Conv that is its only reader: the producer gets sy_output_layout
// = "NCHW16c", the consumer sy_input_layout = "NCHW16c"
// (providers/cpu/conv/blocked_layout.h).
//   - 1x1 expansion -> depthwise (MobileNet's): the depthwise kernel then
//     copies rows instead of transposing every block of 16 channels;
//   - depthwise -> 1x1 projection: the depthwise kernel stores its blocks
//     as they are instead of transposing them back to NCHW, and the
//     projection's GEMM transposes them while packing, which it copies
//     anyway.
//
// Both must run on the CPU provider (CPU-only sessions), and both Convs
// must be ones the CPU kernels take this layout for: float, constant W,
// whole blocks of 16 channels, no residual on the producer; the 1x1 Conv
// group 1, stride 1, unpadded; the depthwise one 2-D (group == channels,
// W [C, 1, kh, kw]).
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

// A 2-D depthwise Conv over `channels` channels: group == channels, W [C, 1, kh, kw].
bool is_depthwise(const Graph& graph, const Node& conv, int64_t channels) {
  const Tensor* w = weight_4d(graph, conv);
  return w != nullptr && conv.attr_int("group", 1) == channels && w->shape()[0] == channels && w->shape()[1] == 1;
}

// A group-1 1x1 Conv with no padding and stride 1, over `channels` input channels.
bool is_pointwise(const Graph& graph, const Node& conv, int64_t channels) {
  const Tensor* w = weight_4d(graph, conv);
  if (w == nullptr || conv.attr_int("group", 1) != 1 || w->shape()[1] != channels || w->shape()[2] != 1 ||
      w->shape()[3] != 1)
    return false;
  const std::string auto_pad = conv.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  for (int64_t s : conv.attr_ints("strides"))
    if (s != 1) return false;
  for (int64_t p : conv.attr_ints("pads"))
    if (p != 0) return false;
  return true;
}

// The Conv that reads `y` as its X and nothing else of it, and reads
// nothing else blocked, or nullptr.
Node* sole_x_reader(Graph& graph, ValueId y) {
  Node* next = rewrite::single_consumer(graph, y);
  if (next == nullptr || !rewrite::is_op(*next, "Conv") || next->inputs.empty() || next->inputs[0] != y ||
      next->has_attr(kInputLayoutAttr))
    return nullptr;
  for (size_t i = 1; i < next->inputs.size(); ++i)
    if (next->inputs[i] == y) return nullptr;
  return next;
}

bool mark_one(Graph& graph, Node& conv) {
  if (!rewrite::is_op(conv, "Conv") || conv.outputs.size() != 1 || conv.has_attr(kOutputLayoutAttr) ||
      conv.has_attr(cpu::kFusedResidualAttr))
    return false;
  const ValueId y = conv.outputs[0];
  if (graph.values[static_cast<size_t>(y)].type.dtype != DataType::kFloat) return false;
  const Tensor* w = weight_4d(graph, conv);
  if (w == nullptr || w->shape()[0] % kLayoutBlock != 0) return false;
  const int64_t channels = w->shape()[0];
  Node* next = sole_x_reader(graph, y);
  if (next == nullptr) return false;
  // 1x1 -> depthwise. 1x1 only: a spatial producer (an image stem) has a
  // direct kernel of its own that writes NCHW, which beats the blocked
  // GEMM path.
  const bool expansion = conv.attr_int("group", 1) == 1 && w->shape()[2] == 1 && w->shape()[3] == 1 &&
                         is_depthwise(graph, *next, channels);
  // depthwise -> 1x1.
  const bool projection = is_depthwise(graph, conv, channels) && is_pointwise(graph, *next, channels);
  if (!expansion && !projection) return false;
  conv.attributes.push_back(rewrite::string_attribute(kOutputLayoutAttr, kNchw16c));
  next->attributes.push_back(rewrite::string_attribute(kInputLayoutAttr, kNchw16c));
  return true;
}

}  // namespace

Status block_conv_channels(Graph& graph, int* marked) {
  rewrite::rewrite_each_node(graph, mark_one, marked);
  return ok_status();
}

}  // namespace sy
