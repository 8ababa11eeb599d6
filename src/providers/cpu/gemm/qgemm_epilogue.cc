// The baseline row epilogue of the 8-bit GEMM and the run-time choice (see
// qgemm_epilogue.h).
#include "providers/cpu/gemm/qgemm.h"
#include "providers/cpu/gemm/qgemm_epilogue.h"

#include <cstring>
#include <utility>

#include "core/cpu_features.h"

namespace sy::cpu {
namespace qgemm_epilogue_detail {
namespace portable {
constexpr int kLanes = 4;  // SSE2
#include "providers/cpu/gemm/qgemm_epilogue_body.h"
}  // namespace portable

const QgemmEpilogueSimd& simd_portable() { return portable::kQgemmEpilogueSimd; }

}  // namespace qgemm_epilogue_detail

const QgemmEpilogueSimd& qgemm_epilogue_simd() {
  static const QgemmEpilogueSimd& best = *pick_for_cpu(&qgemm_epilogue_detail::simd_avx512(),
                                                       &qgemm_epilogue_detail::simd_avx2(),
                                                       &qgemm_epilogue_detail::simd_portable());
  return best;
}

}  // namespace sy::cpu
