// The baseline float LayerNormalization row and the run-time choice (see
// layer_norm_simd.h).
#include "providers/cpu/layer_norm_simd.h"

#include <cmath>
#include <cstring>

#include "core/cpu_features.h"

namespace sy::cpu {
namespace layer_norm_detail {

void layer_norm_row_f32_portable(const float* x, float* y, int64_t n, const float* scale, const float* bias,
                                 float epsilon, float* mean, float* inv)
#include "providers/cpu/layer_norm_simd_body.h"

}  // namespace layer_norm_detail

void layer_norm_row_f32(const float* x, float* y, int64_t n, const float* scale, const float* bias, float epsilon,
                        float* mean, float* inv) {
  using Fn = void (*)(const float*, float*, int64_t, const float*, const float*, float, float*, float*);
  static const Fn best = pick_for_cpu<Fn>(&layer_norm_detail::layer_norm_row_f32_avx512,
                                          &layer_norm_detail::layer_norm_row_f32_avx2,
                                          &layer_norm_detail::layer_norm_row_f32_portable);
  best(x, y, n, scale, bias, epsilon, mean, inv);
}

}  // namespace sy::cpu
