// The DqmmSimd epilogue compiled for avx2 (see dynamic_quant_matmul_simd.h).
#include <cstring>

#include "providers/cpu/dynamic_quant_matmul_simd.h"

namespace sy::cpu::dqmm_detail {
namespace avx2 {
constexpr int kLanes = 8;
#include "providers/cpu/dynamic_quant_matmul_simd_body.h"
}  // namespace avx2

const DqmmSimd& dqmm_simd_avx2() { return avx2::kDqmmSimd; }

}  // namespace sy::cpu::dqmm_detail
