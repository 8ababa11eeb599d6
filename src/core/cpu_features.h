// Which of the per-ISA kernel variants this CPU can run. Files named
// *_avx2.cc are compiled with -mavx2 -mfma -mf16c and *_avx512.cc with
// AVX-512 F/BW/VL/DQ on top (CMakeLists.txt); a variant may run only where
// every one of those features is present, so the checks live here, once.
#pragma once

#include <string>

namespace sy {

enum class CpuIsa { kBaseline = 0, kAvx2 = 1, kAvx512 = 2 };

// Whether the CPU has every feature the variant was compiled for. Not
// affected by SWITCHYARD_MAX_ISA: tests use it to list what they can run.
bool cpu_supports(CpuIsa isa);
// The variant the kernels dispatch to: the widest supported one, capped by
// the environment variable SWITCHYARD_MAX_ISA=portable|avx2|avx512 when it
// is set. Decided once per process, at the first call (every dispatch site
// keeps its choice in a static), so the cap costs the hot path nothing and
// must be set before the process runs a kernel. The op test harness
// (tests/testing/op_test.h) re-runs a test in a child process under each cap
// to test every ISA variant through a real session.
CpuIsa best_cpu_isa();
// "SWITCHYARD_MAX_ISA=<value>" when that variable caps best_cpu_isa() below
// what the CPU has, or names a value it does not know (then it caps nothing);
// empty otherwise. For `switchyard doctor`.
std::string cpu_isa_cap_setting();
// The SWITCHYARD_MAX_ISA value that caps at `isa`: "portable", "avx2",
// "avx512".
const char* cpu_isa_cap_value(CpuIsa isa);
// "AVX-512", "AVX2+FMA", "baseline x86-64".
const char* cpu_isa_name(CpuIsa isa);

// The one of three per-ISA choices (function pointers, variant tables)
// that best_cpu_isa() can run. Callers keep the result in a static.
template <typename T>
T pick_for_cpu(T avx512, T avx2, T baseline) {
  switch (best_cpu_isa()) {
    case CpuIsa::kAvx512: return avx512;
    case CpuIsa::kAvx2: return avx2;
    case CpuIsa::kBaseline: break;
  }
  return baseline;
}

}  // namespace sy
