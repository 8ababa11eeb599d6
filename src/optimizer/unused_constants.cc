// Drops constants nothing reads any more: the inputs of folded nodes, the
// weights a Conv + BatchNormalization fold replaced, the scalars of fused
// chains. Each would otherwise stay in memory for the session's life (and
// be copied to every device that prepacks constants).
#include <vector>

#include "optimizer/optimizer.h"

namespace sy {

Status drop_unused_constants(Graph& graph, int* dropped) {
  graph.link_subgraph_inputs();  // a constant read only from a subgraph is used
  std::vector<ValueId> unused;
  for (const auto& [v, tensor] : graph.initializers) {
    const Value& value = graph.values[static_cast<size_t>(v)];
    if (value.is_graph_input || value.is_graph_output) continue;
    bool read = false;
    for (NodeId c : value.consumers) read |= !graph.nodes[static_cast<size_t>(c)].removed;
    if (!read) unused.push_back(v);
  }
  for (ValueId v : unused) {
    graph.initializers.erase(v);
    graph.values[static_cast<size_t>(v)].is_initializer = false;
  }
  *dropped += static_cast<int>(unused.size());
  return ok_status();
}

}  // namespace sy
