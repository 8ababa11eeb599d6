// BatchNormalization, LayerNormalization and InstanceNormalization against
// naive double-precision references.
#include <cmath>
#include <random>
#include <vector>

#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

// ---- BatchNormalization --------------------------------------------------------

std::vector<float> batch_norm_ref(const std::vector<float>& x, int64_t n, int64_t c, int64_t spatial,
                                  const std::vector<float>& scale, const std::vector<float>& bias,
                                  const std::vector<float>& mean, const std::vector<float>& var, double eps) {
  std::vector<float> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < spatial; ++i) {
        const auto k = static_cast<size_t>((b * c + ch) * spatial + i);
        const auto u = static_cast<size_t>(ch);
        y[k] = static_cast<float>((x[k] - mean[u]) / std::sqrt(var[u] + eps) * scale[u] + bias[u]);
      }
  return y;
}

TEST(BatchNormalization, ConstantAndRuntimeParametersMatchReference) {
  const Shape shape{2, 3, 4, 5};
  const std::vector<float> x = random_floats(120, -3, 3, 1);
  const std::vector<float> scale = {0.5f, 1.5f, -1.0f};
  const std::vector<float> bias = {0.1f, -0.2f, 0.3f};
  const std::vector<float> mean = {0.0f, 1.0f, -0.5f};
  const std::vector<float> var = {1.0f, 4.0f, 0.25f};
  const Tensor expected = make_tensor<float>(shape, batch_norm_ref(x, 2, 3, 20, scale, bias, mean, var, 1e-3));
  for (int opset : {7, 9, 14, 15}) {
    auto constant = NodeTest("BatchNormalization", opset)
                        .input(make_tensor<float>(shape, x))
                        .constant_input(make_tensor<float>({3}, scale))
                        .constant_input(make_tensor<float>({3}, bias))
                        .constant_input(make_tensor<float>({3}, mean))
                        .constant_input(make_tensor<float>({3}, var))
                        .attr("epsilon", 1e-3f)
                        .run();
    ASSERT_TRUE(constant.ok()) << opset << ": " << constant.status().to_string();
    expect_tensor_near(constant->at(0), expected, 1e-5, 1e-6);
  }
  auto runtime = NodeTest("BatchNormalization", 15)
                     .input(make_tensor<float>(shape, x))
                     .input(make_tensor<float>({3}, scale))
                     .input(make_tensor<float>({3}, bias))
                     .input(make_tensor<float>({3}, mean))
                     .input(make_tensor<float>({3}, var))
                     .attr("epsilon", 1e-3f)
                     .threads(2)
                     .run();
  ASSERT_TRUE(runtime.ok()) << runtime.status().to_string();
  expect_tensor_near(runtime->at(0), expected, 1e-5, 1e-6);
}

TEST(BatchNormalization, TrainingModeUsesBatchStatisticsAndUpdatesRunningOnes) {
  // X [2, 2, 2]: channel 0 holds 1, 2, 5, 6 (mean 3.5, variance 4.25),
  // channel 1 holds 3, 3, 7, 7 (mean 5, variance 4), worked out by hand.
  const std::vector<float> x = {1, 2, 3, 3, 5, 6, 7, 7};
  const std::vector<float> scale = {2.0f, 0.5f}, bias = {1.0f, -1.0f};
  const std::vector<float> running_mean = {10.0f, 20.0f}, running_var = {1.0f, 2.0f};
  auto out = NodeTest("BatchNormalization", 15)
                 .input(make_tensor<float>({2, 2, 2}, x))
                 .input(make_tensor<float>({2}, scale))
                 .input(make_tensor<float>({2}, bias))
                 .input(make_tensor<float>({2}, running_mean))
                 .input(make_tensor<float>({2}, running_var))
                 .attr("training_mode", int64_t{1})
                 .attr("momentum", 0.75f)
                 .attr("epsilon", 1e-3f)
                 .outputs(3)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const std::vector<float> batch_mean = {3.5f, 5.0f}, batch_var = {4.25f, 4.0f};
  expect_tensor_near(out->at(0), make_tensor<float>({2, 2, 2}, batch_norm_ref(x, 2, 2, 2, scale, bias, batch_mean,
                                                                              batch_var, 1e-3)),
                     1e-5, 1e-6);
  expect_tensor_near(out->at(1), make_tensor<float>({2}, {10 * 0.75f + 3.5f * 0.25f, 20 * 0.75f + 5 * 0.25f}), 1e-6,
                     1e-6);
  expect_tensor_near(out->at(2), make_tensor<float>({2}, {1 * 0.75f + 4.25f * 0.25f, 2 * 0.75f + 4 * 0.25f}), 1e-6,
                     1e-6);
}

