// CompiledSubgraph: a subgraph (an If branch; Loop and Scan bodies next)
// taken through the same steps as the main graph at session creation —
// the generic passes, placement on the session's provider chain, the
// providers' rewrites, kernels and an execution plan — once, so that the
// control-flow kernel running it only binds values and executes the plan
// (executor.h) on a frame it keeps.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/graph.h"
#include "partition/partitioner.h"
#include "providers/kernel.h"
#include "providers/provider.h"
#include "session/execution_plan.h"
#include "switchyard/session.h"

namespace sy {

struct CompiledSubgraph {
  // Where it sits, for reports and errors: "If_0/then_branch", and
  // "If_0/then_branch/If_3/else_branch" for one nested in it.
  std::string name;
  Graph* graph = nullptr;  // the body, owned by its node's attribute
  std::vector<ExecutionProvider*> chain;  // the session's
  std::vector<Allocator*> allocators;     // per provider of the chain
  PartitionResult partition;
  std::vector<std::unique_ptr<Kernel>> kernels;
  // Outputs in slots (build_execution_plan's outputs_in_slots): the kernel
  // copies them out after each run.
  ExecutionPlan plan;
};

struct SubgraphCompileOptions {
  OptimizationLevel level = OptimizationLevel::kAll;
  PartitionOptions partition;
};

// Compiles the subgraphs of `graph`'s live nodes, after `graph`'s own
// passes and rewrites and before its kernels, and theirs inside them
// (each body's own before its kernels, recursively). Each lands in
// `compiled`, the enclosing ones first, and in `map` under its body graph,
// which create_placed_kernels hands to the kernel factories. `prefix` is
// the enclosing subgraph's name and a slash ("" for the main graph).
Status compile_subgraphs(Graph& graph, std::span<ExecutionProvider* const> chain,
                         std::span<Allocator* const> allocators, const SubgraphCompileOptions& options,
                         const std::string& prefix, std::vector<std::unique_ptr<CompiledSubgraph>>& compiled,
                         CompiledSubgraphMap& map);

}  // namespace sy
