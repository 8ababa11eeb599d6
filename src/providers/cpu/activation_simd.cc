// The baseline activation span loops and the run-time choice (see
// activation_simd.h).
#include "providers/cpu/activation_simd.h"

#include <cstring>

#include "core/cpu_features.h"
#include "providers/cpu/elementwise_common.h"

namespace sy::cpu {
namespace activation_detail {

void activation_f32_portable(SimdActivation f, const float* x, float* y, int64_t n)
#include "providers/cpu/activation_simd_body.h"

}  // namespace activation_detail

void activation_f32(SimdActivation f, const float* x, float* y, int64_t n) {
  using Fn = void (*)(SimdActivation, const float*, float*, int64_t);
  static const Fn best = pick_for_cpu<Fn>(&activation_detail::activation_f32_avx512,
                                          &activation_detail::activation_f32_avx2,
                                          &activation_detail::activation_f32_portable);
  best(f, x, y, n);
}

}  // namespace sy::cpu
