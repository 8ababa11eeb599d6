// What a session reports about where its nodes run, built from the
// partitioner's result: the per-node assignment (Session::assignment) and
// its text, the nodes that fell through to a later provider, and the
// placement summary with the limits of SessionOptions it breaks.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "model/graph.h"
#include "partition/partitioner.h"
#include "providers/provider.h"
#include "switchyard/session.h"

namespace sy {

// Per node in execution order (copies included): its provider and every
// provider ahead of it that declined it, with the reason.
std::vector<NodeAssignment> node_assignments(const Graph& graph, const PartitionResult& partition,
                                             std::span<ExecutionProvider* const> chain);

// The text of Session::assignment_report(): a line per node, "name (op)
// -> provider", then a line per provider that declined it, with why.
std::string format_assignment_report(std::span<const NodeAssignment> assignment);

// A graph and where its nodes were placed: the main graph, or a body.
struct PlacedGraph {
  const Graph* graph = nullptr;
  const PartitionResult* partition = nullptr;
};

// The warning for model nodes (of the main graph and the bodies) that an
// available provider ahead of their own declined (not by design), counted
// per "from -> to: op"; empty when no node fell through.
std::string fall_through_message(std::span<const PlacedGraph> graphs, std::span<ExecutionProvider* const> chain);

// Partitions, model nodes per provider and device copies. Copies are not
// model nodes: a run of copies only is no partition, and two partitions of
// one provider split only by copies count as one.
PlacementSummary summarize_placement(const Graph& graph, const PartitionResult& partition,
                                     std::span<ExecutionProvider* const> chain);

// The placement limits of `options` that `summary` breaks, one line each
// ("3 partitions, more than max_partitions 2"); `first_provider` is the
// head of the chain, where full placement wants every node.
std::vector<std::string> broken_placement_limits(const PlacementSummary& summary, const SessionOptions& options,
                                                 const std::string& first_provider);

}  // namespace sy
