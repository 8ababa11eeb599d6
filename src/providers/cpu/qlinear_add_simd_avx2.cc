// The QLinearAddSimd loop compiled for avx2 (see qlinear_add_simd.h).
#include <algorithm>
#include <cstring>
#include <utility>

#include "providers/cpu/qlinear_add_simd.h"

namespace sy::cpu::qlinear_add_detail {
namespace avx2 {
constexpr int kLanes = 8;
#include "providers/cpu/qlinear_add_simd_body.h"
}  // namespace avx2

const QLinearAddSimd& qlinear_add_simd_avx2() { return avx2::kQLinearAddSimd; }

}  // namespace sy::cpu::qlinear_add_detail
