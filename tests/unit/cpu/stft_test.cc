// STFT against a direct DFT of each windowed frame in double, for real and
// complex signals, with and without a window and frame_length, one-sided
// or not, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;
using CD = std::complex<double>;

// [batch, frames, bins, 2] from signal [batch, length, channels].
std::vector<double> reference_stft(const std::vector<float>& x, int64_t batch, int64_t length, int64_t channels,
                                   int64_t step, const std::vector<float>& window, int64_t frame_length,
                                   bool onesided) {
  const int64_t frames = 1 + (length - frame_length) / step;
  const int64_t bins = onesided ? frame_length / 2 + 1 : frame_length;
  std::vector<double> out;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f)
      for (int64_t k = 0; k < bins; ++k) {
        CD sum = 0;
        for (int64_t j = 0; j < frame_length; ++j) {
          const size_t at = static_cast<size_t>((b * length + f * step + j) * channels);
          const CD v(x[at], channels == 2 ? x[at + 1] : 0.0f);
          const double w = window.empty() ? 1.0 : window[static_cast<size_t>(j)];
          const double angle =
              -2 * std::numbers::pi * static_cast<double>((j * k) % frame_length) / static_cast<double>(frame_length);
          sum += v * w * CD(std::cos(angle), std::sin(angle));
        }
        out.push_back(sum.real());
        out.push_back(sum.imag());
      }
  return out;
}

std::vector<float> ramp(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>((i * 5 + seed) % 11) - 5) * 0.5f;
  return v;
}

void expect_close(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  const std::vector<float> g = to_vector<float>(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want[i], 1e-4) << what << " element " << i;
}

TEST(StftKernel, RealSignalWithFrameLength) {
  const std::vector<float> x = ramp(2 * 40, 1);
  auto out = NodeTest("STFT", 17)
                 .input(make_tensor<float>({2, 40, 1}, x))
                 .input(make_tensor<int64_t>({}, {6}))
                 .missing_input()
                 .input(make_tensor<int64_t>({}, {12}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{2, 5, 7, 2}));  // 1 + (40 - 12) / 6 frames, 12 / 2 + 1 bins
  expect_close(out->at(0), reference_stft(x, 2, 40, 1, 6, {}, 12, true), "no window");
}

TEST(StftKernel, WindowSetsTheFrameLength) {
  const std::vector<float> x = ramp(30, 2);
  const std::vector<float> window = {0.1f, 0.5f, 0.9f, 1.0f, 0.9f, 0.5f, 0.1f};  // 7: the generic radix
  for (int onesided : {0, 1}) {
    auto out = NodeTest("STFT", 17)
                   .input(make_tensor<float>({1, 30, 1}, x))
                   .input(make_tensor<int32_t>({}, {4}))
                   .input(make_tensor<float>({7}, window))
                   .attr("onesided", onesided)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_close(out->at(0), reference_stft(x, 1, 30, 1, 4, window, 7, onesided == 1),
                 "onesided " + std::to_string(onesided));
  }
}

TEST(StftKernel, ComplexSignalAndWholeSignalFrame) {
  const std::vector<float> x = ramp(2 * 41 * 2, 3);
  std::vector<float> window(41);
  for (size_t i = 0; i < window.size(); ++i) window[i] = 1.0f - static_cast<float>(i) / 64.0f;
  auto out = NodeTest("STFT", 17)
                 .input(make_tensor<float>({2, 41, 2}, x))
                 .input(make_tensor<int64_t>({}, {3}))
                 .input(make_tensor<float>({41}, window))
                 .input(make_tensor<int64_t>({}, {41}))
                 .attr("onesided", 0)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{2, 1, 41, 2}));
  expect_close(out->at(0), reference_stft(x, 2, 41, 2, 3, window, 41, false), "complex, length 41 (Bluestein)");
  // Neither window nor frame_length: one frame of the whole signal.
  const std::vector<float> r = ramp(16, 4);
  auto whole = NodeTest("STFT", 17).input(make_tensor<float>({1, 16, 1}, r)).input(make_tensor<int64_t>({}, {5})).run();
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  expect_close(whole->at(0), reference_stft(r, 1, 16, 1, 5, {}, 16, true), "whole signal");
}

TEST(StftKernel, DoubleOnThreads) {
  const int64_t batch = 3, length = 4000;
  const std::vector<float> xf = ramp(batch * length, 5);
  auto out = NodeTest("STFT", 17)
                 .input(make_tensor<double>({batch, length, 1}, std::vector<double>(xf.begin(), xf.end())))
                 .input(make_tensor<int64_t>({}, {50}))
                 .missing_input()
                 .input(make_tensor<int64_t>({}, {200}))
                 .threads(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const std::vector<double> want = reference_stft(xf, batch, length, 1, 50, {}, 200, true);
  const std::vector<double> got = to_vector<double>(out->at(0));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9) << i;
}

TEST(StftKernel, RejectsBadInputs) {
  const Tensor x = make_tensor<float>({1, 16, 1}, ramp(16, 0));
  const Tensor step = make_tensor<int64_t>({}, {4});
  EXPECT_FALSE(NodeTest("STFT", 17).input(x).input(make_tensor<int64_t>({}, {0})).run().ok());
  for (int64_t frame_length : {17, 0}) {
    const Tensor length = make_tensor<int64_t>({}, {frame_length});
    EXPECT_FALSE(NodeTest("STFT", 17).input(x).input(step).missing_input().input(length).run().ok()) << frame_length;
  }
  // A window of another length than frame_length.
  EXPECT_FALSE(NodeTest("STFT", 17)
                   .input(x)
                   .input(step)
                   .input(make_tensor<float>({4}, {1, 1, 1, 1}))
                   .input(make_tensor<int64_t>({}, {8}))
                   .run()
                   .ok());
  EXPECT_FALSE(NodeTest("STFT", 17).input(make_tensor<float>({16, 1}, ramp(16, 0))).input(step).run().ok());
  EXPECT_FALSE(NodeTest("STFT", 17).input(x).input(step).attr("onesided", 3).run().ok());
}

}  // namespace
}  // namespace sy
