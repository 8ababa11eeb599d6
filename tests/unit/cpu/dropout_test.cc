// Dropout (inference identity, training masks) and Swish.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::expect_tensor_near;
using testing::make_bool_tensor;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

std::vector<float> iota_floats(size_t n, float start = -3.0f) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

TEST(DropoutKernel, InferenceIsTheIdentityWithAnAllTrueMask) {
  const Tensor x = make_tensor<float>({2, 3}, iota_floats(6));
  for (int opset : {10, 12, 13, 22}) {
    auto out = NodeTest("Dropout", opset).input(x).outputs(2).run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_tensor_eq(out->at(0), x);
    expect_tensor_eq(out->at(1), make_bool_tensor({2, 3}, {1, 1, 1, 1, 1, 1}));
  }
  // A ratio without training_mode changes nothing.
  auto ratio = NodeTest("Dropout", 13).input(x).input(make_tensor<float>({}, {0.9f})).outputs(2).run();
  ASSERT_TRUE(ratio.ok()) << ratio.status().to_string();
  expect_tensor_eq(ratio->at(0), x);
  // training_mode false likewise.
  auto off = NodeTest("Dropout", 13)
                 .input(x)
                 .input(make_tensor<float>({}, {0.9f}))
                 .input(make_bool_tensor({}, {0}))
                 .outputs(2)
                 .run();
  ASSERT_TRUE(off.ok()) << off.status().to_string();
  expect_tensor_eq(off->at(0), x);
  expect_tensor_eq(off->at(1), make_bool_tensor({2, 3}, {1, 1, 1, 1, 1, 1}));
}

TEST(DropoutKernel, Opset7MaskHasTheDataType) {
  NodeTest t("Dropout", 7);
  t.input(make_tensor<double>({3}, {1, 2, 3})).attr("ratio", 0.3f).outputs(2);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<double>({3}, {1, 2, 3}));
  expect_tensor_eq(out->at(1), make_tensor<double>({3}, {1, 1, 1}));
  EXPECT_EQ(t.graph().values[static_cast<size_t>(t.graph().outputs[1])].type.dtype, DataType::kDouble);
}

TEST(DropoutKernel, TrainingWithZeroRatioIsTheIdentity) {
  const Tensor x = make_tensor<float>({4}, {1, -2, 3, -4});
  auto out = NodeTest("Dropout", 22)
                 .input(x)
                 .input(make_tensor<float>({}, {0.0f}))
                 .input(make_bool_tensor({}, {1}))
                 .outputs(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), x);
  expect_tensor_eq(out->at(1), make_bool_tensor({4}, {1, 1, 1, 1}));
}

// Masks computed with numpy: np.random.seed(s); np.random.uniform(0, 1, n) >= r.
TEST(DropoutKernel, SeededTrainingReproducesNumpysMask) {
  struct Case {
    int64_t seed;
    float ratio;
    std::vector<int> mask;
  };
  const Case cases[] = {
      {0, 0.5f, {1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1}},
      {42, 0.3f, {1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1}},
  };
  for (const Case& c : cases) {
    const auto n = static_cast<int64_t>(c.mask.size());
    const std::vector<float> x = iota_floats(c.mask.size(), 1.0f);
    const auto scale = static_cast<float>(1.0 / (1.0 - static_cast<double>(c.ratio)));
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = c.mask[i] ? x[i] * scale : 0.0f;
    for (int run = 0; run < 2; ++run) {  // the same mask on every run
      auto out = NodeTest("Dropout", 13)
                     .input(make_tensor<float>({n}, x))
                     .input(make_tensor<float>({}, {c.ratio}))
                     .input(make_bool_tensor({}, {1}))
                     .attr("seed", c.seed)
                     .outputs(2)
                     .run();
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      expect_tensor_eq(out->at(0), make_tensor<float>({n}, y));
      expect_tensor_eq(out->at(1), make_bool_tensor({n}, c.mask));
    }
  }
}

TEST(DropoutKernel, UnseededTrainingDropsAboutRatioAndScalesTheRest) {
  const int64_t n = 100000;
  const std::vector<float> x(static_cast<size_t>(n), 2.0f);
  auto out = NodeTest("Dropout", 22)
                 .input(make_tensor<float>({n}, x))
                 .input(make_tensor<double>({}, {0.25}))
                 .input(make_bool_tensor({}, {1}))
                 .outputs(2)
                 .threads(4)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const float* y = out->at(0).data<float>();
  const bool* mask = out->at(1).data<bool>();
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    kept += mask[i];
    ASSERT_FLOAT_EQ(y[i], mask[i] ? 2.0f / 0.75f : 0.0f) << i;
  }
  // 75000 expected; the standard deviation is about 137.
  EXPECT_NEAR(static_cast<double>(kept), 75000.0, 1000.0);
}

TEST(DropoutKernel, RejectsARatioOfOne) {
  auto out = NodeTest("Dropout", 13)
                 .input(make_tensor<float>({2}, {1, 2}))
                 .input(make_tensor<float>({}, {1.0f}))
                 .input(make_bool_tensor({}, {1}))
                 .run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("ratio"), std::string::npos) << out.status().message();
}

TEST(SwishKernel, MatchesXTimesSigmoidOfAlphaX) {
  const std::vector<float> x = {-20, -3, -0.5f, 0, 0.5f, 3, 5, 20};
  for (float alpha : {1.0f, 0.5f, 1.702f}) {
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      y[i] = static_cast<float>(x[i] / (1.0 + std::exp(-static_cast<double>(alpha) * x[i])));
    auto out = NodeTest("Swish", 24).input(make_tensor<float>({8}, x)).attr("alpha", alpha).run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_tensor_near(out->at(0), make_tensor<float>({8}, y), 1e-6, 1e-7);
  }
  auto d = NodeTest("Swish", 24).input(make_tensor<double>({3}, {3, 4, 5})).run();
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  expect_tensor_near(d->at(0), make_tensor<double>({3}, {2.8577223804672998, 3.928055160151634, 4.966535745378576}),
                     1e-14, 1e-14);
}

}  // namespace
}  // namespace sy
