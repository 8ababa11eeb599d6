// Momentum, Adagrad and Adam against update steps worked out by hand from
// the formulas in the ONNX spec.
#include <gtest/gtest.h>

#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_near;
using testing::make_tensor;
using testing::NodeTest;

constexpr const char* kDomain = "ai.onnx.preview.training";

Tensor scalar_r(float r) { return make_tensor<float>({}, {r}); }
Tensor scalar_t(int64_t t) { return make_tensor<int64_t>({}, {t}); }

// Momentum with alpha 0.9, beta 0.5 and norm_coefficient 0.01.
NodeTest momentum(const char* mode) {
  NodeTest t("Momentum", 1, kDomain);
  t.attr("alpha", 0.9f).attr("beta", 0.5f).attr("norm_coefficient", 0.01f).attr("mode", mode).outputs(2);
  return t;
}

TEST(TrainingMomentum, StandardStepUsesBetaAfterTheFirstStep) {
  // g' = 0.01 x + g = [0.51, -0.98]; v = 0.9 v + 0.5 g' = [0.345, -0.31];
  // x -= 0.1 v.
  auto out = momentum("standard")
                 .input(scalar_r(0.1f))
                 .input(scalar_t(1))
                 .input(make_tensor<float>({2}, {1, 2}))
                 .input(make_tensor<float>({2}, {0.5f, -1}))
                 .input(make_tensor<float>({2}, {0.1f, 0.2f}))
                 .outputs(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({2}, {0.9655f, 2.031f}));
  expect_tensor_near(out->at(1), make_tensor<float>({2}, {0.345f, -0.31f}));
}

TEST(TrainingMomentum, NesterovFirstStepTakesTheWholeGradient) {
  // T = 0: v = 0.9 v + g' = [0.6, -0.8]; x -= 0.1 (g' + 0.9 v).
  auto out = momentum("nesterov")
                 .input(scalar_r(0.1f))
                 .input(scalar_t(0))
                 .input(make_tensor<double>({2}, {1, 2}))
                 .input(make_tensor<double>({2}, {0.5, -1}))
                 .input(make_tensor<double>({2}, {0.1, 0.2}))
                 .outputs(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<double>({2}, {0.895, 2.17}));
  expect_tensor_near(out->at(1), make_tensor<double>({2}, {0.6, -0.8}));
}

TEST(TrainingMomentum, RejectsUnknownModeAndMissingAttributes) {
  auto bad_mode = momentum("heavy")
                      .input(scalar_r(0.1f))
                      .input(scalar_t(0))
                      .input(make_tensor<float>({1}, {1}))
                      .input(make_tensor<float>({1}, {1}))
                      .input(make_tensor<float>({1}, {1}))
                      .outputs(2)
                      .run();
  EXPECT_FALSE(bad_mode.ok());
  auto no_alpha = NodeTest("Momentum", 1, kDomain)
                      .attr("beta", 0.5f)
                      .attr("norm_coefficient", 0.0f)
                      .attr("mode", "standard")
                      .input(scalar_r(0.1f))
                      .input(scalar_t(0))
                      .input(make_tensor<float>({1}, {1}))
                      .input(make_tensor<float>({1}, {1}))
                      .input(make_tensor<float>({1}, {1}))
                      .outputs(2)
                      .run();
  EXPECT_FALSE(no_alpha.ok());
}

TEST(TrainingAdagrad, TwoTensorsWithDecayedRate) {
  // r = 0.1 / (1 + 1 * 0.1); h = h + g^2; x -= r g / sqrt(h).
  auto out = NodeTest("Adagrad", 1, kDomain)
                 .attr("decay_factor", 0.1f)
                 .attr("epsilon", 0.0f)
                 .input(scalar_r(0.1f))
                 .input(scalar_t(1))
                 .input(make_tensor<float>({1}, {1}))
                 .input(make_tensor<float>({2}, {0, -2}))
                 .input(make_tensor<float>({1}, {3}))
                 .input(make_tensor<float>({2}, {4, 1}))
                 .input(make_tensor<float>({1}, {16}))
                 .input(make_tensor<float>({2}, {9, 0}))
                 .outputs(4)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const float r = 0.1f / 1.1f;
  expect_tensor_near(out->at(0), make_tensor<float>({1}, {1 - r * 3 / 5}));
  expect_tensor_near(out->at(1), make_tensor<float>({2}, {0 - r * 4 / 5, -2 - r * 1 / 1}));
  expect_tensor_near(out->at(2), make_tensor<float>({1}, {25}));
  expect_tensor_near(out->at(3), make_tensor<float>({2}, {25, 1}));
}

TEST(TrainingAdagrad, RejectsMismatchedGroupsAndShapes) {
  auto uneven = NodeTest("Adagrad", 1, kDomain)
                    .input(scalar_r(0.1f))
                    .input(scalar_t(1))
                    .input(make_tensor<float>({1}, {1}))
                    .input(make_tensor<float>({1}, {1}))
                    .input(make_tensor<float>({1}, {1}))
                    .input(make_tensor<float>({1}, {1}))
                    .outputs(2)
                    .run();
  EXPECT_FALSE(uneven.ok());
  auto shapes = NodeTest("Adagrad", 1, kDomain)
                    .dynamic_shapes()
                    .input(scalar_r(0.1f))
                    .input(scalar_t(1))
                    .input(make_tensor<float>({2}, {1, 2}))
                    .input(make_tensor<float>({3}, {1, 2, 3}))
                    .input(make_tensor<float>({2}, {1, 2}))
                    .outputs(2)
                    .run();
  EXPECT_FALSE(shapes.ok());
}

TEST(TrainingAdam, StepWithAndWithoutBiasCorrection) {
  // T = 0: v = 0.5 * 2 = 1, h = 0.25 * 4 = 1, x = (1 - 0.1 * 1 / 1) * 0.5.
  auto first = NodeTest("Adam", 1, kDomain)
                   .attr("alpha", 0.5f)
                   .attr("beta", 0.75f)
                   .attr("epsilon", 0.0f)
                   .attr("norm_coefficient_post", 0.5f)
                   .input(scalar_r(0.1f))
                   .input(scalar_t(0))
                   .input(make_tensor<float>({1}, {1}))
                   .input(make_tensor<float>({1}, {2}))
                   .input(make_tensor<float>({1}, {0}))
                   .input(make_tensor<float>({1}, {0}))
                   .outputs(3)
                   .run();
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  expect_tensor_near(first->at(0), make_tensor<float>({1}, {0.45f}));
  expect_tensor_near(first->at(1), make_tensor<float>({1}, {1}));
  expect_tensor_near(first->at(2), make_tensor<float>({1}, {1}));
  // T = 2: r = 0.1 sqrt(1 - 0.75^2) / (1 - 0.5^2).
  auto later = NodeTest("Adam", 1, kDomain)
                   .attr("alpha", 0.5f)
                   .attr("beta", 0.75f)
                   .attr("epsilon", 0.0f)
                   .input(scalar_r(0.1f))
                   .input(scalar_t(2))
                   .input(make_tensor<float>({1}, {1}))
                   .input(make_tensor<float>({1}, {2}))
                   .input(make_tensor<float>({1}, {0}))
                   .input(make_tensor<float>({1}, {0}))
                   .outputs(3)
                   .run();
  ASSERT_TRUE(later.ok()) << later.status().to_string();
  expect_tensor_near(later->at(0), make_tensor<float>({1}, {1 - 0.1f * 0.6614378f / 0.75f}));
}

}  // namespace
}  // namespace sy
