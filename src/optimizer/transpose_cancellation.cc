// Transpose pairs: Transpose(Transpose(x, p1), p2) reads x through the
// composed permutation c[i] = p1[p2[i]]. When c is the identity both nodes
// go; otherwise the second reads x with c and the first goes. Exporters
// leave such pairs around layout changes (NCHW <-> NHWC round trips), and
// each Transpose is a full strided copy.
#include <numeric>
#include <vector>

#include "optimizer/optimizer.h"
#include "optimizer/rewrite_util.h"

namespace sy {
namespace {

// The node's permutation; an absent perm reverses the axes, which needs the
// input's rank. Empty when it is not known.
std::vector<int64_t> permutation(const Graph& graph, const Node& transpose) {
  if (const Attribute* a = transpose.attr("perm")) return a->ints;
  const ValueType& t = graph.values[static_cast<size_t>(transpose.inputs[0])].type;
  if (!t.has_shape) return {};
  std::vector<int64_t> reversed(t.rank());
  for (size_t i = 0; i < reversed.size(); ++i) reversed[i] = static_cast<int64_t>(reversed.size() - 1 - i);
  return reversed;
}

bool is_permutation_of_rank(const std::vector<int64_t>& p, size_t rank) {
  if (p.size() != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t v : p) {
    if (v < 0 || v >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(v)]) return false;
    seen[static_cast<size_t>(v)] = true;
  }
  return true;
}

bool read_by_subgraph(const Graph& graph, ValueId v) {
  for (NodeId c : graph.values[static_cast<size_t>(v)].consumers)
    for (ValueId in : graph.nodes[static_cast<size_t>(c)].implicit_inputs)
      if (in == v) return true;
  return false;
}

// Rewrites `second` when its input comes from another Transpose; returns
// the number of nodes removed (0, 1 or 2).
int cancel_one(Graph& graph, Node& second) {
  if (!rewrite::is_op(second, "Transpose") || !second.has_input(0) || second.outputs.size() != 1) return 0;
  const ValueId mid = second.inputs[0];
  Node* first = rewrite::producer(graph, mid);
  if (first == nullptr || !rewrite::is_op(*first, "Transpose") || !first->has_input(0)) return 0;
  if (!rewrite::has_single_consumer(graph, mid)) return 0;
  const std::vector<int64_t> p1 = permutation(graph, *first);
  const std::vector<int64_t> p2 = permutation(graph, second);
  if (p1.empty() || !is_permutation_of_rank(p1, p1.size()) || !is_permutation_of_rank(p2, p1.size())) return 0;
  std::vector<int64_t> composed(p1.size());
  for (size_t i = 0; i < composed.size(); ++i) composed[i] = p1[static_cast<size_t>(p2[i])];
  std::vector<int64_t> identity(p1.size());
  std::iota(identity.begin(), identity.end(), int64_t{0});
  const ValueId x = first->inputs[0];
  const ValueId out = second.outputs[0];
  first->removed = true;
  const bool visible = graph.values[static_cast<size_t>(out)].is_graph_output || read_by_subgraph(graph, out);
  if (composed == identity && !visible) {
    rewrite::replace_uses(graph, out, x);
    second.removed = true;
    return 2;
  }
  // The second node stays (a graph output keeps its name), reading x.
  second.inputs[0] = x;
  second.attributes.clear();
  second.attributes.push_back(rewrite::ints_attribute("perm", composed));
  return 1;
}

}  // namespace

Status cancel_transposes(Graph& graph, int* removed) {
  graph.link_subgraph_inputs();
  // In topological order, so a chain of three folds front to back.
  SY_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.topological_order());
  for (NodeId id : order) {
    Node& node = graph.nodes[static_cast<size_t>(id)];
    if (node.removed) continue;
    const int n = cancel_one(graph, node);
    if (n == 0) continue;
    *removed += n;
    // x gained a reader: later matches count consumers.
    graph.rebuild_links();
  }
  return ok_status();
}

}  // namespace sy
