// The baseline transpose_store_f32 and the run-time choice (see
// simd/transpose_store.h).
#include "providers/cpu/simd/transpose_store.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/cpu_features.h"
#include "providers/cpu/simd/vec_portable.h"

namespace sy::cpu {
namespace transpose_store_detail {
namespace portable {

using Vec = simd_portable::Vec;

#include "providers/cpu/simd/transpose_store_body.h"

}  // namespace portable

void transpose_store_f32_portable(const TransposeStoreArgs& a) { portable::transpose_store<portable::Vec>(a); }

}  // namespace transpose_store_detail

void transpose_store_f32(const TransposeStoreArgs& a) {
  using Fn = void (*)(const TransposeStoreArgs&);
  static const Fn best = pick_for_cpu<Fn>(&transpose_store_detail::transpose_store_f32_avx512,
                                          &transpose_store_detail::transpose_store_f32_avx2,
                                          &transpose_store_detail::transpose_store_f32_portable);
  best(a);
}

void transpose_f32(const float* src, int64_t ld_src, int64_t rows, int64_t cols, float* dst, int64_t ld_dst) {
  TransposeStoreArgs t;
  t.src = src;
  t.ld_src = ld_src;
  t.rows = rows;
  t.cols = cols;
  t.dst = dst;
  t.ld_dst = ld_dst;
  transpose_store_f32(t);
}

}  // namespace sy::cpu
