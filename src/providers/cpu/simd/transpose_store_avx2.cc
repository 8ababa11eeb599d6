// transpose_store_f32 compiled for avx2 (see simd/transpose_store.h).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "providers/cpu/simd/transpose_store.h"
#include "providers/cpu/simd/vec_avx2.h"

namespace sy::cpu::transpose_store_detail {
namespace avx2 {

using Vec = simd_avx2::Vec;

#include "providers/cpu/simd/transpose_store_body.h"

}  // namespace avx2

void transpose_store_f32_avx2(const TransposeStoreArgs& a) { avx2::transpose_store<avx2::Vec>(a); }

}  // namespace sy::cpu::transpose_store_detail
