// SwiGLU against a double-precision reference a * sigmoid(alpha a) * b.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_near;
using testing::make_tensor;
using testing::NodeTest;

std::vector<float> reference_swiglu(const std::vector<float>& a, const std::vector<float>& b, double alpha) {
  std::vector<float> y(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const double g = a[i];
    y[i] = static_cast<float>(g / (1.0 + std::exp(-alpha * g)) * b[i]);
  }
  return y;
}

TEST(SwigluKernel, MatchesReferenceForSeveralAlphas) {
  const std::vector<float> a = {-20, -3, -0.5f, 0, 0.5f, 3, 5, 20, 1, -1};
  const std::vector<float> b = {1, 2, -1, 4, 0.25f, -2, 3, 0.5f, -7, 6};
  for (float alpha : {1.0f, 0.5f, 1.702f}) {
    auto out = NodeTest("SwiGLU", 28)
                   .input(make_tensor<float>({2, 5}, a))
                   .input(make_tensor<float>({2, 5}, b))
                   .attr("alpha", alpha)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_tensor_near(out->at(0), make_tensor<float>({2, 5}, reference_swiglu(a, b, alpha)), 1e-6, 1e-7);
  }
}

TEST(SwigluKernel, DefaultAlphaAndDouble) {
  // 1 * sigmoid(1) * 2, -2 * sigmoid(-2) * 3, by hand.
  auto out = NodeTest("SwiGLU", 28)
                 .input(make_tensor<double>({2}, {1, -2}))
                 .input(make_tensor<double>({2}, {2, 3}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<double>({2}, {1.4621171572600098, -0.7152175321327052}), 1e-14,
                     1e-14);
}

TEST(SwigluKernel, RejectsMismatchedShapes) {
  auto out = NodeTest("SwiGLU", 28)
                 .input(make_tensor<float>({2}, {1, 2}))
                 .input(make_tensor<float>({1, 2}, {1, 2}))
                 .run();
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace sy
