// LayerNormalization fusion, for models exported before opset 17 (or by
// tools that decompose it):
//   mean = ReduceMean(x); d = x - mean; var = ReduceMean(d^2)
//   y = d / Sqrt(var + eps) [* gamma] [+ beta]
// over the trailing axes becomes one LayerNormalization: one read of x per
// row instead of nine element-wise passes with their intermediates.
//
// LayerNormalization is an opset-17 op; as with Gelu, the fused node carries
// since_version 17 in an older model (see gelu_fusion.cc).
#include <algorithm>
#include <vector>

#include "optimizer/optimizer.h"
#include "optimizer/rewrite_util.h"

namespace sy {
namespace {

constexpr int kLayerNormVersion = 17;

// The axes of a ReduceMean keeping dims, as negative numbers (counted from
// the end), sorted; empty when they are not known now or not kept.
std::vector<int64_t> reduce_axes(const Graph& graph, const Node& reduce, int64_t rank) {
  if (reduce.attr_int("keepdims", 1) != 1) return {};
  std::vector<int64_t> axes;
  if (reduce.since_version < 18) {
    axes = reduce.attr_ints("axes");
  } else if (reduce.has_input(1)) {
    const Tensor* t = graph.constant(reduce.inputs[1]);
    if (t == nullptr || t->dtype() != DataType::kInt64) return {};
    axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->num_elements());
  }
  for (int64_t& a : axes) {
    if (a >= 0) {
      if (rank < 0) return {};
      a -= rank;
    }
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

// True when `axes` (negative, sorted) are the last k axes: -k .. -1.
bool trailing(const std::vector<int64_t>& axes) {
  if (axes.empty()) return false;  // no axes: a reduction over everything
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != -static_cast<int64_t>(axes.size() - i)) return false;
  return true;
}

// A float constant usable as LayerNormalization's Scale or B for rows of
// `n` elements (the kernel takes n values, or one) of a rank-`rank` input:
// a higher rank would broadcast the output to another shape.
bool row_parameter(const Graph& graph, ValueId v, int64_t n, int64_t rank) {
  const Tensor* t = v == kNoValue ? nullptr : graph.constant(v);
  return t != nullptr && t->dtype() == DataType::kFloat && static_cast<int64_t>(t->shape().rank()) <= rank &&
         (t->num_elements() == n || t->num_elements() == 1);
}

// The single consumer of `v` when it is an ai.onnx `op` reading `v` and a
// float constant fit for rows of `n`; that constant goes to `param`.
Node* affine_step(Graph& graph, ValueId v, const char* op, int64_t n, int64_t rank, ValueId* param) {
  Node* node = rewrite::single_consumer(graph, v);
  if (node == nullptr || !rewrite::is_op(*node, op)) return nullptr;
  const ValueId other = rewrite::other_input(*node, v);
  if (other == kNoValue || !row_parameter(graph, other, n, rank)) return nullptr;
  *param = other;
  return node;
}

bool fuse_one(Graph& graph, Node& mean_node) {
  if (!rewrite::is_op(mean_node, "ReduceMean") || !mean_node.has_input(0) || mean_node.outputs.size() != 1)
    return false;
  const ValueId x = mean_node.inputs[0];
  const ValueType& xt = graph.values[static_cast<size_t>(x)].type;
  if (!xt.is_tensor() || xt.dtype != DataType::kFloat || !xt.has_shape) return false;
  const auto rank = static_cast<int64_t>(xt.rank());
  const std::vector<int64_t> axes = reduce_axes(graph, mean_node, rank);
  if (!trailing(axes) || static_cast<int64_t>(axes.size()) > rank) return false;
  // Rows of n elements: the trailing dims must be known to size Scale and B.
  int64_t n = 1;
  for (int64_t a : axes) {
    const Dim& d = xt.dims[static_cast<size_t>(rank + a)];
    if (!d.is_known()) return false;
    n *= d.value;
  }

  // d = x - mean
  Node* sub = rewrite::single_consumer(graph, mean_node.outputs[0]);
  if (sub == nullptr || !rewrite::is_op(*sub, "Sub") || sub->inputs.size() != 2 || sub->inputs[0] != x ||
      sub->inputs[1] != mean_node.outputs[0])
    return false;
  const ValueId d = sub->outputs[0];
  const Value& dv = graph.values[static_cast<size_t>(d)];
  if (dv.is_graph_output || dv.consumers.size() != 2) return false;
  // Its two readers: the square and the Div.
  Node* square = nullptr;
  Node* div = nullptr;
  for (NodeId c : dv.consumers) {
    Node& reader = graph.nodes[static_cast<size_t>(c)];
    if (rewrite::is_op(reader, "Div") && reader.inputs.size() == 2 && reader.inputs[0] == d) {
      div = &reader;
    } else if (rewrite::is_op(reader, "Pow") && reader.inputs.size() == 2 && reader.inputs[0] == d &&
               rewrite::constant_near(graph, reader.inputs[1], x, 2.0)) {
      square = &reader;
    } else if (rewrite::is_op(reader, "Mul") && reader.inputs.size() == 2 && reader.inputs[0] == d &&
               reader.inputs[1] == d) {
      square = &reader;
    }
  }
  if (square == nullptr || div == nullptr) return false;
  // var = ReduceMean(d^2) over the same axes; sd = Sqrt(var + eps)
  Node* var_node = rewrite::single_consumer(graph, square->outputs[0]);
  if (var_node == nullptr || !rewrite::is_op(*var_node, "ReduceMean") || reduce_axes(graph, *var_node, rank) != axes)
    return false;
  Node* add_eps = rewrite::single_consumer(graph, var_node->outputs[0]);
  if (add_eps == nullptr || !rewrite::is_op(*add_eps, "Add")) return false;
  double eps = 0;
  if (!rewrite::constant_scalar(graph, rewrite::other_input(*add_eps, var_node->outputs[0]), x, &eps) || eps < 0)
    return false;
  Node* root = rewrite::single_consumer(graph, add_eps->outputs[0]);
  if (root == nullptr || !rewrite::is_op(*root, "Sqrt") || !rewrite::has_single_consumer(graph, root->outputs[0]) ||
      div->inputs[1] != root->outputs[0])
    return false;

  std::vector<Node*> interior = {&mean_node, sub, square, var_node, add_eps, root};
  Node* last = div;
  ValueId gamma = kNoValue;
  ValueId beta = kNoValue;
  if (Node* scale = affine_step(graph, div->outputs[0], "Mul", n, rank, &gamma)) {
    interior.push_back(last);
    last = scale;
    if (Node* shift = affine_step(graph, scale->outputs[0], "Add", n, rank, &beta)) {
      interior.push_back(last);
      last = shift;
    }
  }
  if (gamma == kNoValue) {
    // Scale is required: ones, in the normalized shape.
    Shape s;
    for (int64_t a : axes) s.push_back(xt.dims[static_cast<size_t>(rank + a)].value);
    auto ones = Tensor::allocate_uninitialized(DataType::kFloat, s);
    if (!ones.ok()) return false;
    std::fill(ones->data<float>(), ones->data<float>() + n, 1.0f);
    gamma = rewrite::add_constant(graph, last->name + "_scale", std::move(ones).value());
  }

  for (Node* node : interior) node->removed = true;
  last->op_type = "LayerNormalization";
  last->domain.clear();
  last->since_version = kLayerNormVersion;
  last->inputs = {x, gamma};
  if (beta != kNoValue) last->inputs.push_back(beta);
  last->attributes.clear();
  Attribute axis;
  axis.name = "axis";
  axis.type = AttributeType::kInt;
  axis.i = axes.front();
  last->attributes.push_back(std::move(axis));
  Attribute epsilon;
  epsilon.name = "epsilon";
  epsilon.type = AttributeType::kFloat;
  epsilon.f = static_cast<float>(eps);
  last->attributes.push_back(std::move(epsilon));
  last->name += "_layer_norm";
  return true;
}

}  // namespace

Status fuse_layer_norm(Graph& graph, int* fused) {
  rewrite::rewrite_each_node(graph, fuse_one, fused);  // add_constant adds values only
  return ok_status();
}

}  // namespace sy
