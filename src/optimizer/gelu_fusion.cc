// GELU fusion: the element-wise chains PyTorch exports for GELU become one
// ai.onnx Gelu node, one pass over the tensor instead of five to nine:
//   erf:  x * 0.5 * (1 + Erf(x / sqrt(2)))                       -> Gelu
//   tanh: x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))  -> Gelu approximate="tanh"
// The product of x, 0.5 and (1 + ...) is matched in each order exporters
// write it: (x * p) * 0.5, (0.5 * x) * p and x * (0.5 * p), operands of
// Add and Mul either way round.
//
// Gelu is an opset-20 op. The fused node carries since_version 20 even in
// an older model: the kernel tables select by since_version, and resolve()
// is not run again on an optimized graph. save_model() writes such a node
// in the com.switchyard domain, since the model's ai.onnx opset has no Gelu.
#include <cmath>
#include <numbers>
#include <vector>

#include "optimizer/optimizer.h"
#include "optimizer/rewrite_util.h"

namespace sy {
namespace {

constexpr int kGeluVersion = 20;

struct Match {
  ValueId x = kNoValue;
  Node* last = nullptr;         // becomes the Gelu node
  std::vector<Node*> interior;  // removed
};

bool gelu_type(const Graph& graph, ValueId x) {
  const ValueType& t = graph.values[static_cast<size_t>(x)].type;
  return t.is_tensor() && (t.dtype == DataType::kFloat || t.dtype == DataType::kDouble ||
                           t.dtype == DataType::kFloat16 || t.dtype == DataType::kBfloat16);
}

// `node` when it is a Mul of `v` and a constant near `expected`; nullptr
// otherwise.
Node* mul_by_constant(Graph& graph, Node* node, ValueId v, double expected) {
  if (node == nullptr || !rewrite::is_op(*node, "Mul")) return nullptr;
  const ValueId other = rewrite::other_input(*node, v);
  return other != kNoValue && rewrite::constant_near(graph, other, v, expected) ? node : nullptr;
}

// p = 1 + inner, where `inner` is the Erf or Tanh output: then the three
// ways of multiplying x, 0.5 and p. Fills m.last and adds to m.interior.
bool match_half_x_times(Graph& graph, ValueId x, ValueId inner, Match& m) {
  Node* add = rewrite::single_consumer(graph, inner);
  if (add == nullptr || !rewrite::is_op(*add, "Add")) return false;
  const ValueId one = rewrite::other_input(*add, inner);
  if (one == kNoValue || !rewrite::constant_near(graph, one, x, 1.0)) return false;
  const ValueId p = add->outputs[0];
  Node* m1 = rewrite::single_consumer(graph, p);
  if (m1 == nullptr || !rewrite::is_op(*m1, "Mul")) return false;
  const ValueId o = rewrite::other_input(*m1, p);
  if (o == kNoValue) return false;
  m.interior.push_back(add);
  if (o == x || rewrite::constant_near(graph, o, x, 0.5)) {
    // (x * p) * 0.5, or x * (0.5 * p)
    Node* m2 = rewrite::single_consumer(graph, m1->outputs[0]);
    if (m2 == nullptr || !rewrite::is_op(*m2, "Mul")) return false;
    const ValueId last_operand = rewrite::other_input(*m2, m1->outputs[0]);
    const bool ok = o == x ? rewrite::constant_near(graph, last_operand, x, 0.5) : last_operand == x;
    if (!ok) return false;
    m.interior.push_back(m1);
    m.last = m2;
    return true;
  }
  // (0.5 * x) * p
  Node* half = rewrite::producer(graph, o);
  if (half == nullptr || !rewrite::has_single_consumer(graph, o) || mul_by_constant(graph, half, x, 0.5) == nullptr)
    return false;
  m.interior.push_back(half);
  m.last = m1;
  return true;
}

// Anchored on the Erf: its input is x / sqrt(2) or x * (1 / sqrt(2)).
bool match_erf(Graph& graph, Node& erf, Match& m) {
  if (!rewrite::is_op(erf, "Erf") || !erf.has_input(0)) return false;
  const ValueId scaled = erf.inputs[0];
  Node* scale = rewrite::producer(graph, scaled);
  if (scale == nullptr || !rewrite::has_single_consumer(graph, scaled) || scale->inputs.size() != 2) return false;
  if (rewrite::is_op(*scale, "Div") &&
      rewrite::constant_near(graph, scale->inputs[1], scale->inputs[0], std::sqrt(2.0))) {
    m.x = scale->inputs[0];
  } else if (rewrite::is_op(*scale, "Mul")) {
    for (size_t i = 0; i < 2; ++i)
      if (rewrite::constant_near(graph, scale->inputs[1 - i], scale->inputs[i], 1.0 / std::sqrt(2.0)))
        m.x = scale->inputs[i];
  }
  if (m.x == kNoValue || graph.constant(m.x) != nullptr) return false;
  m.interior = {scale, &erf};
  return match_half_x_times(graph, m.x, erf.outputs[0], m);
}

// x^3 as Pow(x, 3), x * (x * x) or (x * x) * x; the nodes go to `nodes`.
bool match_cube(Graph& graph, ValueId cube, ValueId x, std::vector<Node*>& nodes) {
  Node* n = rewrite::producer(graph, cube);
  if (n == nullptr || !rewrite::has_single_consumer(graph, cube) || n->inputs.size() != 2) return false;
  if (rewrite::is_op(*n, "Pow")) {
    if (n->inputs[0] != x || !rewrite::constant_near(graph, n->inputs[1], x, 3.0)) return false;
    nodes.push_back(n);
    return true;
  }
  if (!rewrite::is_op(*n, "Mul")) return false;
  const ValueId square = rewrite::other_input(*n, x);
  Node* sq = rewrite::producer(graph, square);
  if (square == kNoValue || sq == nullptr || !rewrite::is_op(*sq, "Mul") || sq->inputs[0] != x ||
      sq->inputs[1] != x || !rewrite::has_single_consumer(graph, square))
    return false;
  nodes.push_back(n);
  nodes.push_back(sq);
  return true;
}

// Anchored on the Tanh: its input is sqrt(2/pi) * (x + 0.044715 * x^3).
bool match_tanh(Graph& graph, Node& tanh, Match& m) {
  if (!rewrite::is_op(tanh, "Tanh") || !tanh.has_input(0)) return false;
  const ValueId u = tanh.inputs[0];
  Node* scale = rewrite::producer(graph, u);
  if (scale == nullptr || !rewrite::has_single_consumer(graph, u) || !rewrite::is_op(*scale, "Mul")) return false;
  ValueId s = kNoValue;
  for (size_t i = 0; i < 2; ++i)
    if (scale->inputs.size() == 2 &&
        rewrite::constant_near(graph, scale->inputs[1 - i], scale->inputs[i], std::sqrt(2.0 / std::numbers::pi)))
      s = scale->inputs[i];
  Node* sum = rewrite::producer(graph, s);
  if (sum == nullptr || !rewrite::has_single_consumer(graph, s) || !rewrite::is_op(*sum, "Add") ||
      sum->inputs.size() != 2)
    return false;
  for (int i = 0; i < 2 && m.x == kNoValue; ++i) {
    const ValueId x = sum->inputs[static_cast<size_t>(i)];
    const ValueId t = sum->inputs[static_cast<size_t>(1 - i)];
    Node* coef = rewrite::producer(graph, t);
    if (coef == nullptr || !rewrite::has_single_consumer(graph, t) || !rewrite::is_op(*coef, "Mul")) continue;
    for (int j = 0; j < 2 && m.x == kNoValue; ++j) {
      if (coef->inputs.size() != 2 ||
          !rewrite::constant_near(graph, coef->inputs[static_cast<size_t>(1 - j)], x, 0.044715))
        continue;
      std::vector<Node*> cube_nodes;
      if (!match_cube(graph, coef->inputs[static_cast<size_t>(j)], x, cube_nodes)) continue;
      m.x = x;
      m.interior = {scale, sum, coef, &tanh};
      m.interior.insert(m.interior.end(), cube_nodes.begin(), cube_nodes.end());
    }
  }
  if (m.x == kNoValue || graph.constant(m.x) != nullptr) return false;
  return match_half_x_times(graph, m.x, tanh.outputs[0], m);
}

// The last node of the chain becomes the Gelu, keeping the output value
// (and so its name) and the chain's place in the node order.
void rewrite_as_gelu(Match& m, bool tanh_approximation) {
  for (Node* n : m.interior) n->removed = true;
  Node& gelu = *m.last;
  gelu.op_type = "Gelu";
  gelu.domain.clear();
  gelu.since_version = kGeluVersion;
  gelu.inputs = {m.x};
  gelu.attributes.clear();
  if (tanh_approximation) {
    Attribute a;
    a.name = "approximate";
    a.type = AttributeType::kString;
    a.s = "tanh";
    gelu.attributes.push_back(std::move(a));
  }
  gelu.name += "_gelu";
}

// Matches a GELU chain ending at `node`'s Erf or Tanh and rewrites it.
bool fuse_one(Graph& graph, Node& node) {
  if (node.outputs.size() != 1) return false;
  Match m;
  bool tanh_approximation = false;
  if (node.op_type == "Erf") {
    if (!match_erf(graph, node, m)) return false;
  } else if (node.op_type == "Tanh") {
    if (!match_tanh(graph, node, m)) return false;
    tanh_approximation = true;
  } else {
    return false;
  }
  if (!gelu_type(graph, m.x)) return false;
  rewrite_as_gelu(m, tanh_approximation);
  return true;
}

}  // namespace

Status fuse_gelu(Graph& graph, int* fused) {
  rewrite::rewrite_each_node(graph, fuse_one, fused);
  return ok_status();
}

}  // namespace sy
