// The baseline abs_max_f32_rows and the run-time choice (see
// abs_max_simd.h).
#include "providers/cpu/abs_max_simd.h"

#include <cstring>
#include <limits>

#include "core/cpu_features.h"
#include "providers/cpu/elementwise_common.h"

namespace sy::cpu {
namespace abs_max_detail {

float abs_max_f32_rows_portable(const float* x, int64_t rows, int64_t n, int64_t ld)
#include "providers/cpu/abs_max_simd_body.h"

}  // namespace abs_max_detail

float abs_max_f32_rows(const float* x, int64_t rows, int64_t n, int64_t ld) {
  using Fn = float (*)(const float*, int64_t, int64_t, int64_t);
  static const Fn best = pick_for_cpu<Fn>(&abs_max_detail::abs_max_f32_rows_avx512,
                                          &abs_max_detail::abs_max_f32_rows_avx2,
                                          &abs_max_detail::abs_max_f32_rows_portable);
  return best(x, rows, n, ld);
}

}  // namespace sy::cpu
