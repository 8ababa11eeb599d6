#include "partition/assignment_report.h"

#include <map>

namespace sy {
namespace {

// The model nodes a node of the executed graph stands for: those of a
// compiled partition, or itself (copies included; callers skip them).
// `executed` is an element of partition.order, so the span can point at it.
std::span<const NodeId> stands_for(const PartitionResult& partition, const NodeId& executed) {
  auto it = partition.compiled.find(executed);
  return it != partition.compiled.end() ? std::span<const NodeId>(it->second) : std::span<const NodeId>(&executed, 1);
}

}  // namespace

std::vector<NodeAssignment> node_assignments(const Graph& graph, const PartitionResult& partition,
                                             std::span<ExecutionProvider* const> chain) {
  std::vector<NodeAssignment> out;
  for (const NodeId& executed : partition.order) {
    const int p = partition.node_provider[static_cast<size_t>(executed)];
    // A compiled partition's nodes are listed one by one, on its provider.
    for (NodeId id : stands_for(partition, executed)) {
      const Node& node = graph.nodes[static_cast<size_t>(id)];
      NodeAssignment a;
      a.node_name = node.name;
      a.op_type = node.op_type;
      a.provider = chain[static_cast<size_t>(p)]->name();
      for (const Decline& d : partition.declines[static_cast<size_t>(id)])
        a.declined.push_back({chain[static_cast<size_t>(d.provider)]->name(), d.reason});
      out.push_back(std::move(a));
    }
  }
  return out;
}

std::string format_assignment_report(std::span<const NodeAssignment> assignment) {
  std::string out;
  for (const NodeAssignment& a : assignment) {
    out += a.node_name + " (" + a.op_type + ") -> " + a.provider + "\n";
    for (const ProviderDecline& d : a.declined) out += "    declined by " + d.provider + ": " + d.reason + "\n";
  }
  return out;
}

std::string fall_through_message(std::span<const PlacedGraph> graphs, std::span<ExecutionProvider* const> chain) {
  std::map<std::string, int> fell_through;  // "from -> to: op" -> count
  int fell_through_nodes = 0;
  int model_nodes = 0;
  for (const PlacedGraph& placed : graphs) {
    const Graph& graph = *placed.graph;
    const PartitionResult& partition = *placed.partition;
    for (const NodeId& executed : partition.order) {
      const int p = partition.node_provider[static_cast<size_t>(executed)];
      for (NodeId id : stands_for(partition, executed)) {
        const Node& node = graph.nodes[static_cast<size_t>(id)];
        if (is_copy_node(node)) continue;
        ++model_nodes;
        // The first available provider that declined it for lack of a kernel.
        const ExecutionProvider* from = nullptr;
        for (const Decline& d : partition.declines[static_cast<size_t>(id)]) {
          const ExecutionProvider* decliner = chain[static_cast<size_t>(d.provider)];
          if (decliner->availability().available && !d.by_design) {
            from = decliner;
            break;
          }
        }
        if (from == nullptr) continue;
        ++fell_through_nodes;
        ++fell_through[from->name() + " -> " + chain[static_cast<size_t>(p)]->name() + ": " + node.op_type];
      }
    }
  }
  if (fell_through_nodes == 0) return std::string();
  std::string detail;
  for (const auto& [k, n] : fell_through) detail += (detail.empty() ? "" : ", ") + k + " x" + std::to_string(n);
  return std::to_string(fell_through_nodes) + " of " + std::to_string(model_nodes) +
         " nodes fell through to a later provider (" + detail + "); the assignment report lists each node and why";
}

PlacementSummary summarize_placement(const Graph& graph, const PartitionResult& partition,
                                     std::span<ExecutionProvider* const> chain) {
  PlacementSummary p;
  for (const Partition& part : partition.partitions) {
    int model_nodes = 0;
    for (const NodeId& id : part.nodes)
      if (!is_copy_node(graph.nodes[static_cast<size_t>(id)]))
        model_nodes += static_cast<int>(stands_for(partition, id).size());
    if (model_nodes == 0) continue;  // a run of copies only
    const std::string name = chain[static_cast<size_t>(part.provider)]->name();
    if (!p.partition_providers.empty() && p.partition_providers.back() == name) {
      p.partition_sizes.back() += model_nodes;  // split only by copies
    } else {
      p.partition_providers.push_back(name);
      p.partition_sizes.push_back(model_nodes);
    }
    p.nodes_per_provider[name] += model_nodes;
  }
  p.partitions = static_cast<int>(p.partition_sizes.size());
  p.constant_copies = partition.num_constant_copies;
  p.copies_per_run = partition.num_copies - partition.num_constant_copies;
  return p;
}

std::vector<std::string> broken_placement_limits(const PlacementSummary& p, const SessionOptions& o,
                                                 const std::string& first_provider) {
  std::vector<std::string> broken;
  if (o.require_full_placement) {
    int elsewhere = 0;
    for (const auto& [name, count] : p.nodes_per_provider)
      if (name != first_provider) elsewhere += count;
    if (elsewhere > 0)
      broken.push_back(std::to_string(elsewhere) + " node(s) are not on " + first_provider +
                       " although full placement was required");
  }
  if (o.max_partitions > 0 && p.partitions > o.max_partitions)
    broken.push_back(std::to_string(p.partitions) + " partitions, more than max_partitions " +
                     std::to_string(o.max_partitions));
  if (o.max_copies >= 0 && p.copies_per_run > o.max_copies)
    broken.push_back(std::to_string(p.copies_per_run) + " device copies per run, more than max_copies " +
                     std::to_string(o.max_copies));
  return broken;
}

}  // namespace sy
