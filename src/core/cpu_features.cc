#include "core/cpu_features.h"

#include <cpuid.h>

namespace sy {
namespace {

// F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports
// does not know the name.
bool has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

}  // namespace

bool cpu_supports(CpuIsa isa) {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
  switch (isa) {
    case CpuIsa::kBaseline: return true;
    case CpuIsa::kAvx2: return avx2;
    case CpuIsa::kAvx512:
      return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  }
  return false;
}

CpuIsa best_cpu_isa() {
  static const CpuIsa best = cpu_supports(CpuIsa::kAvx512) ? CpuIsa::kAvx512
                             : cpu_supports(CpuIsa::kAvx2) ? CpuIsa::kAvx2
                                                           : CpuIsa::kBaseline;
  return best;
}

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512: return "AVX-512";
    case CpuIsa::kAvx2: return "AVX2+FMA";
    case CpuIsa::kBaseline: break;
  }
  return "baseline x86-64";
}

}  // namespace sy
