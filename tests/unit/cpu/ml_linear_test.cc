// LinearClassifier and LinearRegressor against hand-computed scores.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "testing/node_test.h"
#include "unit/cpu/ml_test_util.h"

namespace sy {
namespace {

using testing::expect_all_near;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

TEST(MlLinearRegressor, TwoTargetsWithIntercepts) {
  // Rows of W: [1, 2] and [3, 4]; b = [0.5, -1].
  for (int threads : {1, 3}) {
    auto out = NodeTest("LinearRegressor", 1, "ai.onnx.ml")
                   .attr("coefficients", std::vector<float>{1, 2, 3, 4})
                   .attr("intercepts", std::vector<float>{0.5f, -1})
                   .attr("targets", int64_t{2})
                   .input(make_tensor<double>({2, 2}, {1, 1, 2, 0}))
                   .threads(threads)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(out->at(0).dtype(), DataType::kFloat);
    expect_all_near(to_vector<float>(out->at(0)), {3.5f, 6, 2.5f, 5});
  }
}

TEST(MlLinearRegressor, VectorInputIsOneRowAndWrongWidthIsAnError) {
  auto out = NodeTest("LinearRegressor", 1, "ai.onnx.ml")
                 .attr("coefficients", std::vector<float>{2, -1, 0.5f})
                 .attr("intercepts", std::vector<float>{1})
                 .input(make_tensor<int32_t>({3}, {1, 2, 4}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{1, 1}));
  expect_all_near(to_vector<float>(out->at(0)), {2 - 2 + 2 + 1});
  auto wrong = NodeTest("LinearRegressor", 1, "ai.onnx.ml")
                   .attr("coefficients", std::vector<float>{2, -1, 0.5f})
                   .dynamic_shapes()
                   .input(make_tensor<float>({1, 2}, {1, 2}))
                   .run();
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().to_string().find("2 features"), std::string::npos) << wrong.status().to_string();
}

TEST(MlLinearClassifier, MulticlassSoftmaxPicksTheLabelOfTheBestScore) {
  // Scores for x = [1, -1]: [1 - 1 + 0, 2 + 0 + 0.5, -1 - 3 + 0] = [0, 2.5, -4].
  auto out = NodeTest("LinearClassifier", 1, "ai.onnx.ml")
                 .attr("coefficients", std::vector<float>{1, 1, 2, 0, -1, 3})
                 .attr("intercepts", std::vector<float>{0, 0.5f, 0})
                 .attr("classlabels_strings", std::vector<std::string>{"x", "y", "z"})
                 .attr("post_transform", "SOFTMAX")
                 .input(make_tensor<float>({2, 2}, {1, -1, 0, 1}))
                 .outputs(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const double e0 = std::exp(0 - 2.5), e1 = 1.0, e2 = std::exp(-4 - 2.5), s = e0 + e1 + e2;
  // Row 2, x = [0, 1]: [1, 0.5, 3].
  const double f0 = std::exp(1 - 3.0), f1 = std::exp(0.5 - 3.0), f2 = 1.0, t = f0 + f1 + f2;
  expect_all_near(to_vector<float>(out->at(1)),
                  {static_cast<float>(e0 / s), static_cast<float>(e1 / s), static_cast<float>(e2 / s),
                   static_cast<float>(f0 / t), static_cast<float>(f1 / t), static_cast<float>(f2 / t)});
  EXPECT_EQ(to_vector<std::string>(out->at(0)), (std::vector<std::string>{"y", "z"}));
}

TEST(MlLinearClassifier, OneRowAndTwoLabelsIsBinary) {
  // s = 2 x0 - x1 - 1; scores [-s, s] through LOGISTIC.
  auto out = NodeTest("LinearClassifier", 1, "ai.onnx.ml")
                 .attr("coefficients", std::vector<float>{2, -1})
                 .attr("intercepts", std::vector<float>{-1})
                 .attr("classlabels_ints", std::vector<int64_t>{0, 1})
                 .attr("post_transform", "LOGISTIC")
                 .input(make_tensor<float>({2, 2}, {1, 0, 0, 1}))
                 .outputs(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  auto sigmoid = [](double v) { return static_cast<float>(1 / (1 + std::exp(-v))); };
  expect_all_near(to_vector<float>(out->at(1)), {sigmoid(-1), sigmoid(1), sigmoid(2), sigmoid(-2)});
  EXPECT_EQ(to_vector<int64_t>(out->at(0)), (std::vector<int64_t>{1, 0}));
}

TEST(MlLinearClassifier, RequiresOneLabelList) {
  auto out = NodeTest("LinearClassifier", 1, "ai.onnx.ml")
                 .attr("coefficients", std::vector<float>{2, -1})
                 .input(make_tensor<float>({1, 2}, {1, 0}))
                 .outputs(2)
                 .run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().to_string().find("classlabels"), std::string::npos) << out.status().to_string();
}

}  // namespace
}  // namespace sy
