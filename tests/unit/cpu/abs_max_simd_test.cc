// abs_max_f32_rows, each ISA's build, against a plain loop: row strides,
// every row length around the vector width, and non-finite elements.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/cpu_features.h"
#include "providers/cpu/abs_max_simd.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

using Fn = float (*)(const float*, int64_t, int64_t, int64_t);

std::vector<std::pair<const char*, Fn>> isas() {
  std::vector<std::pair<const char*, Fn>> out = {{"portable", &cpu::abs_max_detail::abs_max_f32_rows_portable}};
  if (cpu_supports(CpuIsa::kAvx2)) out.emplace_back("avx2", &cpu::abs_max_detail::abs_max_f32_rows_avx2);
  if (cpu_supports(CpuIsa::kAvx512)) out.emplace_back("avx512", &cpu::abs_max_detail::abs_max_f32_rows_avx512);
  return out;
}

TEST(AbsMax, EveryRowLengthWithAStrideBetweenRows) {
  for (const auto& [name, fn] : isas()) {
    for (int64_t n = 1; n <= 70; ++n) {
      const int64_t rows = 5, ld = n + 3;
      std::vector<float> x = random_floats(static_cast<size_t>(rows * ld), -2.0f, 2.0f, static_cast<uint32_t>(n));
      // The largest |x| sits in the last row's last column, negative; the
      // gaps between rows hold larger values that must not count.
      x[static_cast<size_t>((rows - 1) * ld + n - 1)] = -7.5f;
      for (int64_t r = 0; r + 1 < rows; ++r)
        for (int64_t c = n; c < ld; ++c) x[static_cast<size_t>(r * ld + c)] = 100.0f;
      SCOPED_TRACE(std::string(name) + " n=" + std::to_string(n));
      EXPECT_EQ(fn(x.data(), rows, n, ld), 7.5f);
      EXPECT_EQ(cpu::abs_max_f32_rows(x.data(), rows, n, ld), 7.5f);
    }
  }
}

TEST(AbsMax, NonFiniteElementsGiveInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const auto& [name, fn] : isas()) {
    for (const float bad : {std::nanf(""), inf, -inf}) {
      for (const int64_t at : {int64_t{0}, int64_t{35}, int64_t{64}}) {  // a vector, the tail, the second row
        std::vector<float> x(2 * 40, 0.25f);
        x[static_cast<size_t>(at)] = bad;
        SCOPED_TRACE(std::string(name) + " at " + std::to_string(at));
        EXPECT_EQ(fn(x.data(), 2, 40, 40), inf);
      }
    }
    std::vector<float> zeros(48, 0.0f);
    EXPECT_EQ(fn(zeros.data(), 3, 16, 16), 0.0f);
  }
}

}  // namespace
}  // namespace sy::testing
