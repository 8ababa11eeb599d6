// The Winograd transforms compiled for AVX-512 (see winograd_transforms.h):
// blocks of 16 channels, 16x16 transposes in registers.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "providers/cpu/conv/winograd_transforms.h"
#include "providers/cpu/simd/interleave_channels.h"
#include "providers/cpu/simd/vec_avx512.h"

namespace sy::cpu::winograd_detail {
namespace avx512 {

using Vec = simd_avx512::Vec;

#include "providers/cpu/conv/winograd_transforms_body.h"

}  // namespace avx512

void input_transform_avx512(const WinogradInputArgs& a) { avx512::input_transform<avx512::Vec>(a); }
void output_transform_avx512(const WinogradOutputArgs& a) { avx512::output_transform<avx512::Vec>(a); }

}  // namespace sy::cpu::winograd_detail
