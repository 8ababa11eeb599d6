// Reshape chains: Reshape(Reshape(x, s1), s2) is Reshape(x, s2) when s2 is
// a constant without 0 entries (with allowzero=0 a 0 copies the input's dim,
// which the first Reshape changed; a -1 depends only on the element count,
// which does not change). The same holds when the first node is any other
// pure reshape (Flatten, Squeeze, Unsqueeze): element order never changes.
// The first node goes when its output has no other reader.
#include <vector>

#include "optimizer/optimizer.h"
#include "optimizer/rewrite_util.h"

namespace sy {
namespace {

bool is_pure_reshape(const Node& node) {
  return rewrite::is_op(node, "Reshape") || rewrite::is_op(node, "Flatten") || rewrite::is_op(node, "Squeeze") ||
         rewrite::is_op(node, "Unsqueeze");
}

// True when the target shape of `reshape` does not depend on its input's
// dims: a constant int64 shape with no 0 (or with allowzero=1, where 0 is a
// literal 0).
bool shape_is_self_contained(const Graph& graph, const Node& reshape) {
  if (reshape.since_version < 5 || !reshape.has_input(1)) return false;  // shape as an attribute: left alone
  const Tensor* shape = graph.constant(reshape.inputs[1]);
  if (shape == nullptr || shape->dtype() != DataType::kInt64 || shape->shape().rank() != 1) return false;
  if (reshape.attr_int("allowzero", 0) != 0) return true;
  for (int64_t i = 0; i < shape->num_elements(); ++i)
    if (shape->data<int64_t>()[i] == 0) return false;
  return true;
}

bool collapse_one(Graph& graph, Node& second) {
  if (!rewrite::is_op(second, "Reshape") || !second.has_input(0) || !shape_is_self_contained(graph, second))
    return false;
  const ValueId mid = second.inputs[0];
  Node* first = rewrite::producer(graph, mid);
  if (first == nullptr || !is_pure_reshape(*first) || !first->has_input(0) || first->outputs.size() != 1) return false;
  if (!rewrite::has_single_consumer(graph, mid)) return false;
  second.inputs[0] = first->inputs[0];
  first->removed = true;
  return true;
}

}  // namespace

Status collapse_reshapes(Graph& graph, int* removed) {
  graph.link_subgraph_inputs();
  // In topological order, so a chain of three folds front to back.
  SY_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.topological_order());
  for (NodeId id : order) {
    Node& node = graph.nodes[static_cast<size_t>(id)];
    if (node.removed || !collapse_one(graph, node)) continue;
    ++*removed;
    // x gained a reader: later matches count consumers.
    graph.rebuild_links();
  }
  return ok_status();
}

}  // namespace sy
