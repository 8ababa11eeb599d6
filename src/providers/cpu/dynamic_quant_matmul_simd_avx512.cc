// The DqmmSimd epilogue compiled for avx512 (see dynamic_quant_matmul_simd.h).
#include <cstring>

#include "providers/cpu/dynamic_quant_matmul_simd.h"

namespace sy::cpu::dqmm_detail {
namespace avx512 {
constexpr int kLanes = 16;
#include "providers/cpu/dynamic_quant_matmul_simd_body.h"
}  // namespace avx512

const DqmmSimd& dqmm_simd_avx512() { return avx512::kDqmmSimd; }

}  // namespace sy::cpu::dqmm_detail
