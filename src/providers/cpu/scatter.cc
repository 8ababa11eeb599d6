// PLACEHOLDER: replaced by the real kernels of this family (Scatter, ScatterElements, ScatterND, TensorScatter).
#include "providers/cpu/cpu_kernel_tables.h"

namespace sy::cpu {

std::span<const KernelDef> scatter_kernels() { return {}; }

}  // namespace sy::cpu
