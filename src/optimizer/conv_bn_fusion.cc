// Conv + BatchNormalization folding. In inference BN is a per-channel
// affine map, y = s * (x - mean) + beta with s = scale / sqrt(var + eps), so
// after a Conv with constant weights it folds into them:
//   W'[m] = W[m] * s[m]        B'[m] = (B[m] - mean[m]) * s[m] + beta[m]
// which removes a full pass over the Conv output. New constants are made
// (the old W may be shared with another node, or be memory-mapped); the
// arithmetic is done in double so the folded weights round once.
#include <cmath>
#include <vector>

#include "optimizer/optimizer.h"
#include "optimizer/rewrite_util.h"

namespace sy {
namespace {

// A float constant of shape [m].
const Tensor* channel_vector(const Graph& graph, ValueId v, int64_t m) {
  const Tensor* t = v == kNoValue ? nullptr : graph.constant(v);
  if (t == nullptr || t->dtype() != DataType::kFloat || t->shape().rank() != 1 || t->shape()[0] != m) return nullptr;
  return t;
}

// True when `bn` runs in inference mode and only its first output is used.
bool is_inference_bn(const Graph& graph, const Node& bn) {
  if (bn.attr_int("training_mode", 0) != 0) return false;
  // Before opset 9, spatial=0 means per-element statistics, not per channel.
  if (bn.attr_int("spatial", 1) != 1) return false;
  if (bn.inputs.size() != 5 || bn.outputs.empty() || bn.outputs[0] == kNoValue) return false;
  for (size_t i = 1; i < bn.outputs.size(); ++i) {
    const ValueId o = bn.outputs[i];
    if (o == kNoValue) continue;
    const Value& v = graph.values[static_cast<size_t>(o)];
    if (v.is_graph_output || !v.consumers.empty()) return false;
  }
  return true;
}

bool fold_one(Graph& graph, Node& conv) {
  // A plain Conv only: a FusedConv's activation and residual apply before
  // BN would, and the order would change.
  if (!rewrite::is_op(conv, "Conv") || conv.outputs.size() != 1) return false;
  const ValueId conv_out = conv.outputs[0];
  Node* bn = rewrite::single_consumer(graph, conv_out);
  if (bn == nullptr || !rewrite::is_op(*bn, "BatchNormalization") || bn->inputs[0] != conv_out) return false;
  if (!is_inference_bn(graph, *bn)) return false;

  const Tensor* w = conv.has_input(1) ? graph.constant(conv.inputs[1]) : nullptr;
  if (w == nullptr || w->dtype() != DataType::kFloat || w->shape().rank() < 3) return false;
  const int64_t m = w->shape()[0];
  const Tensor* b = nullptr;
  if (conv.has_input(2)) {
    b = channel_vector(graph, conv.inputs[2], m);
    if (b == nullptr) return false;  // a bias that is not a constant [M]
  }
  const Tensor* scale = channel_vector(graph, bn->inputs[1], m);
  const Tensor* beta = channel_vector(graph, bn->inputs[2], m);
  const Tensor* mean = channel_vector(graph, bn->inputs[3], m);
  const Tensor* var = channel_vector(graph, bn->inputs[4], m);
  if (scale == nullptr || beta == nullptr || mean == nullptr || var == nullptr) return false;
  const double eps = bn->attr_float("epsilon", 1e-5f);

  auto new_w = Tensor::allocate_uninitialized(DataType::kFloat, w->shape());
  auto new_b = Tensor::allocate_uninitialized(DataType::kFloat, Shape{m});
  if (!new_w.ok() || !new_b.ok()) return false;  // out of memory: leave the graph as it is
  const int64_t per_channel = w->num_elements() / m;
  for (int64_t c = 0; c < m; ++c) {
    const double s = static_cast<double>(scale->data<float>()[c]) /
                     std::sqrt(static_cast<double>(var->data<float>()[c]) + eps);
    const float* src = w->data<float>() + c * per_channel;
    float* dst = new_w->data<float>() + c * per_channel;
    for (int64_t k = 0; k < per_channel; ++k) dst[k] = static_cast<float>(src[k] * s);
    const double bias = b != nullptr ? b->data<float>()[c] : 0.0;
    new_b->data<float>()[c] =
        static_cast<float>((bias - mean->data<float>()[c]) * s + static_cast<double>(beta->data<float>()[c]));
  }

  const std::string base = graph.values[static_cast<size_t>(conv.inputs[1])].name;
  conv.inputs[1] = rewrite::add_constant(graph, base + "_bn_folded", std::move(new_w).value());
  const ValueId bias_value = rewrite::add_constant(graph, conv.name + "_bn_folded_bias", std::move(new_b).value());
  if (conv.inputs.size() < 3) conv.inputs.resize(3, kNoValue);
  conv.inputs[2] = bias_value;
  // The Conv now writes BN's output value, so its name (maybe a graph
  // output) survives.
  rewrite::absorb_consumer(graph, conv, *bn);
  return true;
}

}  // namespace

Status fuse_conv_batchnorm(Graph& graph, int* fused) {
  rewrite::rewrite_each_node(graph, fold_one, fused);  // add_constant adds values only
  return ok_status();
}

}  // namespace sy
