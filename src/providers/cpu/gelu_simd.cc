// The baseline Gelu span loop and the run-time choice (see gelu_simd.h).
#include "providers/cpu/gelu_simd.h"

#include "providers/cpu/elementwise_common.h"

namespace sy::cpu {
namespace gelu_detail {

void gelu_f32_portable(const float* __restrict x, float* __restrict y, int64_t n, bool tanh_form)
#include "providers/cpu/gelu_simd_body.h"

}  // namespace gelu_detail

void gelu_f32(const float* x, float* y, int64_t n, bool tanh_form) {
  using Fn = void (*)(const float*, float*, int64_t, bool);
  static const Fn best = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return &gelu_detail::gelu_f32_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &gelu_detail::gelu_f32_avx2;
    return &gelu_detail::gelu_f32_portable;
  }();
  best(x, y, n, tanh_form);
}

}  // namespace sy::cpu
