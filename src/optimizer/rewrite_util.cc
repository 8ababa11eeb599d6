#include "optimizer/rewrite_util.h"

#include <cmath>
#include <limits>
#include <utility>

namespace sy::rewrite {

bool in_scope(const Graph& graph, const Node& node) {
  return graph.rewrite_scope < 0 || node.placed_on == graph.rewrite_scope;
}

Node* producer(Graph& graph, ValueId v) {
  if (v == kNoValue) return nullptr;
  const NodeId p = graph.values[static_cast<size_t>(v)].producer;
  if (p == kNoNode) return nullptr;
  Node& node = graph.nodes[static_cast<size_t>(p)];
  return node.removed || !in_scope(graph, node) ? nullptr : &node;
}

bool has_single_consumer(const Graph& graph, ValueId v) {
  if (v == kNoValue) return false;
  const Value& value = graph.values[static_cast<size_t>(v)];
  if (value.is_graph_output) return false;
  int live = 0;
  for (NodeId c : value.consumers)
    if (!graph.nodes[static_cast<size_t>(c)].removed) ++live;
  return live == 1;
}

Node* single_consumer(Graph& graph, ValueId v) {
  if (!has_single_consumer(graph, v)) return nullptr;
  for (NodeId c : graph.values[static_cast<size_t>(v)].consumers) {
    Node& node = graph.nodes[static_cast<size_t>(c)];
    if (!node.removed) return in_scope(graph, node) ? &node : nullptr;
  }
  return nullptr;
}

bool is_op(const Node& node, const char* op_type) {
  return !node.removed && node.domain.empty() && node.op_type == op_type;
}

bool is_switchyard_op(const Node& node, const char* op_type) {
  return !node.removed && node.domain == kSwitchyardDomain && node.op_type == op_type;
}

bool is_conv(const Node& node) { return is_op(node, "Conv") || is_switchyard_op(node, kFusedConvOp); }

bool has_residual(const Node& node) { return is_switchyard_op(node, kFusedConvOp) && node.has_input(3); }

void make_switchyard_op(Graph& graph, Node& node, const char* op_type) {
  if (is_switchyard_op(node, op_type)) return;
  node.domain = kSwitchyardDomain;
  node.op_type = op_type;
  node.since_version = kSwitchyardOpset;
  graph.opsets.emplace(kSwitchyardDomain, kSwitchyardOpset);
}

bool tensor_scalar(const Tensor& t, double* value) {
  if (!t.is_tensor() || t.num_elements() != 1) return false;
  switch (t.dtype()) {
    case DataType::kFloat: *value = t.data<float>()[0]; return true;
    case DataType::kDouble: *value = t.data<double>()[0]; return true;
    case DataType::kFloat16: *value = float16_to_float(t.data<uint16_t>()[0]); return true;
    case DataType::kBfloat16: *value = bfloat16_to_float(t.data<uint16_t>()[0]); return true;
    default: return false;
  }
}

bool clip_bounds(const Graph& graph, const Node& clip, float* lo, float* hi) {
  *lo = -std::numeric_limits<float>::infinity();
  *hi = std::numeric_limits<float>::infinity();
  if (clip.since_version < 11) {
    // Bounds are attributes, defaulting to the float range.
    *lo = clip.attr_float("min", std::numeric_limits<float>::lowest());
    *hi = clip.attr_float("max", std::numeric_limits<float>::max());
    return true;
  }
  // Bounds are scalar inputs; the output has the input's shape whatever
  // their rank.
  double v = 0;
  if (clip.has_input(1)) {
    const Tensor* t = graph.constant(clip.inputs[1]);
    if (t == nullptr || !tensor_scalar(*t, &v)) return false;
    *lo = static_cast<float>(v);
  }
  if (clip.has_input(2)) {
    const Tensor* t = graph.constant(clip.inputs[2]);
    if (t == nullptr || !tensor_scalar(*t, &v)) return false;
    *hi = static_cast<float>(v);
  }
  return true;
}

bool constant_scalar(const Graph& graph, ValueId v, ValueId like, double* value) {
  if (v == kNoValue || like == kNoValue) return false;
  const Tensor* t = graph.constant(v);
  const ValueType& lt = graph.values[static_cast<size_t>(like)].type;
  if (t == nullptr) return false;
  // A rank-0 constant never changes the shape; others must not add dims
  // (which needs `like`'s rank; exporters write scalars as rank 0).
  if (t->shape().rank() > 0 && (!lt.has_shape || t->shape().rank() > lt.rank())) return false;
  return tensor_scalar(*t, value) && !std::isnan(*value);
}

bool int64_constant(const Graph& graph, ValueId v, std::vector<int64_t>* out) {
  const Tensor* t = v == kNoValue ? nullptr : graph.constant(v);
  if (t == nullptr || !t->is_tensor() || t->dtype() != DataType::kInt64 || t->shape().rank() > 1) return false;
  out->assign(t->data<int64_t>(), t->data<int64_t>() + t->num_elements());
  return true;
}

double scale_by_constant(const Graph& graph, const Node& node, ValueId x) {
  if (node.inputs.size() != 2 || node.since_version < 7 || node.inputs[0] == node.inputs[1]) return 0.0;
  const bool div = is_op(node, "Div") && node.inputs[0] == x;
  const bool mul = is_op(node, "Mul") && (node.inputs[0] == x || node.inputs[1] == x);
  if (!div && !mul) return 0.0;
  double c = 0.0;
  if (!constant_scalar(graph, other_input(node, x), x, &c) || c == 0.0 || !std::isfinite(c)) return 0.0;
  return div ? 1.0 / c : c;
}

bool constant_near(const Graph& graph, ValueId v, ValueId like, double expected) {
  double got = 0;
  if (!constant_scalar(graph, v, like, &got)) return false;
  // Within rounding to the constant's own type: a float16 sqrt(2) is
  // 1.4140625, 1.1e-4 away (half an ulp is 2^-11 relative; bfloat16's 2^-8).
  const DataType dtype = graph.constant(v)->dtype();
  const double tolerance = dtype == DataType::kFloat16    ? 1e-3
                           : dtype == DataType::kBfloat16 ? 8e-3
                                                          : 1e-5;
  return std::fabs(got - expected) <= tolerance * std::fabs(expected);
}

void rewrite_each_node(Graph& graph, bool (*rewrite_one)(Graph&, Node&), int* count) {
  graph.link_subgraph_inputs();
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& node = graph.nodes[i];
    if (node.removed || !in_scope(graph, node) || !rewrite_one(graph, node)) continue;
    ++*count;
    graph.rebuild_links();
  }
}

