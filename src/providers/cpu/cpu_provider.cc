#include "providers/cpu/cpu_provider.h"

#include "optimizer/widen_half_precision.h"
#include "providers/cpu/cpu_kernel_tables.h"

namespace sy::cpu {

const KernelRegistry& cpu_kernel_registry() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    for (KernelTableFunction family : cpu_kernel_families()) r.add(family());
    return r;
  }();
  return registry;
}

CpuProvider::CpuProvider() { registry_ = cpu_kernel_registry(); }

std::vector<NodeSupport> CpuProvider::capability(const Graph& graph, std::span<const NodeId> candidates) {
  std::vector<NodeSupport> answers = RegistryProvider::capability(graph, candidates);
  for (NodeSupport& a : answers) {
    if (a.supported) continue;
    const Node& node = graph.nodes[static_cast<size_t>(a.node)];
    std::string unused;
    if (widenable(graph, node) && registry_.find_widened(graph, node, unused) != nullptr) {
      a.supported = true;
      a.reason.clear();
    }
  }
  return answers;
}

Status CpuProvider::adapt_placed_nodes(Graph& graph, int placement) {
  HalfPrecisionQueries queries;
  queries.context = &registry_;
  queries.runs_widened = [](const void* registry, const Graph& g, const Node& node) {
    std::string unused;
    return static_cast<const KernelRegistry*>(registry)->find_widened(g, node, unused) != nullptr;
  };
  return widen_half_precision(graph, placement, queries, nullptr);
}

}  // namespace sy::cpu
