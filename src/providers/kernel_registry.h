// KernelRegistry: a provider's table of KernelDefs, and the lookup that
// gives either a kernel def for a node or the reason there is none.
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
  // nullptr with `reason` set ("op not implemented", "float16 not supported
  // for input 0 (supports float, double)", "opset 9 not implemented (have 13+)").
  const KernelDef* find(const Graph& graph, const Node& node, std::string& reason) const;

  std::span<const KernelDef> defs() const { return defs_; }

 private:
  const KernelDef* find_by_type(const Graph& graph, const Node& node, std::string& reason) const;
  std::vector<KernelDef> defs_;
};

// "float, int64"
std::string describe_type_mask(uint64_t mask);

}  // namespace sy
