// Normalizer, Scaler, Binarizer, Imputer, OneHotEncoder,
// ArrayFeatureExtractor, FeatureVectorizer and CategoryMapper against
// hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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

std::vector<float> normalize(const std::string& norm, const Tensor& x) {
  auto out = NodeTest("Normalizer", 1, "ai.onnx.ml").attr("norm", norm).input(x).run();
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? to_vector<float>(out->at(0)) : std::vector<float>();
}

TEST(MlNormalizer, MaxL1AndL2PerRowLeavingZeroRows) {
  const Tensor x = make_tensor<float>({3, 2}, {3, -4, 0, 0, -2, 1});
  expect_all_near(normalize("MAX", x), {0.75f, -1, 0, 0, -1, 0.5f});
  expect_all_near(normalize("L1", x), {3.0f / 7, -4.0f / 7, 0, 0, -2.0f / 3, 1.0f / 3});
  const float r5 = std::sqrt(5.0f);
  expect_all_near(normalize("L2", x), {0.6f, -0.8f, 0, 0, -2 / r5, 1 / r5});
  expect_all_near(normalize("L1", make_tensor<int64_t>({2}, {1, 3})), {0.25f, 0.75f});
  auto bad = NodeTest("Normalizer", 1, "ai.onnx.ml").attr("norm", "L3").input(x).run();
  ASSERT_FALSE(bad.ok());
}

TEST(MlScaler, OffsetThenScalePerFeatureOrForAll) {
  auto per_feature = NodeTest("Scaler", 1, "ai.onnx.ml")
                         .attr("offset", std::vector<float>{1, 2})
                         .attr("scale", std::vector<float>{2, 0.5f})
                         .input(make_tensor<double>({2, 2}, {1, 2, 3, 6}))
                         .run();
  ASSERT_TRUE(per_feature.ok()) << per_feature.status().to_string();
  EXPECT_EQ(per_feature->at(0).dtype(), DataType::kFloat);
  expect_all_near(to_vector<float>(per_feature->at(0)), {0, 0, 4, 2});
  auto shared = NodeTest("Scaler", 1, "ai.onnx.ml")
                    .attr("offset", std::vector<float>{1})
                    .attr("scale", std::vector<float>{3})
                    .input(make_tensor<int32_t>({3}, {1, 2, 3}))
                    .run();
  ASSERT_TRUE(shared.ok()) << shared.status().to_string();
  expect_all_near(to_vector<float>(shared->at(0)), {0, 3, 6});
}

TEST(MlBinarizer, StrictlyAboveTheThreshold) {
  auto out = NodeTest("Binarizer", 1, "ai.onnx.ml")
                 .attr("threshold", 1.0f)
                 .input(make_tensor<int64_t>({4}, {0, 1, 2, -5}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<int64_t>(out->at(0)), (std::vector<int64_t>{0, 0, 1, 0}));
}

TEST(MlImputer, ReplacesNanOrAGivenValuePerColumn) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto floats = NodeTest("Imputer", 1, "ai.onnx.ml")
                    .attr("imputed_value_floats", std::vector<float>{10, 20})
                    .attr("replaced_value_float", nan)
                    .input(make_tensor<float>({2, 2}, {nan, 1, 2, nan}))
                    .run();
  ASSERT_TRUE(floats.ok()) << floats.status().to_string();
  EXPECT_EQ(to_vector<float>(floats->at(0)), (std::vector<float>{10, 1, 2, 20}));
  auto ints = NodeTest("Imputer", 1, "ai.onnx.ml")
                  .attr("imputed_value_int64s", std::vector<int64_t>{7})
                  .attr("replaced_value_int64", int64_t{-1})
                  .input(make_tensor<int64_t>({2, 2}, {-1, 1, 2, -1}))
                  .run();
  ASSERT_TRUE(ints.ok()) << ints.status().to_string();
  EXPECT_EQ(to_vector<int64_t>(ints->at(0)), (std::vector<int64_t>{7, 1, 2, 7}));
}

