// PLACEHOLDER: replaced by the real kernels of this family (TopK).
#include "providers/cpu/cpu_kernel_tables.h"

namespace sy::cpu {

std::span<const KernelDef> topk_kernels() { return {}; }

}  // namespace sy::cpu
