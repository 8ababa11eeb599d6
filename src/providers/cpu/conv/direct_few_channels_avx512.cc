// The few-channel direct convolution compiled for AVX-512 (see
// direct_few_channels.h).
#include <algorithm>
#include <cstdint>

#include "providers/cpu/conv/direct_few_channels.h"
#include "providers/cpu/simd/vec_avx512.h"

namespace sy::cpu::direct_detail {
namespace avx512 {

using Vec = simd_avx512::Vec;

#include "providers/cpu/conv/direct_few_channels_body.h"

}  // namespace avx512

void direct_row_avx512(const DirectRowArgs& a) { avx512::direct_row<avx512::Vec>(a); }

}  // namespace sy::cpu::direct_detail
