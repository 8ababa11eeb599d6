// The QuantizeSimd loops compiled for avx2 (see quantize_simd.h).
#include <cstring>
#include <limits>

#include "providers/cpu/quantize_simd.h"

namespace sy::cpu::quantize_detail {
namespace avx2 {
#include "providers/cpu/quantize_simd_body.h"
}  // namespace avx2

const QuantizeSimd& quantize_simd_avx2() { return avx2::kQuantizeSimd; }

}  // namespace sy::cpu::quantize_detail
