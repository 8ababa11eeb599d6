// The Gelu span loop compiled for avx2 (see gelu_simd.h).
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/gelu_simd.h"

namespace sy::cpu::gelu_detail {

void gelu_f32_avx2(const float* __restrict x, float* __restrict y, int64_t n, bool tanh_form)
#include "providers/cpu/gelu_simd_body.h"

}  // namespace sy::cpu::gelu_detail
