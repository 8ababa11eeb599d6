// The channel-blocked depthwise convolution compiled for AVX-512: blocks of 16 channels
// (see depthwise_blocked.h).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "providers/cpu/conv/depthwise_blocked.h"
#include "providers/cpu/simd/interleave_channels.h"
#include "providers/cpu/simd/vec_avx512.h"

namespace sy::cpu::depthwise_detail {
namespace avx512 {

using Vec = simd_avx512::Vec;

#include "providers/cpu/conv/depthwise_blocked_body.h"

}  // namespace avx512

void depthwise_band_avx512(const DepthwiseBandArgs& a) { avx512::depthwise_band<avx512::Vec>(a); }

}  // namespace sy::cpu::depthwise_detail
