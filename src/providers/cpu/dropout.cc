// PLACEHOLDER: replaced by the real kernels of this family (Dropout).
#include "providers/cpu/cpu_kernel_tables.h"

namespace sy::cpu {

std::span<const KernelDef> dropout_kernels() { return {}; }

}  // namespace sy::cpu
