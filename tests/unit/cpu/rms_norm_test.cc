// RMSNormalization against a double-precision reference that walks X
// element by element and finds each scale element by numpy broadcasting.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

// The scale element numpy broadcasting pairs with flat element i of X.
size_t broadcast_index(int64_t i, const std::vector<int64_t>& xs, const std::vector<int64_t>& ss) {
  int64_t at = 0, stride = 1;
  for (size_t k = 0; k < ss.size(); ++k) {
    const size_t sd = ss.size() - 1 - k;
    const size_t xd = xs.size() - 1 - k;
    const int64_t coord = i % xs[xd];
    if (ss[sd] != 1) at += coord * stride;
    stride *= ss[sd];
    i /= xs[xd];
  }
  return static_cast<size_t>(at);
}

std::vector<float> rms_norm_ref(const std::vector<float>& x, const std::vector<int64_t>& xs,
                                const std::vector<float>& scale, const std::vector<int64_t>& ss, int64_t axis,
                                double eps) {
  if (axis < 0) axis += static_cast<int64_t>(xs.size());
  int64_t n = 1;
  for (size_t d = static_cast<size_t>(axis); d < xs.size(); ++d) n *= xs[d];
  std::vector<float> y(x.size());
  for (size_t r = 0; r < x.size() / static_cast<size_t>(n); ++r) {
    double mean_square = 0;
    for (int64_t j = 0; j < n; ++j) mean_square += std::pow(static_cast<double>(x[r * n + j]), 2);
    const double rms = std::sqrt(mean_square / static_cast<double>(n) + eps);
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = static_cast<int64_t>(r) * n + j;
      y[static_cast<size_t>(i)] =
          static_cast<float>(x[static_cast<size_t>(i)] / rms * scale[broadcast_index(i, xs, ss)]);
    }
  }
  return y;
}

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void check(const std::vector<int64_t>& xs, const std::vector<int64_t>& ss, int64_t axis, float eps, int threads = 1) {
  const std::vector<float> x = random_floats(static_cast<size_t>(count(xs)), -3, 3, 1);
  const std::vector<float> scale = random_floats(static_cast<size_t>(count(ss)), -2, 2, 2);
  auto out = NodeTest("RMSNormalization", 23)
                 .input(make_tensor<float>(Shape(xs), x))
                 .input(make_tensor<float>(Shape(ss), scale))
                 .attr("axis", axis)
                 .attr("epsilon", eps)
                 .threads(threads)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>(Shape(xs), rms_norm_ref(x, xs, scale, ss, axis, eps)), 1e-5,
                     1e-6);
}

TEST(RMSNormalization, EveryAxisWithTheNormalizedShapeAsScale) {
  const std::vector<int64_t> xs = {2, 3, 4, 5};
  for (int64_t axis = -4; axis < 4; ++axis) {
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 4 : axis);
    check(xs, std::vector<int64_t>(xs.begin() + static_cast<std::ptrdiff_t>(a), xs.end()), axis, 1e-5f);
  }
  check({3, 7}, {7}, -1, 0.1f);
}

TEST(RMSNormalization, ScaleBroadcastsWithinAndAcrossRows) {
  check({2, 3, 5}, {1, 5}, 1, 1e-5f);     // broadcast inside the normalized dims
  check({2, 3, 5}, {3, 1}, 1, 1e-5f);
  check({2, 3, 5}, {1}, 0, 1e-5f);        // one value for everything
  check({2, 3, 4}, {2, 1, 4}, 2, 1e-5f);  // varies along a row dim too
  check({2, 3, 4}, {2, 3, 4}, -1, 1e-5f);
}

TEST(RMSNormalization, ManyRowsOnThreads) { check({64, 33, 40}, {40}, -1, 1e-5f, 3); }

TEST(RMSNormalization, HandComputed) {
  // Row [3, 4]: mean square 12.5, so y = x / sqrt(12.5) * scale.
  auto out = NodeTest("RMSNormalization", 23)
                 .input(make_tensor<float>({1, 2}, {3, 4}))
                 .input(make_tensor<float>({2}, {1, 2}))
                 .attr("epsilon", 0.0f)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const float r = std::sqrt(12.5f);
  expect_tensor_near(out->at(0), make_tensor<float>({1, 2}, {3 / r, 8 / r}));
}

TEST(RMSNormalization, OutputTakesTheScaleType) {
  // X float16 [2, 2] (rows {1, 1} and {2, 2}: rms 1 and 2), scale float {3, -1}.
  Tensor x = Tensor::allocate(DataType::kFloat16, Shape{2, 2}).value();
  for (int i = 0; i < 4; ++i) x.data<uint16_t>()[i] = float_to_float16(i < 2 ? 1.0f : 2.0f);
  auto out = NodeTest("RMSNormalization", 23)
                 .input(x)
                 .input(make_tensor<float>({2}, {3, -1}))
                 .attr("epsilon", 0.0f)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({2, 2}, {3, -1, 3, -1}));
  NodeTest t("RMSNormalization", 23);
  t.input(make_tensor<double>({1, 2}, {3, 4})).input(make_tensor<double>({2}, {1, 1})).attr("stash_type", 11);
  auto d = t.run();
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  const double r = std::sqrt(12.5 + 1e-5);
  expect_tensor_near(d->at(0), make_tensor<double>({1, 2}, {3 / r, 4 / r}), 1e-12, 0);
  const ValueType& yt = t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type;
  EXPECT_EQ(yt.dtype, DataType::kDouble);
  EXPECT_EQ(yt.shape_string(), "[1,2]");
}

TEST(RMSNormalization, BadInputsAreErrors) {
  auto run = [](const std::vector<int64_t>& xs, const std::vector<int64_t>& ss, int64_t axis, int64_t stash) {
    return NodeTest("RMSNormalization", 23)
        .input(make_tensor<float>(Shape(xs), std::vector<float>(static_cast<size_t>(count(xs)), 1.0f)))
        .input(make_tensor<float>(Shape(ss), std::vector<float>(static_cast<size_t>(count(ss)), 1.0f)))
        .attr("axis", axis)
        .attr("stash_type", stash)
        .run();
  };
  auto wrong_scale = run({2, 3}, {2}, -1, 1);
  ASSERT_FALSE(wrong_scale.ok());
  EXPECT_NE(wrong_scale.status().message().find("broadcast"), std::string::npos) << wrong_scale.status().to_string();
  EXPECT_FALSE(run({2, 3}, {1, 1, 3}, -1, 1).ok());  // more dims than X: Y would grow
  EXPECT_FALSE(run({2, 3}, {3}, 2, 1).ok());
  EXPECT_FALSE(run({2, 3}, {3}, -3, 1).ok());
  auto stash = run({2, 3}, {3}, -1, 2);
  ASSERT_FALSE(stash.ok());
  EXPECT_NE(stash.status().message().find("stash_type"), std::string::npos);
}

}  // namespace
}  // namespace sy::testing
