// The baseline float Softmax row and the run-time choice (see softmax_simd.h).
#include "providers/cpu/softmax_simd.h"

#include <cstring>
#include <limits>

#include "core/cpu_features.h"
#include "providers/cpu/elementwise_common.h"

namespace sy::cpu {
namespace softmax_detail {

void softmax_row_f32_portable(const float* x, const float* bias, float* y, int64_t n)
#include "providers/cpu/softmax_simd_body.h"

}  // namespace softmax_detail

namespace {
using SoftmaxFn = void (*)(const float*, const float*, float*, int64_t);
SoftmaxFn best_softmax() {
  static const SoftmaxFn best =
      pick_for_cpu<SoftmaxFn>(&softmax_detail::softmax_row_f32_avx512, &softmax_detail::softmax_row_f32_avx2,
                              &softmax_detail::softmax_row_f32_portable);
  return best;
}
}  // namespace

void softmax_row_f32(const float* x, float* y, int64_t n) { best_softmax()(x, nullptr, y, n); }

void softmax_row_biased_f32(const float* x, const float* bias, float* y, int64_t n) { best_softmax()(x, bias, y, n); }

}  // namespace sy::cpu