void absorb_consumer(Graph& graph, Node& producer, Node& consumer) {
  producer.outputs[0] = consumer.outputs[0];
  graph.values[static_cast<size_t>(producer.outputs[0])].producer = static_cast<NodeId>(&producer - graph.nodes.data());
  consumer.removed = true;
}

Attribute int_attribute(const char* name, int64_t value) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kInt;
  a.i = value;
  return a;
}

Attribute ints_attribute(const char* name, std::vector<int64_t> values) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kInts;
  a.ints = std::move(values);
  return a;
}

Attribute float_attribute(const char* name, float value) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kFloat;
  a.f = value;
  return a;
}

Attribute string_attribute(const char* name, const std::string& value) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kString;
  a.s = value;
  return a;
}

ValueId other_input(const Node& node, ValueId known) {
  if (node.inputs.size() != 2) return kNoValue;
  if (node.inputs[0] == known) return node.inputs[1];
  if (node.inputs[1] == known) return node.inputs[0];
  return kNoValue;
}

std::string unique_value_name(const Graph& graph, const std::string& base) {
  if (graph.find_value(base) == kNoValue) return base;
  for (int i = 1;; ++i) {
    std::string name = base + "_" + std::to_string(i);
    if (graph.find_value(name) == kNoValue) return name;
  }
}

ValueId add_constant(Graph& graph, const std::string& base_name, Tensor tensor) {
  const ValueId v =
      graph.add_value(unique_value_name(graph, base_name), ValueType::tensor(tensor.dtype(), tensor.shape()));
  graph.values[static_cast<size_t>(v)].is_initializer = true;
  graph.initializers[v] = std::move(tensor);
  return v;
}

void replace_uses(Graph& graph, ValueId from, ValueId to) {
  for (Node& n : graph.nodes) {
    if (n.removed) continue;
    for (ValueId& in : n.inputs)
      if (in == from) in = to;
  }
}

}  // namespace sy::rewrite
