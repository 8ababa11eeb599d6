// Channel-blocked activations between Convs (providers/cpu/conv/
// blocked_layout.h): a Conv output whose every reader is a Conv that takes
// it blocked is written in NCHW16c. Its producer and readers become
// FusedConvs (com.switchyard, schema/fused.cc), plain Convs included: the
// producer gets output_layout = "NCHW16c", each Conv reading it as X
// input_layout = "NCHW16c", each reading it as its fused residual (input 3)
// residual_layout = "NCHW16c". A blocked Y needs a blocked residual; an
// NCHW Y (a region's last Conv) takes a blocked one too.
//
// Why: a 1x1 Conv over NCHW is W . X with X packed into the GEMM's panels
// on every run, about 75-85 % of the FMA peak on ResNet-50's shapes; over
// blocked tensors it is the transposed product X^T W^T with X^T read in
// place, W^T packed once, and Y^T stored straight into blocks: 12-55 %
// faster on the same shapes (Zen 4). Winograd and the depthwise kernel
// work on blocks of channels anyway and fill them by row copies instead of
// transposes. So a whole ResNet or MobileNet body runs blocked, and only
// its edges convert.
//
// Producers: group-1 Convs (not an image stem the direct kernel takes, which
// writes NCHW faster than the blocked GEMM path would) and depthwise ones,
// with a constant float W whose output channels come in whole blocks of 16.
// Readers: 2-D Convs, depthwise or group 1 with a constant W, over whole
// blocks of 16 input channels. Both run on the CPU provider: the pass is
// one of its rewrites after placement (optimizer/provider_rewrites.h), and
// sees only nodes placed there. A value that is a graph output, or that anything else reads,
// stays NCHW.
#include <string>
#include <vector>

#include "optimizer/optimizer.h"
#include "optimizer/rewrite_util.h"
#include "providers/cpu/conv/blocked_layout.h"
#include "providers/cpu/conv/direct_few_channels.h"
#include "schema/fused.h"

namespace sy {
namespace {

using cpu::kLayoutBlock;
using cpu::kNchw16c;

// A float constant W of rank 4, or nullptr.
const Tensor* weight_4d(const Graph& graph, const Node& conv) {
  const Tensor* w = conv.has_input(1) ? graph.constant(conv.inputs[1]) : nullptr;
  if (w == nullptr || w->dtype() != DataType::kFloat || w->shape().rank() != 4) return nullptr;
  return w;
}

bool is_depthwise(const Node& conv, const Tensor& w) {
  return w.shape()[1] == 1 && conv.attr_int("group", 1) == w.shape()[0];
}

// Whether the CPU Conv kernel can write this Conv's Y blocked.
bool writes_blocked(const Graph& graph, const Node& conv) {
  if (!rewrite::is_conv(conv) || !rewrite::in_scope(graph, conv) || conv.outputs.size() != 1 ||
      conv.outputs[0] == kNoValue)
    return false;
  const Value& y = graph.values[static_cast<size_t>(conv.outputs[0])];
  if (y.type.dtype != DataType::kFloat || y.is_graph_output) return false;
  const Tensor* w = weight_4d(graph, conv);
  if (w == nullptr || w->shape()[0] % kLayoutBlock != 0) return false;
  if (is_depthwise(conv, *w)) return true;
  if (conv.attr_int("group", 1) != 1) return false;
  const bool one_by_one = w->shape()[2] == 1 && w->shape()[3] == 1;
  const bool stem = !rewrite::has_residual(conv) &&
                    cpu::direct_few_channels_suits(w->shape()[1], w->shape()[2], w->shape()[3]);
  return one_by_one || !stem;
}

// Whether the CPU Conv kernel can read this Conv's X blocked.
bool reads_blocked(const Graph& graph, const Node& conv) {
  if (!rewrite::is_conv(conv) || !rewrite::in_scope(graph, conv) || conv.inputs.empty()) return false;
  const Tensor* w = weight_4d(graph, conv);
  if (w == nullptr) return false;
  const int64_t channels = w->shape()[1] * conv.attr_int("group", 1);
  if (channels % kLayoutBlock != 0) return false;
  return is_depthwise(conv, *w) || conv.attr_int("group", 1) == 1;
}

// Whether every live reader of `v` takes it blocked: as X of a Conv that
// reads blocked X, or as a Conv's residual.
bool readers_take_blocked(const Graph& graph, ValueId v) {
  int readers = 0;
  for (NodeId c : graph.values[static_cast<size_t>(v)].consumers) {
    const Node& reader = graph.nodes[static_cast<size_t>(c)];
    if (reader.removed) continue;
    ++readers;
    if (!reader.implicit_inputs.empty()) return false;
    for (size_t i = 0; i < reader.inputs.size(); ++i) {
      if (reader.inputs[i] != v) continue;
      if (i == 0 && reads_blocked(graph, reader)) continue;
      if (i == 3 && rewrite::has_residual(reader) && rewrite::in_scope(graph, reader)) continue;
      return false;
    }
  }
  return readers > 0;
}

// Sets layout attribute `name` of a Conv to NCHW16c, making it a FusedConv
// (a plain Conv has no layouts); an explicit "NCHW" is overwritten.
void set_layout(Graph& graph, Node& conv, const char* name) {
  rewrite::make_switchyard_op(graph, conv, kFusedConvOp);
  for (Attribute& a : conv.attributes) {
    if (a.name != name) continue;
    a = rewrite::string_attribute(name, kNchw16c);
    return;
  }
  conv.attributes.push_back(rewrite::string_attribute(name, kNchw16c));
}

}  // namespace

Status block_conv_channels(Graph& graph, int* marked) {
  graph.link_subgraph_inputs();
  // Every output a Conv can write blocked and all its readers take so...
  std::vector<bool> blocked(graph.values.size(), false);
  for (const Node& node : graph.nodes)
    if (writes_blocked(graph, node) && readers_take_blocked(graph, node.outputs[0]))
      blocked[static_cast<size_t>(node.outputs[0])] = true;
  // ...but a blocked Y needs its residual blocked too (the GEMM adds it as
  // it stores Y), while an NCHW Y takes either. Dropping a Y may drop the Y
  // of a Conv that reads it as its residual, so until none changes.
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node& node : graph.nodes) {
      if (!rewrite::has_residual(node) || node.outputs.empty() || node.outputs[0] == kNoValue)
        continue;
      const size_t y = static_cast<size_t>(node.outputs[0]), z = static_cast<size_t>(node.inputs[3]);
      if (blocked[y] && !blocked[z]) {
        blocked[y] = false;
        changed = true;
      }
    }
  }
  // `marked` counts the tensors handed over blocked.
  if (marked != nullptr)
    for (bool b : blocked) *marked += b ? 1 : 0;
  for (Node& node : graph.nodes) {
    if (!rewrite::is_conv(node)) continue;
    if (!node.outputs.empty() && node.outputs[0] != kNoValue && blocked[static_cast<size_t>(node.outputs[0])])
      set_layout(graph, node, kOutputLayoutAttr);
    if (node.has_input(0) && blocked[static_cast<size_t>(node.inputs[0])]) set_layout(graph, node, kInputLayoutAttr);
    if (rewrite::has_residual(node) && blocked[static_cast<size_t>(node.inputs[3])])
      set_layout(graph, node, kResidualLayoutAttr);
  }
  return ok_status();
}

}  // namespace sy
