// CausalConvWithState against a reference that builds the padded sequence
// [past_state | input] explicitly and convolves it.
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

struct ConvReference {
  std::vector<float> output;
  std::vector<float> state;
};

ConvReference reference_conv(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>* bias,
                             const std::vector<float>* past, int64_t batch, int64_t channels, int64_t length,
                             int64_t k, bool silu) {
  ConvReference r;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c) {
      std::vector<double> padded;
      for (int64_t i = 0; i < k - 1; ++i)
        padded.push_back(past != nullptr ? (*past)[static_cast<size_t>((b * channels + c) * (k - 1) + i)] : 0.0);
      for (int64_t i = 0; i < length; ++i) padded.push_back(x[static_cast<size_t>((b * channels + c) * length + i)]);
      for (int64_t t = 0; t < length; ++t) {
        double acc = bias != nullptr ? (*bias)[static_cast<size_t>(c)] : 0.0;
        for (int64_t j = 0; j < k; ++j) acc += w[static_cast<size_t>(c * k + j)] * padded[static_cast<size_t>(t + j)];
        if (silu) acc = acc / (1.0 + std::exp(-acc));
        r.output.push_back(static_cast<float>(acc));
      }
      for (size_t i = padded.size() - static_cast<size_t>(k - 1); i < padded.size(); ++i)
        r.state.push_back(static_cast<float>(padded[i]));
    }
  return r;
}

std::vector<float> ramp(int64_t n, float step, float start) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + step * static_cast<float>((i * 7) % 11);
  return v;
}

TEST(CausalConvWithStateKernel, MatchesReferenceWithAndWithoutOptionals) {
  const int64_t batch = 2, channels = 3;
  for (int64_t length : {int64_t{1}, int64_t{2}, int64_t{6}})
    for (int64_t k : {int64_t{1}, int64_t{4}})
      for (int variant = 0; variant < 4; ++variant) {
        const bool with_bias = (variant & 1) != 0;
        const bool with_past = (variant & 2) != 0;
        const std::vector<float> x = ramp(batch * channels * length, 0.3f, -1.2f);
        const std::vector<float> w = ramp(channels * k, -0.2f, 0.9f);
        const std::vector<float> bias = {0.5f, -0.25f, 1.0f};
        const std::vector<float> past = ramp(batch * channels * (k - 1), 0.15f, -0.4f);
        for (const char* act : {"none", "silu", "swish"}) {
          NodeTest t("CausalConvWithState", 27);
          t.input(make_tensor<float>({batch, channels, length}, x));
          t.input(make_tensor<float>({channels, 1, k}, w));
          if (with_bias)
            t.input(make_tensor<float>({channels}, bias));
          else if (with_past)
            t.missing_input();
          if (with_past) t.input(make_tensor<float>({batch, channels, k - 1}, past));
          t.attr("activation", std::string(act));
          t.outputs(2);
          auto out = t.run();
          ASSERT_TRUE(out.ok()) << out.status().to_string();
          const ConvReference r = reference_conv(x, w, with_bias ? &bias : nullptr, with_past ? &past : nullptr, batch,
                                                 channels, length, k, std::string(act) != "none");
          expect_tensor_near(out->at(0), make_tensor<float>({batch, channels, length}, r.output), 1e-5, 1e-6);
          expect_tensor_near(out->at(1), make_tensor<float>({batch, channels, k - 1}, r.state), 0, 0);
        }
      }
}

TEST(CausalConvWithStateKernel, RejectsBadActivationAndShapes) {
  auto bad_act = NodeTest("CausalConvWithState", 27)
                     .input(make_tensor<float>({1, 1, 2}, {1, 2}))
                     .input(make_tensor<float>({1, 1, 2}, {1, 2}))
                     .attr("activation", std::string("relu"))
                     .run();
  EXPECT_FALSE(bad_act.ok());
  auto bad_weight = NodeTest("CausalConvWithState", 27)
                        .input(make_tensor<float>({1, 2, 2}, {1, 2, 3, 4}))
                        .input(make_tensor<float>({1, 1, 2}, {1, 2}))
                        .run();
  EXPECT_FALSE(bad_weight.ok());
}

}  // namespace
}  // namespace sy
