// The provider chain (DESIGN.md, "The provider interface"), in three steps:
//   place_nodes            providers in priority order say which nodes they
//                          can run; what one declines falls through to the
//                          next with that provider's reason. No kernel yet.
//   rewrite_placed_nodes   each provider's rewrites (its fusions) on the
//                          nodes placed on it.
//   create_placed_kernels  one kernel per node kept, on its provider; then
//                          device copies wherever a value crosses devices,
//                          and nodes grouped into partitions.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/graph.h"
#include "optimizer/optimizer.h"
#include "providers/kernel.h"
#include "providers/provider.h"
#include "schema/fused.h"

namespace sy {

// The nodes the partitioner inserts, in the com.switchyard domain
// (schema/fused.h), which holds the optimizer's fused ops too.
inline constexpr const char* kCopyToHostOp = "MemcpyToHost";
inline constexpr const char* kCopyFromHostOp = "MemcpyFromHost";
// A partition a provider compiled into one kernel (ExecutionProvider::
// compile); its nodes stay in the graph, removed, listed in
// PartitionResult::compiled.
inline constexpr const char* kCompiledPartitionOp = "CompiledPartition";

// Whether `node` is a device copy the partitioner inserted, not a node of
// the model (fused or not). A CompiledPartition stands for model nodes.
inline bool is_copy_node(const Node& node) {
  return node.domain == kSwitchyardDomain && (node.op_type == kCopyToHostOp || node.op_type == kCopyFromHostOp);
}

struct Decline {
  int provider = -1;  // index into the chain
  std::string reason;
  // Declined by a rule of the runtime, not for lack of a kernel (shape
  // arithmetic kept on the host): not a fallthrough the policy counts.
  bool by_design = false;
};

// A maximal run of nodes, in execution order, that one provider runs.
struct Partition {
  int provider = -1;
  std::vector<NodeId> nodes;
};

// What placement decided. The provider of each node is in Node::placed_on.
struct Placement {
  std::vector<std::vector<Decline>> declines;  // per NodeId
  std::vector<bool> shape_nodes;               // per NodeId: shape arithmetic kept on the host
};

struct PartitionResult {
  // Per NodeId of the (rewritten) graph; removed nodes have provider -1.
  std::vector<int> node_provider;
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::vector<std::vector<Decline>> declines;
  std::vector<uint64_t> host_inputs;  // per NodeId: inputs its kernel reads on the host
  std::vector<uint64_t> prepacked;    // per NodeId: constant inputs its kernel prepacked
  std::vector<NodeId> order;  // execution order, copies included
  std::vector<Partition> partitions;
  // CompiledPartition node -> the model nodes it runs, in execution order.
  std::map<NodeId, std::vector<NodeId>> compiled;
  int num_copies = 0;          // copy nodes inserted
  int num_constant_copies = 0; // of which copy an initializer (done once)
};

struct PartitionOptions {
  // Runs of fewer nodes than this on a provider that is not the last one
  // are handed to the next provider instead: a tiny partition costs more in
  // copies and launches than it saves.
  int min_partition_size = 0;
};

// Nodes that compute shapes (Shape, and integer arithmetic on its results
// and small integer constants): true per NodeId. Device providers are not
// offered them.
std::vector<bool> shape_computation_nodes(const Graph& graph, std::span<const NodeId> order);

// Places every live node of `graph` on a provider (Node::placed_on). Fails,
// naming the node and every provider's reason, when no provider can run a
// node.
Result<Placement> place_nodes(Graph& graph, std::span<ExecutionProvider* const> providers,
                              const PartitionOptions& options = {});

// Runs each provider's rewrites (ExecutionProvider::rewrites()) on the
// nodes placed on it, then optimizer/provider_rewrites.h's finish_rewrites().
Status rewrite_placed_nodes(Graph& graph, std::span<ExecutionProvider* const> providers, OptimizationLevel level,
                            PassStats* stats = nullptr);

// Creates the kernels of a placed graph, inserts the copies and groups the
// partitions. A node whose kernel its provider fails to create goes to the
// next provider that can run it; fails like place_nodes when none can.
// `subgraphs`: the compiled bodies of its control-flow nodes
// (session/compiled_subgraph.h), compiled before, for their kernels.
Result<PartitionResult> create_placed_kernels(Graph& graph, std::span<ExecutionProvider* const> providers,
                                              Placement placement, const CompiledSubgraphMap& subgraphs = {});

// place_nodes then create_placed_kernels, without rewrites.
Result<PartitionResult> partition_graph(Graph& graph, std::span<ExecutionProvider* const> providers,
                                        const PartitionOptions& options = {});

// The kernel a copy node runs: src device -> dst device through the
// provider that owns the non-host side.
std::unique_ptr<Kernel> make_copy_kernel(const ExecutionProvider* device_provider, bool to_host);

}  // namespace sy
