// The Winograd transforms compiled for AVX2+FMA (see winograd_transforms.h):
// blocks of 8 channels, 8x8 transposes in registers.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "providers/cpu/conv/winograd_transforms.h"
#include "providers/cpu/simd/interleave_channels.h"
#include "providers/cpu/simd/vec_avx2.h"

namespace sy::cpu::winograd_detail {
namespace avx2 {

using Vec = simd_avx2::Vec;

#include "providers/cpu/conv/winograd_transforms_body.h"

}  // namespace avx2

void input_transform_avx2(const WinogradInputArgs& a) { avx2::input_transform<avx2::Vec>(a); }
void output_transform_avx2(const WinogradOutputArgs& a) { avx2::output_transform<avx2::Vec>(a); }

}  // namespace sy::cpu::winograd_detail
