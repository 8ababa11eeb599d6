// The activation span loops compiled for avx512 (see activation_simd.h).
#include "providers/cpu/activation_simd.h"

#include <cstring>
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/gelu_avx512.h"

namespace sy::cpu::activation_detail {

void activation_f32_avx512(SimdActivation f, const float* x, float* y, int64_t rows, int64_t n, int64_t ld)
#include "providers/cpu/activation_simd_body.h"

}  // namespace sy::cpu::activation_detail
