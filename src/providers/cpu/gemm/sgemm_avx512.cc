// AVX-512 micro-kernel: 6 rows x 64 columns (24 zmm accumulators, 4 B
// vectors, one broadcast), so each k step does 24 FMAs for 10 loads. Tiles
// narrower than 64 columns run a variant with fewer vectors, and rows below
// 6 one with fewer rows, so edges waste no work.
#include <cstdint>

#include "providers/cpu/gemm/sgemm_kernels.h"
#include "providers/cpu/simd/vec_avx512.h"

namespace sy::cpu::gemm_detail {
namespace avx512 {

using Vec = simd_avx512::Vec;

#include "providers/cpu/gemm/sgemm_tile_body.h"

}  // namespace avx512

void micro_kernel_avx512(const MicroTile& t) { avx512::micro_kernel<avx512::Vec, kNrAvx512 / 16>(t); }

}  // namespace sy::cpu::gemm_detail
