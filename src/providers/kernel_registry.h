// KernelRegistry: a provider's table of KernelDefs, and the lookup that
// gives either a kernel def for a node or the reason there is none (the
// provider SDK's find_kernel, switchyard/provider_sdk/kernel_table.h, which
// the plugins use too).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "providers/kernel.h"

namespace sy {

class KernelRegistry {
 public:
  void add(std::span<const KernelDef> defs);

  // The def that runs `node` (its since_version and input types), or
  // nullptr with `reason` set ("op Foo not implemented", "float16 not
  // supported for input 0 (supports float, double)", "Relu version 9 not
  // implemented (have 13+)", "input 0 is a seq(tensor(float)); this kernel
  // takes tensors only").
  const KernelDef* find(const Graph& graph, const Node& node, std::string& reason) const;
  // The def that would run `node` with its float16 and bfloat16 inputs
  // widened to float (what the CPU provider does for ops it has no half
  // precision kernel for: optimizer/widen_half_precision.h), or nullptr.
  const KernelDef* find_widened(const Graph& graph, const Node& node, std::string& reason) const;

  std::span<const KernelDef> defs() const { return defs_; }

 private:
  const KernelDef* find_impl(const Graph& graph, const Node& node, bool widen_half, std::string& reason) const;

  std::vector<KernelDef> defs_;
};

}  // namespace sy
