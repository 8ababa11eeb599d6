// transpose_store_f32 compiled for avx512 (see simd/transpose_store.h).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "providers/cpu/simd/transpose_store.h"
#include "providers/cpu/simd/vec_avx512.h"

namespace sy::cpu::transpose_store_detail {
namespace avx512 {

using Vec = simd_avx512::Vec;

#include "providers/cpu/simd/transpose_store_body.h"

}  // namespace avx512

void transpose_store_f32_avx512(const TransposeStoreArgs& a) { avx512::transpose_store<avx512::Vec>(a); }

}  // namespace sy::cpu::transpose_store_detail
