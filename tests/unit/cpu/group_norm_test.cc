// GroupNormalization against a double-precision reference: per sample and
// group of adjacent channels, the mean and (biased) variance over the
// group's channels and positions; scale and bias per channel (version 21)
// or per group (version 18).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

std::vector<float> group_norm_ref(const std::vector<float>& x, const std::vector<int64_t>& shape, int64_t groups,
                                  const std::vector<float>& scale, const std::vector<float>& bias, double eps,
                                  bool per_group) {
  const int64_t n = shape[0], channels = shape[1];
  int64_t spatial = 1;
  for (size_t d = 2; d < shape.size(); ++d) spatial *= shape[d];
  const int64_t per = channels / groups;
  std::vector<float> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      double sum = 0, square_sum = 0;
      for (int64_t c = g * per; c < (g + 1) * per; ++c)
        for (int64_t s = 0; s < spatial; ++s) {
          const double v = x[static_cast<size_t>((b * channels + c) * spatial + s)];
          sum += v;
          square_sum += v * v;
        }
      const double count = static_cast<double>(per * spatial);
      const double mean = sum / count;
      const double var = square_sum / count - mean * mean;
      for (int64_t c = g * per; c < (g + 1) * per; ++c)
        for (int64_t s = 0; s < spatial; ++s) {
          const size_t at = static_cast<size_t>((b * channels + c) * spatial + s);
          const size_t p = static_cast<size_t>(per_group ? g : c);
          y[at] = static_cast<float>((x[at] - mean) / std::sqrt(var + eps) * scale[p] + bias[p]);
        }
    }
  return y;
}

void check(const std::vector<int64_t>& shape, int64_t groups, int opset, float eps = 1e-5f, int threads = 1,
           int64_t stash_type = 1) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  const bool per_group = opset < 21;
  const auto params = static_cast<size_t>(per_group ? groups : shape[1]);
  const std::vector<float> x = random_floats(static_cast<size_t>(count), -3, 5, 6);
  const std::vector<float> scale = random_floats(params, 0.5f, 1.5f, 7);
  const std::vector<float> bias = random_floats(params, -1, 1, 8);
  auto out = NodeTest("GroupNormalization", opset)
                 .input(make_tensor<float>(Shape(shape), x))
                 .input(make_tensor<float>({static_cast<int64_t>(params)}, scale))
                 .input(make_tensor<float>({static_cast<int64_t>(params)}, bias))
                 .attr("num_groups", groups)
                 .attr("epsilon", eps)
                 .attr("stash_type", stash_type)
                 .threads(threads)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0),
                     make_tensor<float>(Shape(shape), group_norm_ref(x, shape, groups, scale, bias, eps, per_group)),
                     1e-4, 1e-5);
}

TEST(GroupNormalization, PerChannelScaleFromVersion21) {
  for (int64_t groups : {1, 2, 3, 6}) check({2, 6, 3, 4}, groups, 21);
  check({3, 4, 2, 2}, 2, 21, 1e-2f);
  check({2, 4}, 2, 21);  // no spatial dims
  check({2, 4, 3}, 4, 21, 1e-5f, 1, 11);
}

TEST(GroupNormalization, PerGroupScaleInVersion18) {
  for (int64_t groups : {1, 2, 4}) check({2, 4, 5}, groups, 18);
}

TEST(GroupNormalization, ManyGroupsOnThreads) { check({4, 32, 16, 16}, 8, 21, 1e-5f, 3); }

TEST(GroupNormalization, HandComputed) {
  // One group {1, 3}: mean 2, var 1, so normalized {-1, 1}; channel scales
  // {2, 3} and biases {0, 1} give {-2, 4}.
  auto out = NodeTest("GroupNormalization", 21)
                 .input(make_tensor<float>({1, 2, 1}, {1, 3}))
                 .input(make_tensor<float>({2}, {2, 3}))
                 .input(make_tensor<float>({2}, {0, 1}))
                 .attr("num_groups", 1)
                 .attr("epsilon", 0.0f)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 2, 1}, {-2, 4}));
}

TEST(GroupNormalization, BadInputsAreErrors) {
  auto run = [](int opset, int64_t channels, int64_t groups, int64_t params) {
    return NodeTest("GroupNormalization", opset)
        .input(make_tensor<float>({1, channels, 2}, std::vector<float>(static_cast<size_t>(channels * 2), 1.0f)))
        .input(make_tensor<float>({params}, std::vector<float>(static_cast<size_t>(params), 1.0f)))
        .input(make_tensor<float>({params}, std::vector<float>(static_cast<size_t>(params), 0.0f)))
        .attr("num_groups", groups)
        .run();
  };
  ASSERT_TRUE(run(21, 4, 2, 4).ok());
  ASSERT_TRUE(run(18, 4, 2, 2).ok());
  EXPECT_FALSE(run(21, 4, 2, 2).ok());  // version 21 wants one value per channel
  EXPECT_FALSE(run(18, 4, 2, 4).ok());  // version 18 one per group
  auto uneven = run(21, 6, 4, 6);
  ASSERT_FALSE(uneven.ok());
  EXPECT_NE(uneven.status().message().find("not a multiple of num_groups"), std::string::npos)
      << uneven.status().to_string();
  EXPECT_FALSE(run(21, 4, 0, 4).ok());
  EXPECT_FALSE(NodeTest("GroupNormalization", 21)
                   .input(make_tensor<float>({1, 2}, {1, 2}))
                   .input(make_tensor<float>({2}, {1, 1}))
                   .input(make_tensor<float>({2}, {0, 0}))
                   .run()
                   .ok());  // num_groups is required
}

}  // namespace
}  // namespace sy::testing
