// SVMRegressor and SVMClassifier against hand-computed kernel sums.
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

TEST(MlSvmRegressor, LinearWithoutSupportVectors) {
  auto out = NodeTest("SVMRegressor", 1, "ai.onnx.ml")
                 .attr("coefficients", std::vector<float>{1, -2})
                 .attr("rho", std::vector<float>{0.5f})
                 .input(make_tensor<float>({2, 2}, {3, 1, 0, 1}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{2, 1}));
  expect_all_near(to_vector<float>(out->at(0)), {1.5f, -1.5f});
}

TEST(MlSvmRegressor, RbfSupportVectorsAndOneClass) {
  // K(a, b) = exp(-0.5 |a - b|^2); vectors [0, 0] and [1, 1] weighted 1, -1.
  auto make = [](int64_t one_class) {
    return NodeTest("SVMRegressor", 1, "ai.onnx.ml")
        .attr("coefficients", std::vector<float>{1, -1})
        .attr("support_vectors", std::vector<float>{0, 0, 1, 1})
        .attr("n_supports", int64_t{2})
        .attr("kernel_type", "RBF")
        .attr("kernel_params", std::vector<float>{0.5f, 0, 3})
        .attr("rho", std::vector<float>{0.1f})
        .attr("one_class", one_class)
        .input(make_tensor<double>({2, 2}, {1, 0, 0, 0}))
        .run();
  };
  auto out = make(0);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_all_near(to_vector<float>(out->at(0)), {0.1f, static_cast<float>(1 - std::exp(-1.0) + 0.1)});
  auto sign = make(1);
  ASSERT_TRUE(sign.ok()) << sign.status().to_string();
  expect_all_near(to_vector<float>(sign->at(0)), {1, 1});
}

TEST(MlSvmClassifier, BinaryVotesAndTheTwoScoreColumns) {
  // Linear kernel, vectors [1, 0] (class 0) and [0, 1] (class 1) weighted
  // 1 and -1: s = x0 - x1; s > 0 votes for class 0.
  for (int threads : {1, 2}) {
    auto out = NodeTest("SVMClassifier", 1, "ai.onnx.ml")
                   .attr("coefficients", std::vector<float>{1, -1})
                   .attr("support_vectors", std::vector<float>{1, 0, 0, 1})
                   .attr("vectors_per_class", std::vector<int64_t>{1, 1})
                   .attr("rho", std::vector<float>{0})
                   .attr("kernel_type", "LINEAR")
                   .attr("classlabels_ints", std::vector<int64_t>{5, 6})
                   .input(make_tensor<float>({2, 2}, {2, 1, 0, 3}))
                   .outputs(2)
                   .threads(threads)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(to_vector<int64_t>(out->at(0)), (std::vector<int64_t>{5, 6}));
    expect_all_near(to_vector<float>(out->at(1)), {-1, 1, 3, -3});
  }
}

TEST(MlSvmClassifier, PolyKernelThreeClassesVoteOneAgainstOne) {
  // Three classes, one vector each: e0, e1, e2 (3 features); poly kernel
  // (x.v + 1)^2. Pairs (0,1), (0,2), (1,2); coefficient rows 0 and 1.
  // For x = e0: K = [4, 1, 1].
  //   (0,1): rho 0 + row0[v0] K0 + row0[v1] K1 = 1*4 + (-1)*1 = 3 > 0: class 0.
  //   (0,2): row1[v0] K0 + row0[v2] K2 = 1*4 + (-1)*1 = 3 > 0: class 0.
  //   (1,2): row1[v1] K1 + row1[v2] K2 = 1*1 + (-1)*1 = 0: class 2.
  auto out = NodeTest("SVMClassifier", 1, "ai.onnx.ml")
                 .attr("coefficients", std::vector<float>{1, -1, -1, 1, 1, -1})
                 .attr("support_vectors", std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1})
                 .attr("vectors_per_class", std::vector<int64_t>{1, 1, 1})
                 .attr("rho", std::vector<float>{0, 0, 0})
                 .attr("kernel_type", "POLY")
                 .attr("kernel_params", std::vector<float>{1, 1, 2})
                 .attr("classlabels_strings", std::vector<std::string>{"a", "b", "c"})
                 .input(make_tensor<float>({1, 3}, {1, 0, 0}))
                 .outputs(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<std::string>(out->at(0)), (std::vector<std::string>{"a"}));
  expect_all_near(to_vector<float>(out->at(1)), {3, 3, 0});
}

}  // namespace
}  // namespace sy
