// PLACEHOLDER: replaced by the real kernels of this family (Resize, Upsample).
#include "providers/cpu/cpu_kernel_tables.h"

namespace sy::cpu {

std::span<const KernelDef> resize_kernels() { return {}; }

}  // namespace sy::cpu
