// PLACEHOLDER: replaced by the real kernels of this family (Unique).
#include "providers/cpu/cpu_kernel_tables.h"

namespace sy::cpu {

std::span<const KernelDef> unique_kernels() { return {}; }

}  // namespace sy::cpu
