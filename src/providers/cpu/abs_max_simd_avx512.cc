// abs_max_f32_rows compiled for avx512 (see abs_max_simd.h).
#include <cstring>
#include <limits>

#include "providers/cpu/abs_max_simd.h"
#include "providers/cpu/elementwise_common.h"

namespace sy::cpu::abs_max_detail {

float abs_max_f32_rows_avx512(const float* x, int64_t rows, int64_t n, int64_t ld)
#include "providers/cpu/abs_max_simd_body.h"

}  // namespace sy::cpu::abs_max_detail
