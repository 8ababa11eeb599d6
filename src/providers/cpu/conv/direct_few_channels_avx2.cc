// The few-channel direct convolution compiled for AVX2+FMA (see
// direct_few_channels.h).
#include <algorithm>
#include <cstdint>

#include "providers/cpu/conv/direct_few_channels.h"
#include "providers/cpu/simd/vec_avx2.h"

namespace sy::cpu::direct_detail {
namespace avx2 {

using Vec = simd_avx2::Vec;

#include "providers/cpu/conv/direct_few_channels_body.h"

}  // namespace avx2

void direct_row_avx2(const DirectRowArgs& a) { avx2::direct_row<avx2::Vec>(a); }

}  // namespace sy::cpu::direct_detail
