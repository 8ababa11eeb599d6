// The portable depthwise 3x3 variant and the run-time choice among them.
#include "providers/cpu/conv/depthwise3x3.h"

namespace sy::cpu {
namespace depthwise_detail {

void depthwise3x3_portable(const Depthwise3x3Plane& p)
#include "providers/cpu/conv/depthwise3x3_body.h"

}  // namespace depthwise_detail

void depthwise3x3(const Depthwise3x3Plane& p) {
  using Fn = void (*)(const Depthwise3x3Plane&);
  static const Fn best = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return &depthwise_detail::depthwise3x3_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &depthwise_detail::depthwise3x3_avx2;
    return &depthwise_detail::depthwise3x3_portable;
  }();
  best(p);
}

}  // namespace sy::cpu
