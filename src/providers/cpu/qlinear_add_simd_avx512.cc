// The QLinearAddSimd loop compiled for avx512 (see qlinear_add_simd.h).
#include <algorithm>
#include <cstring>
#include <utility>

#include "providers/cpu/qlinear_add_simd.h"

namespace sy::cpu::qlinear_add_detail {
namespace avx512 {
constexpr int kLanes = 16;
#include "providers/cpu/qlinear_add_simd_body.h"
}  // namespace avx512

const QLinearAddSimd& qlinear_add_simd_avx512() { return avx512::kQLinearAddSimd; }

}  // namespace sy::cpu::qlinear_add_detail
