// resolve(): the step between loading and optimizing. For every node: the
// op version in force at the model's opset (unknown ops are errors naming
// node, domain and version), then type and shape inference in topological
// order, recursing into subgraphs.
#pragma once

#include "model/graph.h"
#include "switchyard/status.h"

namespace sy {

Status resolve(Graph& graph);

// Re-runs inference only (after a pass changed the graph).
Status infer_types(Graph& graph);

}  // namespace sy