TEST(BatchNormalization, WrongParameterLengthIsAnError) {
  auto out = NodeTest("BatchNormalization", 15)
                 .input(make_tensor<float>({1, 2, 2}, {1, 2, 3, 4}))
                 .input(make_tensor<float>({3}, {1, 1, 1}))
                 .input(make_tensor<float>({3}, {0, 0, 0}))
                 .input(make_tensor<float>({3}, {0, 0, 0}))
                 .input(make_tensor<float>({3}, {1, 1, 1}))
                 .run();
  EXPECT_FALSE(out.ok());
}

// ---- LayerNormalization --------------------------------------------------------------

struct LayerNormRef {
  std::vector<float> y;
  std::vector<float> mean;
  std::vector<float> inv_std;
};

LayerNormRef layer_norm_ref(const std::vector<float>& x, int64_t rows, int64_t n, const std::vector<float>& scale,
                            const std::vector<float>* bias, double eps) {
  LayerNormRef r;
  r.y.resize(x.size());
  for (int64_t row = 0; row < rows; ++row) {
    double mean = 0;
    for (int64_t j = 0; j < n; ++j) mean += x[static_cast<size_t>(row * n + j)];
    mean /= static_cast<double>(n);
    double var = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double d = x[static_cast<size_t>(row * n + j)] - mean;
      var += d * d;
    }
    var /= static_cast<double>(n);
    const double inv = 1 / std::sqrt(var + eps);
    r.mean.push_back(static_cast<float>(mean));
    r.inv_std.push_back(static_cast<float>(inv));
    for (int64_t j = 0; j < n; ++j) {
      const auto k = static_cast<size_t>(row * n + j);
      const double s = scale.size() == 1 ? scale[0] : scale[static_cast<size_t>(j)];
      double v = (x[k] - mean) * inv * s;
      if (bias != nullptr) v += bias->size() == 1 ? (*bias)[0] : (*bias)[static_cast<size_t>(j)];
      r.y[k] = static_cast<float>(v);
    }
  }
  return r;
}

TEST(LayerNormalization, LastAxisWithStatisticsOutputs) {
  const Shape shape{2, 3, 8};
  const std::vector<float> x = random_floats(48, -4, 4, 2);
  const std::vector<float> scale = random_floats(8, 0.5f, 1.5f, 3);
  const std::vector<float> bias = random_floats(8, -1, 1, 4);
  const LayerNormRef ref = layer_norm_ref(x, 6, 8, scale, &bias, 1e-5);
  auto out = NodeTest("LayerNormalization", 17)
                 .input(make_tensor<float>(shape, x))
                 .input(make_tensor<float>({8}, scale))
                 .input(make_tensor<float>({8}, bias))
                 .outputs(3)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>(shape, ref.y), 1e-5, 1e-6);
  expect_tensor_near(out->at(1), make_tensor<float>({2, 3, 1}, ref.mean), 1e-5, 1e-6);
  expect_tensor_near(out->at(2), make_tensor<float>({2, 3, 1}, ref.inv_std), 1e-5, 1e-6);
}

TEST(LayerNormalization, EarlierAxisNoBiasAndNegativeAxis) {
  const Shape shape{2, 3, 4};
  const std::vector<float> x = random_floats(24, -2, 2, 5);
  const std::vector<float> scale = random_floats(12, 0.5f, 1.5f, 6);
  const LayerNormRef ref = layer_norm_ref(x, 2, 12, scale, nullptr, 1e-3);
  for (int64_t axis : {1, -2}) {
    NodeTest t("LayerNormalization", 17);
    t.input(make_tensor<float>(shape, x))
        .input(make_tensor<float>({3, 4}, scale))
        .attr("axis", axis)
        .attr("epsilon", 1e-3f)
        .outputs(2);
    auto out = t.run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_tensor_near(out->at(0), make_tensor<float>(shape, ref.y), 1e-5, 1e-6);
    expect_tensor_near(out->at(1), make_tensor<float>({2, 1, 1}, ref.mean), 1e-5, 1e-6);
    const ValueType& mean_type = t.graph().values[static_cast<size_t>(t.graph().outputs[1])].type;
    EXPECT_EQ(mean_type.dtype, DataType::kFloat);
    ASSERT_EQ(mean_type.rank(), 3u);
    EXPECT_EQ(mean_type.dims[1].value, 1);
  }
}

