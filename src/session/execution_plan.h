// ExecutionPlan: what Session::run executes. Built once per session from
// the partitioned graph: the steps in order, and for every value where its
// memory comes from.
//
// The memory plan: each intermediate value gets a slot; two values share a
// slot when their lifetimes (producing step .. last consuming step) do not
// overlap and they live on the same device. A slot's buffer belongs to the
// run's frame and grows to the largest value it has held, so after the
// first run with a given input shape, run() allocates nothing per node.
#pragma once

#include <memory>
#include <vector>

#include "model/graph.h"
#include "partition/partitioner.h"
#include "providers/kernel.h"
#include "providers/provider.h"

namespace sy {

struct PlanStep {
  NodeId node = kNoNode;
  const Node* node_ptr = nullptr;
  const Kernel* kernel = nullptr;
  bool prepares = false;  // kernel->prepares(), read once
  int provider = -1;
  // The node's inputs, then the values its subgraphs read from the outer
  // scope (Node::implicit_inputs), which a control-flow kernel binds into
  // its body: the kernel sees them as inputs after its node's own.
  std::vector<ValueId> inputs;
  size_t num_node_inputs = 0;  // of `inputs`, the node's own
  std::vector<ValueId> outputs;        // kNoValue-free: omitted outputs get a throwaway value
  std::vector<bool> output_requested;  // false for those throwaway outputs
};

enum class ValueStorage {
  kUnused,    // not produced or consumed by any step
  kConstant,  // an initializer or folded value, ready before any run
  kFeed,      // a graph input, given by the caller (or, in a subgraph, an
              // outer-scope value the control-flow kernel binds)
  kOutput,    // a graph output: its own allocation, handed to the caller
  kSlot,      // an intermediate in a planned, reused buffer
};

struct ValuePlan {
  ValueStorage storage = ValueStorage::kUnused;
  int slot = -1;
  Allocator* allocator = nullptr;  // where its memory comes from
};

struct SlotPlan {
  Allocator* allocator = nullptr;
};

struct ExecutionPlan {
  std::vector<PlanStep> steps;
  std::vector<ValuePlan> values;  // per ValueId
  std::vector<SlotPlan> slots;
  // Constants per ValueId (host initializers, and initializers already
  // copied to a device at session creation).
  std::vector<Tensor> constants;
  size_t max_step_inputs = 0;
};

// `kernels` are moved from the partition result into `owned_kernels`.
// `outputs_in_slots`: graph outputs get planned slots, kept to the end of
// the run, instead of memory of their own per run (kOutput). For subgraphs,
// whose outputs the control-flow kernel copies out before the frame is run
// again, so that a steady state allocates nothing.
Result<ExecutionPlan> build_execution_plan(Graph& graph, PartitionResult& partition,
                                           std::span<ExecutionProvider* const> providers,
                                           std::vector<std::unique_ptr<Kernel>>& owned_kernels,
                                           bool outputs_in_slots = false);

}  // namespace sy
