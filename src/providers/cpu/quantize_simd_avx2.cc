// The QuantizeSimd loops compiled for avx2 (see quantize_simd.h).
#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "providers/cpu/quantize_simd.h"

namespace sy::cpu::quantize_detail {
namespace avx2 {
constexpr int kLanes = 8;
#include "providers/cpu/quantize_simd_body.h"
}  // namespace avx2

const QuantizeSimd& quantize_simd_avx2() { return avx2::kQuantizeSimd; }

}  // namespace sy::cpu::quantize_detail
