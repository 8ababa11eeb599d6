#include <vector>

#include "providers/cpu/cpu_kernel_tables.h"
#include "providers/cpu/elementwise_tables.h"

namespace sy::cpu {

std::span<const KernelDef> elementwise_kernels() {
  static const std::vector<KernelDef> table = [] {
    std::vector<KernelDef> all;
    for (auto part : {elementwise_binary_kernels(), elementwise_unary_kernels()})
      all.insert(all.end(), part.begin(), part.end());
    return all;
  }();
  return table;
}

}  // namespace sy::cpu
