// The baseline DqmmSimd epilogue and the run-time choice (see
// dynamic_quant_matmul_simd.h).
#include "providers/cpu/dynamic_quant_matmul_simd.h"

#include <cstring>

#include "core/cpu_features.h"

namespace sy::cpu {
namespace dqmm_detail {
namespace portable {
constexpr int kLanes = 4;  // SSE2
#include "providers/cpu/dynamic_quant_matmul_simd_body.h"
}  // namespace portable

const DqmmSimd& dqmm_simd_portable() { return portable::kDqmmSimd; }

}  // namespace dqmm_detail

const DqmmSimd& dqmm_simd() {
  static const DqmmSimd& best = *pick_for_cpu(&dqmm_detail::dqmm_simd_avx512(), &dqmm_detail::dqmm_simd_avx2(),
                                              &dqmm_detail::dqmm_simd_portable());
  return best;
}

}  // namespace sy::cpu
