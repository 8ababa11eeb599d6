// The CPU provider's kernel tables, one per op family. A family is a file
// in src/providers/cpu/ that defines, in sy::cpu and at the start of a line,
//   std::span<const KernelDef> <family>_kernels() {
// The build finds these definitions and generates cpu_kernel_families()
// (cmake/table_list.cmake), so adding a family is writing its file.
#pragma once

#include <span>

#include "providers/kernel.h"

namespace sy::cpu {

using KernelTableFunction = std::span<const KernelDef> (*)();

// Every family's table function, ordered by the family's name.
std::span<const KernelTableFunction> cpu_kernel_families();

}  // namespace sy::cpu
