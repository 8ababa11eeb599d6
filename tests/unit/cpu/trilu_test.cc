// Trilu against a reference loop over (i, j) with j - i compared to k.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

std::vector<float> ones_from(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 1.0f);
  return v;
}

std::vector<float> reference_trilu(const std::vector<float>& in, int64_t batch, int64_t n, int64_t m, int64_t k,
                                   bool upper) {
  std::vector<float> out(in.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        const size_t at = static_cast<size_t>((b * n + i) * m + j);
        const bool keep = upper ? j - i >= k : j - i <= k;
        out[at] = keep ? in[at] : 0.0f;
      }
  return out;
}

TEST(TriluKernel, UpperAndLowerForManyK) {
  const int64_t batch = 2, n = 4, m = 5;
  const std::vector<float> in = ones_from(batch * n * m);
  for (int upper = 0; upper <= 1; ++upper)
    for (int64_t k : {int64_t{-100}, int64_t{-5}, int64_t{-4}, int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{3},
                      int64_t{5}, int64_t{6}, int64_t{100}, INT64_MAX, INT64_MIN}) {
      auto out = NodeTest("Trilu", 14)
                     .input(make_tensor<float>({batch, n, m}, in))
                     .input(make_tensor<int64_t>({}, {k}))
                     .attr("upper", upper)
                     .run();
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      EXPECT_EQ(to_vector<float>(out->at(0)), reference_trilu(in, batch, n, m, k, upper != 0))
          << "upper " << upper << " k " << k;
    }
}

TEST(TriluKernel, DefaultIsUpperWithKZero) {
  NodeTest t("Trilu", 14);
  t.input(make_tensor<int64_t>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int64_t>({3, 3}, {1, 2, 3, 0, 5, 6, 0, 0, 9}));
  EXPECT_EQ(t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type.shape_string(), "[3,3]");
}

TEST(TriluKernel, StringsZeroToEmpty) {
  auto out = NodeTest("Trilu", 14).input(make_tensor<std::string>({2, 2}, {"a", "b", "c", "d"})).attr("upper", 0).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<std::string>({2, 2}, {"a", "", "c", "d"}));
}

TEST(TriluKernel, BigBatchedWithThreadsAndErrors) {
  const int64_t batch = 16, n = 128, m = 128;
  const std::vector<float> in = ones_from(batch * n * m);
  auto out = NodeTest("Trilu", 14)
                 .input(make_tensor<float>({batch, n, m}, in))
                 .input(make_tensor<int64_t>({}, {2}))
                 .attr("upper", 0)
                 .threads(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<float>(out->at(0)), reference_trilu(in, batch, n, m, 2, false));
  EXPECT_FALSE(NodeTest("Trilu", 14).input(make_tensor<float>({3}, {1, 2, 3})).run().ok());
}

}  // namespace
}  // namespace sy
