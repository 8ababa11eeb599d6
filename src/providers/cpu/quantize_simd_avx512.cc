// The QuantizeSimd loops compiled for avx512 (see quantize_simd.h).
#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "providers/cpu/quantize_simd.h"

namespace sy::cpu::quantize_detail {
namespace avx512 {
constexpr int kLanes = 16;
#include "providers/cpu/quantize_simd_body.h"
}  // namespace avx512

const QuantizeSimd& quantize_simd_avx512() { return avx512::kQuantizeSimd; }

}  // namespace sy::cpu::quantize_detail
