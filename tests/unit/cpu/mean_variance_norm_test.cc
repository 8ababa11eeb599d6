// MeanVarianceNormalization against a double-precision reference that
// gives each element the key of its coordinates on the kept dims, sums x
// and x^2 per key, and computes y = (x - mean) / (sqrt(var) + 1e-9), as the
// op's function body in the spec does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

std::vector<float> mvn_ref(const std::vector<float>& x, const std::vector<int64_t>& shape,
                           const std::vector<int64_t>& axes) {
  const auto rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(shape.size(), axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  std::vector<size_t> key(x.size());
  size_t keys = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    size_t rest = i, k = 0, place = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      const size_t coord = rest % static_cast<size_t>(shape[d]);
      rest /= static_cast<size_t>(shape[d]);
      if (reduced[d]) continue;
      k += coord * place;
      place *= static_cast<size_t>(shape[d]);
    }
    key[i] = k;
    keys = std::max(keys, k + 1);
  }
  std::vector<double> sum(keys, 0), square_sum(keys, 0), count(keys, 0);
  for (size_t i = 0; i < x.size(); ++i) {
    sum[key[i]] += x[i];
    square_sum[key[i]] += static_cast<double>(x[i]) * x[i];
    count[key[i]] += 1;
  }
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double mean = sum[key[i]] / count[key[i]];
    const double var = std::max(0.0, square_sum[key[i]] / count[key[i]] - mean * mean);
    y[i] = static_cast<float>((x[i] - mean) / (std::sqrt(var) + 1e-9));
  }
  return y;
}

void check(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, bool default_axes = false,
           int threads = 1) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  const std::vector<float> x = random_floats(static_cast<size_t>(count), -2, 4, 9);
  NodeTest t("MeanVarianceNormalization", 13);
  t.input(make_tensor<float>(Shape(shape), x)).threads(threads);
  if (!default_axes) t.attr("axes", axes);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>(Shape(shape), mvn_ref(x, shape, axes)), 1e-4, 1e-5);
}

TEST(MeanVarianceNormalization, DefaultAxesArePerChannel) {
  check({2, 3, 4, 5}, {0, 2, 3}, true);
  check({3, 3, 3, 1}, {0, 2, 3}, true);
}

TEST(MeanVarianceNormalization, OtherAxesAndSizeOneDims) {
  check({2, 3, 4, 5}, {1});
  check({2, 3, 4, 5}, {-1, -2});
  check({2, 3, 4, 5}, {0, 1, 2, 3});
  check({2, 1, 4, 1, 3}, {0, 3, 4});  // size-1 dims between merged runs
  check({4, 6}, {0});
  check({2, 3}, {});                   // an empty list reduces every dim
}

TEST(MeanVarianceNormalization, ManyGroupsOnThreads) { check({8, 16, 12, 12}, {2, 3}, false, 3); }

TEST(MeanVarianceNormalization, GroupOfOneValueGivesZero) {
  auto out = NodeTest("MeanVarianceNormalization", 9)
                 .input(make_tensor<float>({2, 1}, {5, -3}))
                 .attr("axes", std::vector<int64_t>{1})
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({2, 1}, {0, 0}));
}

TEST(MeanVarianceNormalization, BadAxesAreErrors) {
  const Tensor x = make_tensor<float>({2, 3, 4}, std::vector<float>(24, 1.0f));
  EXPECT_FALSE(NodeTest("MeanVarianceNormalization", 13).input(x).run().ok());  // default axis 3 is out of range
  auto repeated =
      NodeTest("MeanVarianceNormalization", 13).input(x).attr("axes", std::vector<int64_t>{0, -3}).run();
  EXPECT_FALSE(repeated.ok());
  EXPECT_FALSE(NodeTest("MeanVarianceNormalization", 13).input(x).attr("axes", std::vector<int64_t>{5}).run().ok());
}

}  // namespace
}  // namespace sy::testing
