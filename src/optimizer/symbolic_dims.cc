#include "optimizer/symbolic_dims.h"

#include <string>

#include "optimizer/rewrite_util.h"
#include "schema/fused.h"

namespace sy::symbolic {
namespace {

const ValueType& type_of(const Graph& graph, ValueId v) { return graph.values[static_cast<size_t>(v)].type; }

int64_t rank_of(const Graph& graph, ValueId v) {
  const ValueType& t = type_of(graph, v);
  return t.is_tensor() && t.has_shape ? static_cast<int64_t>(t.rank()) : -1;
}

bool is_unary_elementwise(const Node& node) {
  static const char* const kOps[] = {"Relu", "Gelu", "Erf", "Tanh", "Sigmoid", "Neg", "Sqrt", "Exp", "Abs",
                                     "Cast", "Identity", "LayerNormalization", "Softmax"};
  for (const char* op : kOps)
    if (rewrite::is_op(node, op)) return true;
  return false;
}

bool is_binary_elementwise(const Node& node) {
  return rewrite::is_op(node, "Add") || rewrite::is_op(node, "Sub") || rewrite::is_op(node, "Mul") ||
         rewrite::is_op(node, "Div");
}

// One step back: the (value, axis) that axis `axis` of the output `v` of
// `node` is a copy of, or false.
bool step_back(const Graph& graph, const Node& node, ValueId v, int64_t axis, ValueId* from, int64_t* from_axis) {
  const int64_t rank = rank_of(graph, v);
  if (rank < 0 || node.outputs.empty()) return false;
  if (rewrite::is_op(node, "Split") && node.has_input(0) && rank_of(graph, node.inputs[0]) == rank) {
    // Every output keeps the input's dims but the split axis.
    int64_t split_axis = node.attr_int("axis", 0);
    if (split_axis < 0) split_axis += rank;
    if (split_axis == axis) return false;
    *from = node.inputs[0];
    *from_axis = axis;
    return true;
  }
  if (node.outputs[0] != v) return false;
  if (is_unary_elementwise(node) && node.has_input(0) && rank_of(graph, node.inputs[0]) == rank) {
    *from = node.inputs[0];
    *from_axis = axis;
    return true;
  }
  if (is_binary_elementwise(node) && node.inputs.size() == 2) {
    // Axis `axis` comes from operand i alone when the other operand has no
    // such axis (right-aligned broadcasting) or has 1 there.
    for (size_t i = 0; i < 2; ++i) {
      const ValueId self = node.inputs[i];
      const ValueId other = node.inputs[1 - i];
      const int64_t other_rank = rank_of(graph, other);
      if (rank_of(graph, self) != rank || other_rank < 0) continue;
      const int64_t other_axis = axis - (rank - other_rank);
      if (other_axis >= 0) {
        const Dim& d = type_of(graph, other).dims[static_cast<size_t>(other_axis)];
        if (!(d.is_known() && d.value == 1)) continue;
      }
      *from = self;
      *from_axis = axis;
      return true;
    }
    return false;
  }
  if ((rewrite::is_op(node, "MatMul") || rewrite::is_switchyard_op(node, kFusedMatMulOp)) && node.inputs.size() >= 2) {
    // [.., M, K] x [K, N]: every axis but the last is A's (also for
    // FusedMatMul, whose bias and residual inputs take Y's shape).
    if (rank_of(graph, node.inputs[1]) != 2 || rank_of(graph, node.inputs[0]) != rank || axis >= rank - 1)
      return false;
    *from = node.inputs[0];
    *from_axis = axis;
    return true;
  }
  if ((rewrite::is_op(node, "Attention") || rewrite::is_switchyard_op(node, kFusedAttentionOp)) && node.has_input(0) &&
      v == node.outputs[0]) {
    // Y is [B, S, Hq * Dv] (3D Q) or [B, Hq, S, Dv] (4D): all but the last
    // axis are Q's.
    if (rank_of(graph, node.inputs[0]) != rank || axis >= rank - 1) return false;
    *from = node.inputs[0];
    *from_axis = axis;
    return true;
  }
  if (rewrite::is_op(node, "Reshape") && node.since_version >= 5 && node.inputs.size() == 2) {
    // The target's element at `axis` is the dimension: one read from a
    // tensor by Shape (how exporters write a head split's batch and
    // sequence), or 0, which copies the input's (unless allowzero); -1
    // and numbers say nothing more than inference did.
    std::vector<DimRef> e;
    if (!shape_elements(graph, node.inputs[1], &e) || static_cast<int64_t>(e.size()) != rank) return false;
    const DimRef& d = e[static_cast<size_t>(axis)];
    if (!d.is_number()) {
      *from = d.value;
      *from_axis = d.axis;
      return true;
    }
    if (d.number != 0 || node.attr_int("allowzero", 0) != 0 || rank_of(graph, node.inputs[0]) <= axis) return false;
    *from = node.inputs[0];
    *from_axis = axis;
    return true;
  }
  if (rewrite::is_op(node, "Transpose") && node.has_input(0)) {
    const Attribute* perm = node.attr("perm");
    if (perm == nullptr || static_cast<int64_t>(perm->ints.size()) != rank) return false;
    *from = node.inputs[0];
    *from_axis = perm->ints[static_cast<size_t>(axis)];
    return *from_axis >= 0 && *from_axis < rank;
  }
  return false;
}

// Shape(t) (whole, no start/end): axis i of t for element i.
bool whole_shape_of(const Graph& graph, ValueId shape, ValueId* t) {
  const NodeId p = graph.values[static_cast<size_t>(shape)].producer;
  if (p == kNoNode) return false;
  const Node& node = graph.nodes[static_cast<size_t>(p)];
  if (!rewrite::is_op(node, "Shape") || !node.has_input(0) || node.has_attr("start") || node.has_attr("end"))
    return false;
  *t = node.inputs[0];
  return rank_of(graph, *t) >= 0;
}

// A scalar or one-element value: Gather(Shape(t), i) or a constant.
bool scalar_element(const Graph& graph, ValueId v, DimRef* out) {
  std::vector<int64_t> c;
  if (rewrite::int64_constant(graph, v, &c)) {
    if (c.size() != 1) return false;
    *out = DimRef{kNoValue, -1, c[0]};
    return true;
  }
  const NodeId p = graph.values[static_cast<size_t>(v)].producer;
  if (p == kNoNode) return false;
  const Node& node = graph.nodes[static_cast<size_t>(p)];
  if (!rewrite::is_op(node, "Gather") || node.inputs.size() != 2 || node.attr_int("axis", 0) != 0) return false;
  ValueId t = kNoValue;
  if (!whole_shape_of(graph, node.inputs[0], &t) || !rewrite::int64_constant(graph, node.inputs[1], &c) || c.size() != 1)
    return false;
  const int64_t rank = rank_of(graph, t);
  const int64_t axis = c[0] < 0 ? c[0] + rank : c[0];
  if (axis < 0 || axis >= rank) return false;
  *out = dim_source(graph, t, axis);
  return true;
}

// One piece of a Concat'ed shape: its elements.
bool piece_elements(const Graph& graph, ValueId v, std::vector<DimRef>* out) {
  std::vector<int64_t> c;
  if (rewrite::int64_constant(graph, v, &c)) {
    for (int64_t x : c) out->push_back(DimRef{kNoValue, -1, x});
    return true;
  }
  ValueId t = kNoValue;
  if (whole_shape_of(graph, v, &t)) {
    for (int64_t i = 0; i < rank_of(graph, t); ++i) out->push_back(dim_source(graph, t, i));
    return true;
  }
  const NodeId p = graph.values[static_cast<size_t>(v)].producer;
  if (p == kNoNode) return false;
  const Node& node = graph.nodes[static_cast<size_t>(p)];
  if (rewrite::is_op(node, "Unsqueeze") && node.has_input(0) && rank_of(graph, node.inputs[0]) == 0) {
    // A scalar made 1-D: axes [0], as an attribute (before 13) or input.
    std::vector<int64_t> axes = node.attr_ints("axes");
    if (node.has_input(1) && !rewrite::int64_constant(graph, node.inputs[1], &axes)) return false;
    if (axes.size() != 1 || (axes[0] != 0 && axes[0] != -1)) return false;
    DimRef d;
    if (!scalar_element(graph, node.inputs[0], &d)) return false;
    out->push_back(d);
    return true;
  }
  DimRef d;
  if (rank_of(graph, v) == 1 && scalar_element(graph, v, &d)) {
    out->push_back(d);
    return true;
  }
  return false;
}

}  // namespace

DimRef dim_source(const Graph& graph, ValueId v, int64_t axis) {
  // Bounded: each step moves to an earlier node, but a malformed graph
  // must not loop.
  for (int steps = 0; steps < 1000; ++steps) {
    const ValueType& t = type_of(graph, v);
    if (t.has_shape && axis < static_cast<int64_t>(t.rank()) && t.dims[static_cast<size_t>(axis)].is_known())
      return DimRef{kNoValue, -1, t.dims[static_cast<size_t>(axis)].value};
    const NodeId p = graph.values[static_cast<size_t>(v)].producer;
    if (p == kNoNode) break;
    const Node& node = graph.nodes[static_cast<size_t>(p)];
    ValueId from = kNoValue;
    int64_t from_axis = -1;
    if (node.removed || !step_back(graph, node, v, axis, &from, &from_axis)) break;
    v = from;
    axis = from_axis;
  }
  return DimRef{v, axis, -1};
}

bool same_shape(const Graph& graph, ValueId a, ValueId b) {
  const ValueType& ta = type_of(graph, a);
  const ValueType& tb = type_of(graph, b);
  if (!ta.has_shape || !tb.has_shape || ta.rank() != tb.rank()) return false;
  for (size_t i = 0; i < ta.rank(); ++i) {
    const Dim& x = ta.dims[i];
    if ((x.is_known() || x.is_symbolic()) && x == tb.dims[i]) continue;
    const auto axis = static_cast<int64_t>(i);
    if (!(dim_source(graph, a, axis) == dim_source(graph, b, axis))) return false;
  }
  return true;
}

bool shape_elements(const Graph& graph, ValueId shape, std::vector<DimRef>* out) {
  out->clear();
  if (shape == kNoValue) return false;
  if (piece_elements(graph, shape, out)) return true;
  out->clear();
  const NodeId p = graph.values[static_cast<size_t>(shape)].producer;
  if (p == kNoNode) return false;
  const Node& node = graph.nodes[static_cast<size_t>(p)];
  if (!rewrite::is_op(node, "Concat") || node.attr_int("axis", 0) != 0) return false;
  for (ValueId piece : node.inputs)
    if (piece == kNoValue || !piece_elements(graph, piece, out)) return false;
  return true;
}

}  // namespace sy::symbolic
