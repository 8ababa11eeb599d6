// The float LayerNormalization row compiled for avx512 (see layer_norm_simd.h).
#include <cmath>
#include <cstring>

#include "providers/cpu/layer_norm_simd.h"

namespace sy::cpu::layer_norm_detail {

void layer_norm_row_f32_avx512(const float* x, float* y, int64_t n, const float* scale, const float* bias,
                               float epsilon, float* mean, float* inv)
#include "providers/cpu/layer_norm_simd_body.h"

}  // namespace sy::cpu::layer_norm_detail
