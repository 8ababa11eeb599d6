// The baseline activation span loops and the run-time choice (see
// activation_simd.h).
#include "providers/cpu/activation_simd.h"

#include <cstring>

#include "core/cpu_features.h"
#include "providers/cpu/elementwise_common.h"

namespace sy::cpu {
namespace activation_detail {

void activation_f32_portable(SimdActivation f, const float* x, float* y, int64_t rows, int64_t n, int64_t ld)
#include "providers/cpu/activation_simd_body.h"

}  // namespace activation_detail

void activation_f32_rows(SimdActivation f, const float* x, float* y, int64_t rows, int64_t n, int64_t ld) {
  using Fn = void (*)(SimdActivation, const float*, float*, int64_t, int64_t, int64_t);
  static const Fn best = pick_for_cpu<Fn>(&activation_detail::activation_f32_avx512,
                                          &activation_detail::activation_f32_avx2,
                                          &activation_detail::activation_f32_portable);
  best(f, x, y, rows, n, ld);
}

void activation_f32(SimdActivation f, const float* x, float* y, int64_t n) { activation_f32_rows(f, x, y, 1, n, n); }

}  // namespace sy::cpu