TEST(MlOneHotEncoder, StringsAndNumbersWithUnknownCategories) {
  auto strings = NodeTest("OneHotEncoder", 1, "ai.onnx.ml")
                     .attr("cats_strings", std::vector<std::string>{"a", "b", "c"})
                     .input(make_tensor<std::string>({1, 2}, {"c", "z"}))
                     .run();
  ASSERT_TRUE(strings.ok()) << strings.status().to_string();
  EXPECT_EQ(strings->at(0).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(to_vector<float>(strings->at(0)), (std::vector<float>{0, 0, 1, 0, 0, 0}));
  auto numbers = NodeTest("OneHotEncoder", 1, "ai.onnx.ml")
                     .attr("cats_int64s", std::vector<int64_t>{4, 2})
                     .input(make_tensor<double>({3}, {2, 4, 2.5}))
                     .run();
  ASSERT_TRUE(numbers.ok()) << numbers.status().to_string();
  EXPECT_EQ(to_vector<float>(numbers->at(0)), (std::vector<float>{0, 1, 1, 0, 0, 0}));
  auto strict = NodeTest("OneHotEncoder", 1, "ai.onnx.ml")
                    .attr("cats_int64s", std::vector<int64_t>{4, 2})
                    .attr("zeros", int64_t{0})
                    .input(make_tensor<int64_t>({2}, {2, 3}))
                    .run();
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().to_string().find("element 1"), std::string::npos) << strict.status().to_string();
}

TEST(MlArrayFeatureExtractor, SelectsOnTheLastAxis) {
  auto matrix = NodeTest("ArrayFeatureExtractor", 1, "ai.onnx.ml")
                    .input(make_tensor<std::string>({2, 3}, {"a", "b", "c", "d", "e", "f"}))
                    .input(make_tensor<int64_t>({2}, {2, 0}))
                    .run();
  ASSERT_TRUE(matrix.ok()) << matrix.status().to_string();
  EXPECT_EQ(to_vector<std::string>(matrix->at(0)), (std::vector<std::string>{"c", "a", "f", "d"}));
  auto vector = NodeTest("ArrayFeatureExtractor", 1, "ai.onnx.ml")
                    .input(make_tensor<int32_t>({3}, {5, 6, 7}))
                    .input(make_tensor<int64_t>({1}, {1}))
                    .run();
  ASSERT_TRUE(vector.ok()) << vector.status().to_string();
  EXPECT_EQ(vector->at(0).shape(), (Shape{1, 1}));
  EXPECT_EQ(to_vector<int32_t>(vector->at(0)), (std::vector<int32_t>{6}));
  auto outside = NodeTest("ArrayFeatureExtractor", 1, "ai.onnx.ml")
                     .input(make_tensor<float>({3}, {5, 6, 7}))
                     .input(make_tensor<int64_t>({1}, {3}))
                     .run();
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().to_string().find("out of range"), std::string::npos) << outside.status().to_string();
}

TEST(MlFeatureVectorizer, CutsAndPadsEachInput) {
  auto out = NodeTest("FeatureVectorizer", 1, "ai.onnx.ml")
                 .attr("inputdimensions", std::vector<int64_t>{1, 3})
                 .input(make_tensor<int64_t>({2, 2}, {1, 2, 3, 4}))
                 .input(make_tensor<int64_t>({2}, {5, 6}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{2, 4}));
  EXPECT_EQ(to_vector<float>(out->at(0)), (std::vector<float>{1, 5, 0, 0, 3, 6, 0, 0}));
}

TEST(MlCategoryMapper, BothDirectionsWithDefaults) {
  auto to_int = NodeTest("CategoryMapper", 1, "ai.onnx.ml")
                    .attr("cats_strings", std::vector<std::string>{"x", "y"})
                    .attr("cats_int64s", std::vector<int64_t>{10, 20})
                    .attr("default_int64", int64_t{0})
                    .input(make_tensor<std::string>({3}, {"y", "q", "x"}))
                    .run();
  ASSERT_TRUE(to_int.ok()) << to_int.status().to_string();
  EXPECT_EQ(to_vector<int64_t>(to_int->at(0)), (std::vector<int64_t>{20, 0, 10}));
  auto to_string = NodeTest("CategoryMapper", 1, "ai.onnx.ml")
                       .attr("cats_strings", std::vector<std::string>{"x", "y"})
                       .attr("cats_int64s", std::vector<int64_t>{10, 20})
                       .input(make_tensor<int64_t>({2}, {20, 30}))
                       .run();
  ASSERT_TRUE(to_string.ok()) << to_string.status().to_string();
  EXPECT_EQ(to_vector<std::string>(to_string->at(0)), (std::vector<std::string>{"y", "_Unused"}));
}

}  // namespace
}  // namespace sy
