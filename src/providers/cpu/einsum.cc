// PLACEHOLDER: replaced by the real kernels of this family (Einsum).
#include "providers/cpu/cpu_kernel_tables.h"

namespace sy::cpu {

std::span<const KernelDef> einsum_kernels() { return {}; }

}  // namespace sy::cpu