TEST(LayerNormalization, MultiThreadedTransformerSizedRows) {
  const int64_t rows = 128;
  const int64_t n = 768;
  const std::vector<float> x = random_floats(static_cast<size_t>(rows * n), -3, 3, 7);
  const std::vector<float> scale = random_floats(static_cast<size_t>(n), 0.5f, 1.5f, 8);
  const std::vector<float> bias = random_floats(static_cast<size_t>(n), -1, 1, 9);
  const LayerNormRef ref = layer_norm_ref(x, rows, n, scale, &bias, 1e-12);
  auto out = NodeTest("LayerNormalization", 17)
                 .input(make_tensor<float>({rows, n}, x))
                 .constant_input(make_tensor<float>({n}, scale))
                 .constant_input(make_tensor<float>({n}, bias))
                 .attr("epsilon", 1e-12f)
                 .threads(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({rows, n}, ref.y), 1e-5, 1e-5);
}

TEST(LayerNormalization, Float16InputComputesInFloat) {
  // Row [1, 3]: mean 2, var 1, so y = [-1, 1] * inv(1 + eps) ~ [-1, 1].
  Tensor x = Tensor::allocate(DataType::kFloat16, Shape{1, 2}).value();
  x.data<uint16_t>()[0] = 0x3C00;  // 1
  x.data<uint16_t>()[1] = 0x4200;  // 3
  Tensor scale = Tensor::allocate(DataType::kFloat16, Shape{2}).value();
  scale.data<uint16_t>()[0] = 0x3C00;
  scale.data<uint16_t>()[1] = 0x4000;  // 2
  auto out = NodeTest("LayerNormalization", 17).input(x).input(scale).outputs(3).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).dtype(), DataType::kFloat16);
  EXPECT_EQ(out->at(0).data<uint16_t>()[0], 0xBC00);  // -1
  EXPECT_EQ(out->at(0).data<uint16_t>()[1], 0x4000);  // 2
  EXPECT_EQ(out->at(1).dtype(), DataType::kFloat);
  EXPECT_FLOAT_EQ(out->at(1).data<float>()[0], 2.0f);
}

// ---- InstanceNormalization ------------------------------------------------------------

TEST(InstanceNormalization, PerSamplePerChannelStatistics) {
  const Shape shape{2, 3, 5};
  const std::vector<float> x = random_floats(30, -2, 2, 10);
  const std::vector<float> scale = {1.0f, 0.5f, 2.0f};
  const std::vector<float> bias = {0.0f, 1.0f, -1.0f};
  std::vector<float> ref(x.size());
  for (int64_t plane = 0; plane < 6; ++plane) {
    double mean = 0;
    double var = 0;
    for (int64_t i = 0; i < 5; ++i) mean += x[static_cast<size_t>(plane * 5 + i)];
    mean /= 5;
    for (int64_t i = 0; i < 5; ++i) var += std::pow(x[static_cast<size_t>(plane * 5 + i)] - mean, 2);
    var /= 5;
    const auto c = static_cast<size_t>(plane % 3);
    for (int64_t i = 0; i < 5; ++i) {
      const auto k = static_cast<size_t>(plane * 5 + i);
      ref[k] = static_cast<float>((x[k] - mean) / std::sqrt(var + 1e-5) * scale[c] + bias[c]);
    }
  }
  auto out = NodeTest("InstanceNormalization", 6)
                 .input(make_tensor<float>(shape, x))
                 .input(make_tensor<float>({3}, scale))
                 .input(make_tensor<float>({3}, bias))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>(shape, ref), 1e-5, 1e-6);
}

}  // namespace
}  // namespace sy::testing
