#include "session/execution_plan.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <queue>
#include <set>
#include <utility>

namespace sy {
namespace {

// A copy step whose input is constant is done once, here, through the
// provider's copy routine: weights go to a device when the session is
// created, not on every run.
Status precompute_constant_copy(const PlanStep& step, ExecutionProvider& provider, ExecutionPlan& plan) {
  const Tensor& src = plan.constants[static_cast<size_t>(step.inputs[0])];
  const bool to_host = step.node_ptr->op_type == kCopyToHostOp;
  Allocator* allocator = to_host ? cpu_allocator() : provider.allocator();
  SY_ASSIGN_OR_RETURN(Tensor dst, Tensor::allocate_uninitialized(src.dtype(), src.shape(), allocator));
  SY_RETURN_IF_ERROR(to_host ? provider.copy_to_host(src, dst) : provider.copy_from_host(src, dst));
  plan.constants[static_cast<size_t>(step.outputs[0])] = std::move(dst);
  return ok_status();
}

}  // namespace

Result<ExecutionPlan> build_execution_plan(Graph& graph, PartitionResult& partition,
                                           std::span<ExecutionProvider* const> providers,
                                           std::vector<std::unique_ptr<Kernel>>& owned_kernels,
                                           bool outputs_in_slots) {
  ExecutionPlan plan;
  plan.constants.resize(graph.values.size());
  plan.values.resize(graph.values.size());

  for (const auto& [v, t] : graph.initializers) {
    plan.constants[static_cast<size_t>(v)] = t;
    plan.values[static_cast<size_t>(v)].storage = ValueStorage::kConstant;
  }
  for (ValueId v : graph.inputs) plan.values[static_cast<size_t>(v)].storage = ValueStorage::kFeed;
  for (size_t v = 0; v < graph.values.size(); ++v)
    if (graph.values[v].is_outer_scope) plan.values[v].storage = ValueStorage::kFeed;

  // Steps; constant copies are done now and dropped from the run.
  for (NodeId id : partition.order) {
    Node& node = graph.nodes[static_cast<size_t>(id)];
    PlanStep step;
    step.node = id;
    step.node_ptr = &node;
    step.provider = partition.node_provider[static_cast<size_t>(id)];
    step.kernel = partition.kernels[static_cast<size_t>(id)].get();
    step.prepares = step.kernel != nullptr && step.kernel->prepares();
    owned_kernels.push_back(std::move(partition.kernels[static_cast<size_t>(id)]));
    step.inputs = node.inputs;
    step.num_node_inputs = node.inputs.size();
    step.inputs.insert(step.inputs.end(), node.implicit_inputs.begin(), node.implicit_inputs.end());
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      ValueId out = node.outputs[i];
      step.output_requested.push_back(out != kNoValue);
      if (out == kNoValue) {
        // A throwaway value so that every output has planned memory.
        out = graph.add_value("");
        plan.values.emplace_back();
        plan.constants.emplace_back();
      }
      step.outputs.push_back(out);
    }
    const bool constant_copy = is_copy_node(node) && node.has_input(0) &&
                               plan.values[static_cast<size_t>(node.inputs[0])].storage == ValueStorage::kConstant;
    if (constant_copy) {
      SY_RETURN_IF_ERROR(precompute_constant_copy(step, *providers[static_cast<size_t>(step.provider)], plan));
      plan.values[static_cast<size_t>(step.outputs[0])].storage = ValueStorage::kConstant;
      continue;
    }
    plan.max_step_inputs = std::max(plan.max_step_inputs, step.inputs.size());
    plan.steps.push_back(std::move(step));
  }

  // Lifetimes: the last step that reads each value.
  std::vector<int> last_use(graph.values.size(), -1);
  // Values a node's subgraphs read from the outer scope are among its
  // step's inputs, so they count as uses.
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (ValueId v : plan.steps[s].inputs)
      if (v != kNoValue) last_use[static_cast<size_t>(v)] = static_cast<int>(s);
  // Outputs kept in slots are read after the last step.
  if (outputs_in_slots)
    for (ValueId out : graph.outputs) last_use[static_cast<size_t>(out)] = static_cast<int>(plan.steps.size());
  // The device side of a graph output lives to the end of the run: a run
  // that keeps that output on the device (IoBinding) skips the copy and
  // reads it after the last step.
  for (ValueId out : graph.outputs) {
    const NodeId producer = graph.values[static_cast<size_t>(out)].producer;
    if (producer == kNoNode || graph.nodes[static_cast<size_t>(producer)].op_type != kCopyToHostOp) continue;
    const ValueId source = graph.nodes[static_cast<size_t>(producer)].inputs[0];
    if (source != kNoValue) last_use[static_cast<size_t>(source)] = static_cast<int>(plan.steps.size());
  }

  // Greedy slot assignment in step order. A slot freed by step s can be
  // reused from step s+1 on: a kernel reads its inputs while writing outputs.
  // Free slots are kept per allocator, ordered by size estimate and index,
  // and busy ones in a queue by the step after which they free up, so that
  // a step with many values alive (one read by thousands of nodes) does not
  // look through every slot for each output.
  std::vector<size_t> slot_estimate;  // per slot: largest static size seen (0: unknown)
  using FreeSlots = std::set<std::pair<size_t, int>>;  // (estimate, slot)
  std::map<Allocator*, FreeSlots> free_slots;
  using Busy = std::pair<int, int>;  // (last step that uses it, slot)
  std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    while (!busy.empty() && busy.top().first < static_cast<int>(s)) {
      const int k = busy.top().second;
      busy.pop();
      free_slots[plan.slots[static_cast<size_t>(k)].allocator].emplace(slot_estimate[static_cast<size_t>(k)], k);
    }
    const PlanStep& step = plan.steps[s];
    Allocator* alloc = is_copy_node(*step.node_ptr) && step.node_ptr->op_type == kCopyToHostOp
                           ? cpu_allocator()
                           : providers[static_cast<size_t>(step.provider)]->allocator();
    FreeSlots& free = free_slots[alloc];
    for (ValueId out : step.outputs) {
      ValuePlan& vp = plan.values[static_cast<size_t>(out)];
      vp.allocator = alloc;
      if (graph.values[static_cast<size_t>(out)].is_graph_output && !outputs_in_slots) {
        vp.storage = ValueStorage::kOutput;
        continue;
      }
      vp.storage = ValueStorage::kSlot;
      const int end = std::max(last_use[static_cast<size_t>(out)], static_cast<int>(s));
      // Best fit by the statically known size, when there is one: the
      // smallest free slot that is big enough, else the biggest free one;
      // the lowest index among equals.
      const ValueType& type = graph.values[static_cast<size_t>(out)].type;
      const size_t estimate = type.is_static() ? storage_bytes(type.dtype, type.static_shape().num_elements()) : 0;
      int chosen = -1;
      if (!free.empty()) {
        auto fit = free.lower_bound({estimate, -1});
        if (fit == free.end()) fit = free.lower_bound({std::prev(free.end())->first, -1});
        chosen = fit->second;
        free.erase(fit);
      } else {
        chosen = static_cast<int>(plan.slots.size());
        plan.slots.push_back({alloc});
        slot_estimate.push_back(0);
      }
      busy.emplace(end, chosen);
      slot_estimate[static_cast<size_t>(chosen)] = std::max(slot_estimate[static_cast<size_t>(chosen)], estimate);
      vp.slot = chosen;
    }
  }
  return plan;
}

}  // namespace sy
