// The per-ISA variants of a kernel that a test runs one by one: the
// portable one always, the AVX2 and AVX-512 ones where this CPU has them.
#pragma once

#include <string>
#include <vector>

#include "core/cpu_features.h"

namespace sy::testing {

template <typename Fn>
struct IsaVariant {
  std::string name;
  int lanes;  // floats per vector: 1, 8 or 16
  Fn fn;
};

template <typename Fn>
std::vector<IsaVariant<Fn>> isa_variants(Fn portable, Fn avx2, Fn avx512) {
  std::vector<IsaVariant<Fn>> v = {{"portable", 1, portable}};
  if (cpu_supports(CpuIsa::kAvx2)) v.push_back({"avx2", 8, avx2});
  if (cpu_supports(CpuIsa::kAvx512)) v.push_back({"avx512", 16, avx512});
  return v;
}

}  // namespace sy::testing
