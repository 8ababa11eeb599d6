// The baseline float Softmax row and the run-time choice (see softmax_simd.h).
#include "providers/cpu/softmax_simd.h"

#include <cstring>
#include <limits>

#include "core/cpu_features.h"
#include "providers/cpu/elementwise_common.h"

namespace sy::cpu {
namespace softmax_detail {

void softmax_row_f32_portable(const float* x, float* y, int64_t n)
#include "providers/cpu/softmax_simd_body.h"

}  // namespace softmax_detail

void softmax_row_f32(const float* x, float* y, int64_t n) {
  using Fn = void (*)(const float*, float*, int64_t);
  static const Fn best = pick_for_cpu<Fn>(&softmax_detail::softmax_row_f32_avx512, &softmax_detail::softmax_row_f32_avx2,
                                          &softmax_detail::softmax_row_f32_portable);
  best(x, y, n);
}

}  // namespace sy::cpu
