// The baseline Gelu span loop and the run-time choice (see gelu_simd.h).
#include "providers/cpu/gelu_simd.h"

#include "core/cpu_features.h"

#include "providers/cpu/elementwise_common.h"

namespace sy::cpu {
namespace gelu_detail {

void gelu_f32_portable(const float* __restrict x, float* __restrict y, int64_t n, bool tanh_form)
#include "providers/cpu/gelu_simd_body.h"

}  // namespace gelu_detail

void gelu_f32(const float* x, float* y, int64_t n, bool tanh_form) {
  using Fn = void (*)(const float*, float*, int64_t, bool);
  static const Fn best = [] {
    switch (best_cpu_isa()) {
      case CpuIsa::kAvx512: return &gelu_detail::gelu_f32_avx512;
      case CpuIsa::kAvx2: return &gelu_detail::gelu_f32_avx2;
      case CpuIsa::kBaseline: break;
    }
    return &gelu_detail::gelu_f32_portable;
  }();
  best(x, y, n, tanh_form);
}

}  // namespace sy::cpu
