// LRN against the spec's formula evaluated in double for every element:
// the window of channel c is [c - floor((size-1)/2), c + ceil((size-1)/2)]
// cut at the ends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

struct LrnCase {
  std::vector<int64_t> shape;
  int64_t size = 3;
  float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;
};

template <typename T>
std::vector<T> lrn_ref(const std::vector<T>& x, const LrnCase& c) {
  const int64_t n = c.shape[0], channels = c.shape[1];
  int64_t spatial = 1;
  for (size_t d = 2; d < c.shape.size(); ++d) spatial *= c.shape[d];
  std::vector<T> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < channels; ++ch)
      for (int64_t s = 0; s < spatial; ++s) {
        const int64_t lo = std::max<int64_t>(0, ch - (c.size - 1) / 2);
        const int64_t hi = std::min<int64_t>(channels - 1, ch + static_cast<int64_t>(std::ceil((c.size - 1) / 2.0)));
        double square_sum = 0;
        for (int64_t i = lo; i <= hi; ++i) {
          const auto v = static_cast<double>(x[static_cast<size_t>((b * channels + i) * spatial + s)]);
          square_sum += v * v;
        }
        const double alpha = c.alpha, beta = c.beta, bias = c.bias;
        const size_t at = static_cast<size_t>((b * channels + ch) * spatial + s);
        y[at] = static_cast<T>(x[at] / std::pow(bias + alpha / static_cast<double>(c.size) * square_sum, beta));
      }
  return y;
}

template <typename T>
void check(const LrnCase& c, int threads = 1) {
  int64_t count = 1;
  for (int64_t d : c.shape) count *= d;
  const std::vector<float> f = random_floats(static_cast<size_t>(count), -4, 4, 5);
  const std::vector<T> x(f.begin(), f.end());
  auto out = NodeTest("LRN", 13)
                 .input(make_tensor<T>(Shape(c.shape), x))
                 .attr("size", c.size)
                 .attr("alpha", c.alpha)
                 .attr("beta", c.beta)
                 .attr("bias", c.bias)
                 .threads(threads)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<T>(Shape(c.shape), lrn_ref(x, c)), 1e-5, 1e-6);
}

TEST(LRN, OddAndEvenWindowSizes) {
  for (int64_t size = 1; size <= 7; ++size) {
    SCOPED_TRACE("size " + std::to_string(size));
    check<float>({.shape = {2, 5, 3, 3}, .size = size, .alpha = 0.5f, .beta = 0.6f, .bias = 2.0f});
  }
}

TEST(LRN, RanksTypesAndThreads) {
  check<float>({.shape = {3, 4}});                                   // no spatial dims
  check<float>({.shape = {1, 6, 300}, .size = 5, .alpha = 1e-2f});  // past one block of positions
  check<double>({.shape = {2, 3, 2, 2, 2}, .size = 2, .alpha = 0.1f, .beta = 1.0f});
  check<float>({.shape = {4, 16, 20, 20}, .size = 5, .alpha = 1e-3f}, 3);
}

TEST(LRN, HandComputed) {
  // One channel, size 1: y = x / (1 + 1 * x^2)^0.5; x = 2 gives 2 / sqrt(5).
  auto out = NodeTest("LRN", 1)
                 .input(make_tensor<float>({1, 1, 1}, {2}))
                 .attr("size", 1)
                 .attr("alpha", 1.0f)
                 .attr("beta", 0.5f)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 1, 1}, {2 / std::sqrt(5.0f)}));
}

TEST(LRN, BadInputsAreErrors) {
  EXPECT_FALSE(NodeTest("LRN", 13).input(make_tensor<float>({1, 2}, {1, 2})).run().ok());  // size is required
  auto zero = NodeTest("LRN", 13).input(make_tensor<float>({1, 2}, {1, 2})).attr("size", 0).run();
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("size must be positive"), std::string::npos) << zero.status().to_string();
  EXPECT_FALSE(NodeTest("LRN", 13).input(make_tensor<float>({2}, {1, 2})).attr("size", 1).run().ok());
}

}  // namespace
}  // namespace sy::testing
