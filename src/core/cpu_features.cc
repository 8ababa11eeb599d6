#include "core/cpu_features.h"

#include <cpuid.h>

#include <algorithm>

#include "core/environment.h"

namespace sy {
namespace {

// F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports
// does not know the name.
bool has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

CpuIsa widest_supported() {
  return cpu_supports(CpuIsa::kAvx512) ? CpuIsa::kAvx512
         : cpu_supports(CpuIsa::kAvx2) ? CpuIsa::kAvx2
                                       : CpuIsa::kBaseline;
}

// SWITCHYARD_MAX_ISA as a variant; unset, empty or unknown: no cap.
bool parse_isa_cap(const std::string& value, CpuIsa& cap) {
  for (CpuIsa isa : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (value == cpu_isa_cap_value(isa)) {
      cap = isa;
      return true;
    }
  }
  return false;
}

constexpr const char* kIsaCapVariable = "SWITCHYARD_MAX_ISA";

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
  static const CpuIsa best = [] {
    CpuIsa cap = CpuIsa::kAvx512;
    parse_isa_cap(env_value(kIsaCapVariable), cap);
    return std::min(widest_supported(), cap);
  }();
  return best;
}

std::string cpu_isa_cap_setting() {
  const std::string value = env_value(kIsaCapVariable);
  if (value.empty()) return {};
  CpuIsa cap = CpuIsa::kAvx512;
  const bool known = parse_isa_cap(value, cap);
  if (known && cap >= widest_supported()) return {};
  return std::string(kIsaCapVariable) + "=" + value + (known ? "" : " (unknown value, ignored)");
}

const char* cpu_isa_cap_value(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512: return "avx512";
    case CpuIsa::kAvx2: return "avx2";
    case CpuIsa::kBaseline: break;
  }
  return "portable";
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
