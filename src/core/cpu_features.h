// Which of the per-ISA kernel variants this CPU can run. Files named
// *_avx2.cc are compiled with -mavx2 -mfma -mf16c and *_avx512.cc with
// AVX-512 F/BW/VL/DQ on top (CMakeLists.txt); a variant may run only where
// every one of those features is present, so the checks live here, once.
#pragma once

namespace sy {

enum class CpuIsa { kBaseline = 0, kAvx2 = 1, kAvx512 = 2 };

// Whether the CPU has every feature the variant was compiled for.
bool cpu_supports(CpuIsa isa);
// The widest supported variant (computed once).
CpuIsa best_cpu_isa();
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
