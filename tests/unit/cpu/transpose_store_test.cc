// transpose_store_f32 against a loop written here, for every ISA variant
// this CPU runs: ragged edges, strides wider than the block, the residual
// and the clamp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "providers/cpu/simd/transpose_store.h"
#include "testing/isa_variants.h"
#include "testing/test_values.h"

namespace sy::cpu {
namespace {

using Fn = void (*)(const TransposeStoreArgs&);

// With `hostile`, src holds NaN, infinities, -0.0 and denormals, which
// the clamp must carry through as std::min / std::max do (NaN stays NaN).
void check(Fn fn, const std::string& isa, int64_t rows, int64_t cols, bool residual, bool clamp, bool hostile = false) {
  const int64_t ld_src = cols + 3, ld_dst = rows + 5;
  std::vector<float> src = sy::testing::test_values(static_cast<size_t>(rows * ld_src), 1);
  if (hostile) sy::testing::sprinkle_nonfinite(src, 3, static_cast<uint32_t>(rows + cols));
  const std::vector<float> z = sy::testing::test_values(static_cast<size_t>(cols * ld_dst), 2);
  std::vector<float> dst(static_cast<size_t>(cols * ld_dst), 42.0f);
  TransposeStoreArgs a;
  a.src = src.data();
  a.ld_src = ld_src;
  a.rows = rows;
  a.cols = cols;
  a.dst = dst.data();
  a.ld_dst = ld_dst;
  a.residual = residual ? z.data() : nullptr;
  a.clamp = clamp;
  a.lo = -0.25f;
  a.hi = 0.5f;
  fn(a);
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < ld_dst; ++i) {
      float want = 42.0f;  // past `rows`: untouched
      if (i < rows) {
        want = src[static_cast<size_t>(i * ld_src + j)];
        if (residual) want += z[static_cast<size_t>(j * ld_dst + i)];
        if (clamp) want = std::min(std::max(want, a.lo), a.hi);
      }
      ASSERT_TRUE(sy::testing::same_or_both_nan(dst[static_cast<size_t>(j * ld_dst + i)], want))
          << isa << " rows " << rows << " cols " << cols << " residual " << residual << " clamp " << clamp << " at dst["
          << j << "][" << i << "]";
    }
}

TEST(TransposeStoreTest, EveryVariantMatchesTheLoop) {
  auto variants = sy::testing::isa_variants<Fn>(&transpose_store_detail::transpose_store_f32_portable,
                                                &transpose_store_detail::transpose_store_f32_avx2,
                                                &transpose_store_detail::transpose_store_f32_avx512);
  variants.push_back({"dispatched", 0, &transpose_store_f32});
  for (const auto& v : variants) {
    for (int64_t rows : {1, 7, 16, 17, 49})
      for (int64_t cols : {1, 8, 16, 33, 64})
        for (int mode = 0; mode < 8; ++mode)
          check(v.fn, v.name, rows, cols, (mode & 1) != 0, (mode & 2) != 0, (mode & 4) != 0);
  }
}

}  // namespace
}  // namespace sy::cpu
