// The baseline QLinearAddSimd loop and the run-time choice (see
// qlinear_add_simd.h).
#include "providers/cpu/qlinear_add_simd.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/cpu_features.h"

namespace sy::cpu {
namespace qlinear_add_detail {
namespace portable {
constexpr int kLanes = 4;  // SSE2
#include "providers/cpu/qlinear_add_simd_body.h"
}  // namespace portable

const QLinearAddSimd& qlinear_add_simd_portable() { return portable::kQLinearAddSimd; }

}  // namespace qlinear_add_detail

const QLinearAddSimd& qlinear_add_simd() {
  static const QLinearAddSimd& best = *pick_for_cpu(&qlinear_add_detail::qlinear_add_simd_avx512(),
                                                    &qlinear_add_detail::qlinear_add_simd_avx2(),
                                                    &qlinear_add_detail::qlinear_add_simd_portable());
  return best;
}

}  // namespace sy::cpu
