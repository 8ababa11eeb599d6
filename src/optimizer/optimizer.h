// Graph passes, chosen by optimization level (ONNX Runtime's names):
//   basic:    constant folding, identity and dead-node elimination
//   extended: (fusions; to come)
//   all:      (layout passes; to come)
// Each pass lives in its own file and can be run alone in tests.
#pragma once

#include "model/graph.h"
#include "switchyard/session.h"
#include "switchyard/status.h"

namespace sy {

struct PassStats {
  int folded = 0;
  int identities_removed = 0;
  int dead_removed = 0;
};

Status optimize(Graph& graph, OptimizationLevel level, PassStats* stats = nullptr);

// Runs nodes whose inputs are all constant on the CPU and replaces their
// outputs with the results. Shape of a statically shaped value folds too.
Status fold_constants(Graph& graph, int* folded);
// Bypasses Identity (and inference-mode Dropout) nodes.
Status eliminate_identities(Graph& graph, int* removed);
// Removes nodes whose outputs nobody uses.
Status eliminate_dead_nodes(Graph& graph, int* removed);

}  // namespace sy
