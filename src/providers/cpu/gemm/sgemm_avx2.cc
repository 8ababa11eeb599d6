// AVX2+FMA micro-kernel: 6 rows x 16 columns (12 ymm accumulators, 2 B
// vectors, one broadcast). Narrow and short edge tiles run variants with
// fewer vectors or rows.
#include <cstdint>

#include "providers/cpu/gemm/sgemm_kernels.h"
#include "providers/cpu/simd/vec_avx2.h"

namespace sy::cpu::gemm_detail {
namespace avx2 {

using Vec = simd_avx2::Vec;

#include "providers/cpu/gemm/sgemm_tile_body.h"

}  // namespace avx2

void micro_kernel_avx2(const MicroTile& t) { avx2::micro_kernel<avx2::Vec, kNrAvx2 / 8>(t); }

}  // namespace sy::cpu::gemm_detail
