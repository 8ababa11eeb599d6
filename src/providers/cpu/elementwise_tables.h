// The element-wise family's kernel tables, one per source file; the family
// table elementwise_kernels() (elementwise.cc) concatenates them.
#pragma once

#include <span>

#include "providers/kernel.h"

namespace sy::cpu {

std::span<const KernelDef> elementwise_binary_kernels();  // elementwise_binary.cc: arithmetic, compare, logic, bitwise, variadic, PRelu, Where
std::span<const KernelDef> elementwise_unary_kernels();   // elementwise_unary.cc: math, activations, Clip, IsNaN, IsInf, Not

}  // namespace sy::cpu
