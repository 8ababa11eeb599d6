// The CPU provider: always available, runs every op Switchyard implements.
#pragma once

#include "optimizer/provider_rewrites.h"
#include "providers/provider.h"

namespace sy::cpu {

class CpuProvider final : public RegistryProvider {
 public:
  CpuProvider();
  std::string name() const override { return "CPUExecutionProvider"; }
  std::string short_name() const override { return "cpu"; }
  Availability availability() const override { return {}; }
  Device device() const override { return kCpuDevice; }
  Allocator* allocator() override { return cpu_allocator(); }
  // Every provider rewrite: the CPU has a kernel for each op they make.
  std::vector<std::string> rewrites() const override { return all_provider_rewrite_names(); }
  // The registry's answers, plus the float16 and bfloat16 nodes it has only
  // float kernels for: those it runs widened (optimizer/widen_half_precision.h).
  std::vector<NodeSupport> capability(const Graph& graph, std::span<const NodeId> candidates) override;
  // Widens them.
  Status adapt_placed_nodes(Graph& graph, int placement) override;
};

// The CPU kernel table, shared by CpuProvider and by providers (the
// test-only one, oneDNN) that reuse CPU kernels for some ops.
const KernelRegistry& cpu_kernel_registry();

}  // namespace sy::cpu
