// The baseline QuantizeSimd loops and the run-time choice (see
// quantize_simd.h).
#include "providers/cpu/quantize_simd.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "core/cpu_features.h"

namespace sy::cpu {
namespace quantize_detail {
namespace portable {
constexpr int kLanes = 4;  // SSE2
#include "providers/cpu/quantize_simd_body.h"
}  // namespace portable

const QuantizeSimd& quantize_simd_portable() { return portable::kQuantizeSimd; }

}  // namespace quantize_detail

const QuantizeSimd& quantize_simd() {
  static const QuantizeSimd& best = *pick_for_cpu(&quantize_detail::quantize_simd_avx512(),
                                                  &quantize_detail::quantize_simd_avx2(),
                                                  &quantize_detail::quantize_simd_portable());
  return best;
}

}  // namespace sy::cpu
