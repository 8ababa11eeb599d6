// PLACEHOLDER: replaced by the real kernels of this family (Pad, CenterCropPad).
#include "providers/cpu/cpu_kernel_tables.h"

namespace sy::cpu {

std::span<const KernelDef> pad_kernels() { return {}; }

}  // namespace sy::cpu
