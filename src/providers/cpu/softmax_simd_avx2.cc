// The float Softmax row compiled for avx2 (see softmax_simd.h).
#include <cstring>
#include <limits>

#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/softmax_simd.h"

namespace sy::cpu::softmax_detail {

void softmax_row_f32_avx2(const float* x, const float* bias, float* y, int64_t n)
#include "providers/cpu/softmax_simd_body.h"

}  // namespace sy::cpu::softmax_detail
