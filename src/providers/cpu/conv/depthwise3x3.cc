// The portable depthwise 3x3 variant and the run-time choice among them.
#include "providers/cpu/conv/depthwise3x3.h"

#include "core/cpu_features.h"

namespace sy::cpu {
namespace depthwise_detail {

void depthwise3x3_portable(const Depthwise3x3Plane& p)
#include "providers/cpu/conv/depthwise3x3_body.h"

}  // namespace depthwise_detail

void depthwise3x3(const Depthwise3x3Plane& p) {
  using Fn = void (*)(const Depthwise3x3Plane&);
  static const Fn best = [] {
    switch (best_cpu_isa()) {
      case CpuIsa::kAvx512: return &depthwise_detail::depthwise3x3_avx512;
      case CpuIsa::kAvx2: return &depthwise_detail::depthwise3x3_avx2;
      case CpuIsa::kBaseline: break;
    }
    return &depthwise_detail::depthwise3x3_portable;
  }();
  best(p);
}

}  // namespace sy::cpu
