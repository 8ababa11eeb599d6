#include "optimizer/optimizer.h"

namespace sy {

Status optimize(Graph& graph, OptimizationLevel level, PassStats* stats) {
  PassStats local;
  PassStats& s = stats ? *stats : local;
  if (level == OptimizationLevel::kDisableAll) return ok_status();
  SY_RETURN_IF_ERROR(eliminate_identities(graph, &s.identities_removed));
  SY_RETURN_IF_ERROR(fold_constants(graph, &s.folded));
  SY_RETURN_IF_ERROR(eliminate_dead_nodes(graph, &s.dead_removed));
  graph.compact();
  return ok_status();
}

}  // namespace sy
