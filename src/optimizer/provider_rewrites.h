// Provider rewrites: the passes that make nodes only some providers run
// (com.switchyard's fused ops, the CPU's blocked layout). They run after
// placement, once per provider, on the nodes placed on it: a provider asks
// for the ones its kernels implement by name (ExecutionProvider::
// rewrite_placed; a plugin lists the names through the ABI). Generic
// passes (optimizer.h) run before placement on the whole graph.
//
// A pattern is matched only when every node in it is placed on the
// provider being rewritten (rewrite::in_scope), so a fusion never moves a
// node to another provider, and a provider that does not ask for a rewrite
// never sees the ops it makes.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/graph.h"
#include "optimizer/optimizer.h"
#include "switchyard/status.h"

namespace sy {

struct ProviderRewrite {
  std::string_view name;           // what a provider asks for: "conv_activation"
  OptimizationLevel level;         // the lowest level it runs at
  Status (*run)(Graph& graph, PassStats& stats);
};

// Every provider rewrite, in the order they run whoever asks for them
// (the QDQ fusion before the float Conv and MatMul fusions take its nodes;
// the residual Add before the activation; attention before the MatMul
// epilogues; the blocked layout after every Conv fusion).
std::span<const ProviderRewrite> provider_rewrites();

// The rewrite called `name`, or nullptr.
const ProviderRewrite* find_provider_rewrite(std::string_view name);

// Runs the rewrites named in `names` that `level` enables, in
// provider_rewrites() order, on the nodes placed on provider `placement`
// (-1: every node, as before placement). An unknown name is an error.
// New nodes are placed on `placement`.
Status run_provider_rewrites(Graph& graph, int placement, const std::vector<std::string>& names,
                             OptimizationLevel level, PassStats* stats = nullptr);

// The names of every provider rewrite (what the CPU provider asks for).
std::vector<std::string> all_provider_rewrite_names();

// After every provider's rewrites, on the whole graph: the layout clean-ups
// of level all (Transpose pairs, Reshape chains), which run only now
// because the fusions match the Transposes and Reshapes exporters write
// around attention and would miss them rewritten; then the nodes left
// unread (Attention's 3D form leaves the Shape arithmetic of the Reshapes
// it dropped) and the constants nothing reads any more. Node ids stay,
// since the placement refers to them (no compaction); a Transpose that
// absorbs another keeps its own placement.
Status finish_rewrites(Graph& graph, OptimizationLevel level, PassStats* stats = nullptr);

// The generic passes, then every provider rewrite on the whole graph, then
// finish_rewrites(), then compaction: what a session whose nodes all run
// on the CPU does, for tests and tools that optimize a graph without one.
Status optimize_for_cpu(Graph& graph, OptimizationLevel level, PassStats* stats = nullptr);

}  // namespace sy
