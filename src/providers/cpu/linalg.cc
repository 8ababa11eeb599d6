// PLACEHOLDER: replaced by the real kernels of this family (Det, MatMulInteger).
#include "providers/cpu/cpu_kernel_tables.h"

namespace sy::cpu {

std::span<const KernelDef> linalg_kernels() { return {}; }

}  // namespace sy::cpu
