#include "optimizer/widen_half_precision.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "optimizer/rewrite_util.h"

namespace sy {
namespace {

bool is_half(DataType t) { return t == DataType::kFloat16 || t == DataType::kBfloat16; }

bool is_half_value(const Graph& graph, ValueId v) {
  if (v == kNoValue) return false;
  const ValueType& t = graph.values[static_cast<size_t>(v)].type;
  return t.is_tensor() && is_half(t.dtype);
}

// `t` (float16 or bfloat16) as a new float tensor.
Result<Tensor> widen_constant(const Tensor& t) {
  SY_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate_uninitialized(DataType::kFloat, t.shape()));
  const auto* in = t.data<uint16_t>();
  float* o = out.data<float>();
  const int64_t n = t.num_elements();
  if (t.dtype() == DataType::kFloat16) {
    for (int64_t i = 0; i < n; ++i) o[i] = float16_to_float(in[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = bfloat16_to_float(in[i]);
  }
  return out;
}

// The Cast version for the graph's opset (13 is the first with bfloat16;
// the semantics between float and the half types are the same in all).
int cast_version(const Graph& graph) {
  const int64_t opset = graph.opset("");
  return opset >= 19 ? 19 : opset >= 13 ? 13 : 9;
}

// A Cast of `from` to `to`, making the new value `name` of type `type`
// with `to` as its element type; placed on `placement`.
ValueId add_cast(Graph& graph, ValueId from, DataType to, const std::string& name, const ValueType& type,
                 int placement) {
  ValueType cast_type = type;
  cast_type.dtype = to;
  const ValueId out = graph.add_value(rewrite::unique_value_name(graph, name), cast_type);
  Node cast;
  cast.name = graph.values[static_cast<size_t>(out)].name;
  cast.op_type = "Cast";
  cast.since_version = cast_version(graph);
  cast.inputs = {from};
  cast.outputs = {out};
  cast.attributes.push_back(rewrite::int_attribute("to", static_cast<int64_t>(to)));
  cast.placed_on = placement;
  graph.add_node(std::move(cast));
  return out;
}

class Widener {
 public:
  Widener(Graph& graph, int placement) : graph_(graph), placement_(placement) {}

  // A node that reads only its inputs' shapes (Shape, Size) reads the
  // float twin, whose shape is the same, rather than keep the Cast back to
  // half alive for it.
  void read_twins(NodeId id) {
    for (ValueId& v : graph_.nodes[static_cast<size_t>(id)].inputs)
      if (auto it = twins_.find(v); v != kNoValue && it != twins_.end()) v = it->second;
  }

  // The Casts back to half that nothing reads: removed now, since a fusion
  // after this (MatMul + Add) needs the float value to have one reader.
  void drop_unread_casts() {
    graph_.rebuild_links();
    for (const auto& [half, wide] : twins_) {
      const Value& value = graph_.values[static_cast<size_t>(half)];
      if (value.is_graph_output || !value.consumers.empty() || value.producer == kNoNode) continue;
      Node& cast = graph_.nodes[static_cast<size_t>(value.producer)];
      if (cast.op_type == "Cast" && cast.inputs.size() == 1 && cast.inputs[0] == wide) cast.removed = true;
    }
    graph_.rebuild_links();
  }

  // Rewires node `id`'s half inputs to float twins and its half outputs to
  // new float values, with Casts back to half.
  Status widen(NodeId id) {
    const size_t n_inputs = graph_.nodes[static_cast<size_t>(id)].inputs.size();
    for (size_t i = 0; i < n_inputs; ++i) {
      const ValueId v = graph_.nodes[static_cast<size_t>(id)].inputs[i];
      if (!is_half_value(graph_, v)) continue;
      SY_ASSIGN_OR_RETURN(const ValueId twin, float_twin(v));
      graph_.nodes[static_cast<size_t>(id)].inputs[i] = twin;
    }
    const size_t n_outputs = graph_.nodes[static_cast<size_t>(id)].outputs.size();
    for (size_t o = 0; o < n_outputs; ++o) {
      const ValueId v = graph_.nodes[static_cast<size_t>(id)].outputs[o];
      if (!is_half_value(graph_, v)) continue;
      const ValueType half_type = graph_.values[static_cast<size_t>(v)].type;
      ValueType float_type = half_type;
      float_type.dtype = DataType::kFloat;
      const ValueId wide = graph_.add_value(
          rewrite::unique_value_name(graph_, graph_.values[static_cast<size_t>(v)].name + "@float"), float_type);
      graph_.nodes[static_cast<size_t>(id)].outputs[o] = wide;
      graph_.values[static_cast<size_t>(wide)].producer = id;
      // The original value, made from the float one for whoever reads it
      // in half precision: the Cast takes over its name and producer.
      Node cast;
      cast.name = graph_.values[static_cast<size_t>(v)].name + "@half";
      cast.op_type = "Cast";
      cast.since_version = cast_version(graph_);
      cast.inputs = {wide};
      cast.outputs = {v};
      cast.attributes.push_back(rewrite::int_attribute("to", static_cast<int64_t>(half_type.dtype)));
      cast.placed_on = placement_;
      graph_.add_node(std::move(cast));
      twins_[v] = wide;
    }
    return ok_status();
  }

 private:
  // The float version of half value `v`: made once.
  Result<ValueId> float_twin(ValueId v) {
    if (auto it = twins_.find(v); it != twins_.end()) return it->second;
    const std::string name = graph_.values[static_cast<size_t>(v)].name + "@float";
    ValueId twin = kNoValue;
    if (const Tensor* constant = graph_.constant(v); constant != nullptr) {
      SY_ASSIGN_OR_RETURN(Tensor wide, widen_constant(*constant));
      twin = rewrite::add_constant(graph_, name, std::move(wide));
    } else {
      twin = add_cast(graph_, v, DataType::kFloat, name, graph_.values[static_cast<size_t>(v)].type, placement_);
    }
    twins_[v] = twin;
    return twin;
  }

  Graph& graph_;
  int placement_;
  std::unordered_map<ValueId, ValueId> twins_;  // half value -> float value
};

}  // namespace

bool widenable(const Graph& graph, const Node& node) {
  // Ops whose result depends on a type named in an attribute, or that only
  // read their input's shape (a Cast to float of a whole tensor for that
  // would be waste).
  static const char* const kKeepsItsTypes[] = {
      "Cast", "CastLike", "ConstantOfShape", "Constant", "EyeLike", "RandomNormal", "RandomNormalLike", "RandomUniform",
      "RandomUniformLike", "Bernoulli", "Multinomial", "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
      "Shape", "Size"};
  if (!node.domain.empty() && node.domain != "ai.onnx") return false;
  for (const char* op : kKeepsItsTypes)
    if (node.op_type == op) return false;
  for (const Attribute& a : node.attributes)
    if (a.g != nullptr || !a.graphs.empty()) return false;
  bool touches_half = false;
  for (ValueId v : node.inputs) touches_half = touches_half || is_half_value(graph, v);
  for (ValueId v : node.outputs) touches_half = touches_half || is_half_value(graph, v);
  return touches_half;
}

Status widen_half_precision(Graph& graph, int placement, const HalfPrecisionQueries& queries, int* widened) {
  SY_ASSIGN_OR_RETURN(const std::vector<NodeId> order, graph.topological_order());
  Widener widener(graph, placement);
  int count = 0;
  for (NodeId id : order) {
    const Node& node = graph.nodes[static_cast<size_t>(id)];
    if (node.removed || node.placed_on != placement) continue;
    if (node.op_type == "Shape" || node.op_type == "Size") {
      widener.read_twins(id);
      continue;
    }
    if (!widenable(graph, node) || !queries.runs_widened(queries.context, graph, node)) continue;
    SY_RETURN_IF_ERROR(widener.widen(id));
    ++count;
  }
  if (count > 0) widener.drop_unread_casts();
  if (widened != nullptr) *widened = count;
  return ok_status();
}

}  // namespace sy
