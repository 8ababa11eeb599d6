// The channel-blocked depthwise convolution compiled for AVX2+FMA: blocks of 8 channels
// (see depthwise_blocked.h).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "providers/cpu/conv/depthwise_blocked.h"
#include "providers/cpu/simd/interleave_channels.h"
#include "providers/cpu/simd/vec_avx2.h"

namespace sy::cpu::depthwise_detail {
namespace avx2 {

using Vec = simd_avx2::Vec;

#include "providers/cpu/conv/depthwise_blocked_body.h"

}  // namespace avx2

void depthwise_band_avx2(const DepthwiseBandArgs& a) { avx2::depthwise_band<avx2::Vec>(a); }

}  // namespace sy::cpu::depthwise_detail
