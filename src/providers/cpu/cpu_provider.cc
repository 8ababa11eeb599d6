#include "providers/cpu/cpu_provider.h"

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

}  // namespace sy::cpu
