// Resize and Upsample: hand-computed cases for each mode and attribute, and
// a sweep against a reference written here the way the ONNX reference
// implementation works: per output element, per axis (innermost first), the
// `n` source elements nearest the source coordinate, edge-clamped, blended
// with the mode's coefficients.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::expect_tensor_near;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

std::vector<float> iota_values(int64_t n, float start = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return v;
}

std::vector<float> pseudo_random(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>((seed >> 8) % 2000) / 100.0f - 10.0f;
  }
  return v;
}

std::string out_shape(const NodeTest& t) {
  const Graph& g = t.graph();
  return g.values[static_cast<size_t>(g.outputs[0])].type.shape_string();
}

// ---- reference ---------------------------------------------------------------------

struct RefConfig {
  std::string mode = "nearest";
  std::string coord = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0.0;
};

std::vector<double> ref_coeffs(const RefConfig& c, double ratio, double scale) {
  if (c.mode == "nearest") {
    if (ratio == 1.0) return {0, 1};
    if (c.nearest == "round_prefer_floor") return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
    if (c.nearest == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (c.nearest == "floor") return {1, 0};
    return {0, 1};
  }
  const double A = c.cubic_a;
  if (!c.antialias) {
    if (c.mode == "linear") return {1 - ratio, ratio};
    const double r = ratio;
    return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A, ((A + 2) * r - (A + 3)) * r * r + 1,
            ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1,
            ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A};
  }
  const double s = std::min(scale, 1.0);
  const double support = c.mode == "linear" ? 1.0 : 2.0;
  const int start = static_cast<int>(std::floor(-support / s) + 1);
  const int n = 2 - 2 * start;
  std::vector<double> w;
  double sum = 0;
  for (int i = start; i < start + n; ++i) {
    const double x = std::abs(s * (i - ratio));
    double v;
    if (c.mode == "linear") {
      v = std::max(0.0, 1 - x);
    } else if (x <= 1) {
      v = (A + 2) * x * x * x - (A + 3) * x * x + 1;
    } else if (x < 2) {
      v = A * x * x * x - 5 * A * x * x + 8 * A * x - 4 * A;
    } else {
      v = 0;
    }
    w.push_back(v);
    sum += v;
  }
  for (double& v : w) v /= sum;
  return w;
}

// The source indices (edge-clamped) and weights for output index x of an
// axis of length `in`; false when the point is extrapolated.
bool ref_taps(const RefConfig& c, int64_t in_len, double scale, int64_t out_int, int64_t x, double roi_start,
              double roi_end, std::vector<int64_t>& idx, std::vector<double>& w) {
  const auto in = static_cast<double>(in_len);
  const double out_w = scale * in;
  double xo = 0;
  if (c.coord == "align_corners") {
    xo = out_w == 1 ? 0 : x * (in - 1) / (out_w - 1);
  } else if (c.coord == "asymmetric") {
    xo = x / scale;
  } else if (c.coord == "tf_crop_and_resize") {
    xo = out_w == 1 ? (roi_end - roi_start) * (in - 1) / 2 : x * (roi_end - roi_start) * (in - 1) / (out_w - 1);
    xo += roi_start * (in - 1);
    if (xo < 0 || xo > in - 1) return false;
  } else if (c.coord == "pytorch_half_pixel") {
    xo = out_int > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  } else if (c.coord == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out_int) / out_w;
    xo = in / 2 * (1 - adjustment) + (x + 0.5) / scale - 0.5;
  } else {
    xo = (x + 0.5) / scale - 0.5;
  }
  double base = std::floor(xo);
  double ratio = xo - base;
  if (ratio == 0) {
    base -= 1;
    ratio = 1;
  }
  w = ref_coeffs(c, ratio, scale);
  const auto n = static_cast<int64_t>(w.size());
  const int64_t first = static_cast<int64_t>(base) - n / 2 + 1;
  if (c.exclude_outside) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (first + i < 0 || first + i >= in_len) w[static_cast<size_t>(i)] = 0;
      sum += w[static_cast<size_t>(i)];
    }
    for (double& v : w) v /= sum;
  }
  idx.clear();
  for (int64_t i = 0; i < n; ++i) idx.push_back(std::clamp<int64_t>(first + i, 0, in_len - 1));
  return true;
}

// Output element x: the blend over the leading axis of the blends over the
// rest, as the ONNX reference recurses.
double ref_nd(const RefConfig& c, const std::vector<double>& data, const std::vector<int64_t>& shape, size_t axis,
              int64_t offset, const std::vector<double>& scales, const std::vector<int64_t>& out,
              const std::vector<int64_t>& x, const std::vector<double>& roi) {
  const size_t r = shape.size();
  std::vector<int64_t> idx;
  std::vector<double> w;
  if (!ref_taps(c, shape[axis], scales[axis], out[axis], x[axis], roi.empty() ? 0 : roi[axis],
                roi.empty() ? 1 : roi[r + axis], idx, w))
    return c.extrapolation;
  int64_t inner = 1;
  for (size_t k = axis + 1; k < r; ++k) inner *= shape[k];
  double acc = 0;
  for (size_t t = 0; t < idx.size(); ++t) {
    if (w[t] == 0) continue;
    const int64_t at = offset + idx[t] * inner;
    acc += w[t] * (axis + 1 == r ? data[static_cast<size_t>(at)] : ref_nd(c, data, shape, axis + 1, at, scales, out, x, roi));
  }
  return acc;
}

std::vector<float> reference_resize(const RefConfig& c, const std::vector<float>& input,
                                    const std::vector<int64_t>& shape, const std::vector<double>& scales,
                                    const std::vector<int64_t>& out, const std::vector<double>& roi = {}) {
  std::vector<double> data(input.begin(), input.end());
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  std::vector<float> result;
  std::vector<int64_t> x(out.size(), 0);
  for (int64_t e = 0; e < total; ++e) {
    int64_t rem = e;
    for (size_t k = out.size(); k-- > 0;) {
      x[k] = rem % out[k];
      rem /= out[k];
    }
    result.push_back(static_cast<float>(ref_nd(c, data, shape, 0, 0, scales, out, x, roi)));
  }
  return result;
}

// ---- hand-computed cases ---------------------------------------------------------------

TEST(ResizeKernel, NearestUpsampleByIntegerScales) {
  NodeTest t("Resize", 19);
  t.input(make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}))
      .missing_input()
      .constant_input(make_tensor<float>({4}, {1, 1, 2, 3}))
      .attr("mode", "nearest");
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({1, 1, 4, 6}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,  //
                                                                 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  EXPECT_EQ(out_shape(t), "[1,1,4,6]");
}

TEST(ResizeKernel, LinearAlignCornersDividesByTheFractionalLength) {
  // W: 4 -> floor(2.4) = 2; x = 1 maps to 1 * 3 / (2.4 - 1) = 2.142857.
  auto out = NodeTest("Resize", 19)
                 .input(make_tensor<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}))
                 .missing_input()
                 .constant_input(make_tensor<float>({4}, {1, 1, 0.6f, 0.6f}))
                 .attr("mode", "linear")
                 .attr("coordinate_transformation_mode", "align_corners")
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 1, 1, 2}, {1.0f, 1.0f + 15.0f / 7.0f}));
}

TEST(ResizeKernel, LinearHalfPixelUpsample1D) {
  // x_out = 0..3 -> (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 (clamped at the edges).
  auto out = NodeTest("Resize", 13)
                 .input(make_tensor<float>({2}, {10, 20}))
                 .missing_input()
                 .input(make_tensor<float>({1}, {2}))
                 .attr("mode", "linear")
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({4}, {10, 12.5f, 17.5f, 20}));
}

TEST(ResizeKernel, AntialiasLinearDownsample1D) {
  // Scale 0.5: the triangle filter spans 4 inputs with weights 1/8, 3/8, 3/8, 1/8.
  auto out = NodeTest("Resize", 18)
                 .input(make_tensor<float>({8}, {0, 1, 2, 3, 4, 5, 6, 7}))
                 .missing_input()
                 .constant_input(make_tensor<float>({1}, {0.5f}))
                 .attr("mode", "linear")
                 .attr("antialias", 1)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({4}, {0.625f, 2.5f, 4.5f, 6.375f}));
}

TEST(ResizeKernel, CubicAtIntegerCoordinatesCopies) {
  // Asymmetric scale 2: even outputs sit on inputs exactly.
  auto out = NodeTest("Resize", 13)
                 .input(make_tensor<float>({4}, {1, 5, 2, 8}))
                 .missing_input()
                 .input(make_tensor<float>({1}, {2}))
                 .attr("mode", "cubic")
                 .attr("coordinate_transformation_mode", "asymmetric")
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const std::vector<float> y = to_vector<float>(out->at(0));
  ASSERT_EQ(y.size(), 8u);
  EXPECT_FLOAT_EQ(y[0], 1);
  EXPECT_FLOAT_EQ(y[2], 5);
  EXPECT_FLOAT_EQ(y[4], 2);
  EXPECT_FLOAT_EQ(y[6], 8);
  // x = 0.5 between 1 and 5 with neighbours 1 (clamped) and 2, A = -0.75:
  // weights -0.09375, 0.59375, 0.59375, -0.09375.
  EXPECT_NEAR(y[1], -0.09375f * 1 + 0.59375f * 1 + 0.59375f * 5 - 0.09375f * 2, 1e-5);
}

TEST(ResizeKernel, TfCropAndResizeExtrapolates) {
  // roi [0.5, 1.5] on a length-3 axis: x = 1 + j * 1 * 2 / 2 = 1, 2, 3; 3 is outside.
  auto out = NodeTest("Resize", 13)
                 .input(make_tensor<float>({3}, {10, 20, 30}))
                 .input(make_tensor<float>({2}, {0.5f, 1.5f}))
                 .missing_input()
                 .input(make_tensor<int64_t>({1}, {3}))
                 .attr("mode", "linear")
                 .attr("coordinate_transformation_mode", "tf_crop_and_resize")
                 .attr("extrapolation_value", -1.0f)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({3}, {20, 30, -1}));
}

TEST(ResizeKernel, NearestModesPickDifferentNeighbours) {
  // Asymmetric scale 2 on length 2: x = 0, 0.5, 1, 1.5.
  const std::vector<std::pair<std::string, std::vector<float>>> cases = {
      {"round_prefer_floor", {1, 1, 2, 2}}, {"round_prefer_ceil", {1, 2, 2, 2}}, {"floor", {1, 1, 2, 2}}, {"ceil", {1, 2, 2, 2}}};
  for (const auto& [mode, expected] : cases) {
    auto out = NodeTest("Resize", 13)
                   .input(make_tensor<float>({2}, {1, 2}))
                   .missing_input()
                   .input(make_tensor<float>({1}, {2}))
                   .attr("coordinate_transformation_mode", "asymmetric")
                   .attr("nearest_mode", mode)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(to_vector<float>(out->at(0)), expected) << mode;
  }
}

TEST(ResizeKernel, AxesAndKeepAspectRatio) {
  // 2x4 to fit in 1x3 (not_larger): scale min(1/2, 3/4) = 0.5 -> 1x2.
  NodeTest t("Resize", 19);
  t.input(make_tensor<float>({1, 1, 2, 4}, iota_values(8)))
      .missing_input()
      .missing_input()
      .constant_input(make_tensor<int64_t>({2}, {1, 3}))
      .attr("axes", std::vector<int64_t>{2, 3})
      .attr("keep_aspect_ratio_policy", "not_larger");
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({1, 1, 1, 2}, {1, 3}));
  EXPECT_EQ(out_shape(t), "[1,1,1,2]");

  // not_smaller: scale max(1/2, 3/4) = 0.75 -> round(1.5) = 2, 3.
  NodeTest u("Resize", 19);
  u.input(make_tensor<float>({1, 1, 2, 4}, iota_values(8)))
      .missing_input()
      .missing_input()
      .constant_input(make_tensor<int64_t>({2}, {1, 3}))
      .attr("axes", std::vector<int64_t>{-2, -1})
      .attr("keep_aspect_ratio_policy", "not_smaller");
  out = u.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{1, 1, 2, 3}));
  EXPECT_EQ(out_shape(u), "[1,1,2,3]");
}

TEST(ResizeKernel, IntegerTypesRoundAndSaturate) {
  // Linear halfway between 0 and 255 rounds to 128 (127.5 -> even is 128);
  // cubic overshoot past 255 saturates.
  auto out = NodeTest("Resize", 13)
                 .input(make_tensor<uint8_t>({2}, {0, 255}))
                 .missing_input()
                 .input(make_tensor<float>({1}, {2}))
                 .attr("mode", "linear")
                 .attr("coordinate_transformation_mode", "asymmetric")
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<uint8_t>({4}, {0, 128, 255, 255}));

  auto cubic = NodeTest("Resize", 13)
                   .input(make_tensor<uint8_t>({4}, {0, 0, 255, 255}))
                   .missing_input()
                   .input(make_tensor<float>({1}, {2}))
                   .attr("mode", "cubic")
                   .run();
  ASSERT_TRUE(cubic.ok()) << cubic.status().to_string();
  std::vector<float> in = {0, 0, 255, 255};
  RefConfig c;
  c.mode = "cubic";
  const std::vector<float> ref = reference_resize(c, in, {4}, {2.0}, {8});
  const std::vector<uint8_t> got = to_vector<uint8_t>(cubic->at(0));
  for (size_t i = 0; i < ref.size(); ++i)
    EXPECT_EQ(got[i], static_cast<uint8_t>(std::clamp(std::nearbyint(ref[i]), 0.0f, 255.0f))) << i;
}

TEST(ResizeKernel, NearestMovesAnyElementType) {
  auto out = NodeTest("Resize", 19)
                 .input(make_tensor<std::string>({1, 2}, {"a", "b"}))
                 .missing_input()
                 .input(make_tensor<float>({2}, {2, 1.5f}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // Width 2 -> 3: half_pixel x = -0.1667, 0.5, 1.1667 -> 0, 0 (0.5 rounds down), 1.
  expect_tensor_eq(out->at(0), make_tensor<std::string>({2, 3}, {"a", "a", "b", "a", "a", "b"}));
}

TEST(ResizeKernel, LegacyVersions) {
  // Upsample-7: scales attribute; Upsample-9 / Resize-10: scales input;
  // asymmetric coordinates.
  auto up7 = NodeTest("Upsample", 7)
                 .input(make_tensor<float>({1, 2}, {1, 3}))
                 .attr("scales", std::vector<float>{1, 2})
                 .attr("mode", "linear")
                 .run();
  ASSERT_TRUE(up7.ok()) << up7.status().to_string();
  expect_tensor_near(up7->at(0), make_tensor<float>({1, 4}, {1, 2, 3, 3}));

  auto up9 = NodeTest("Upsample", 9)
                 .input(make_tensor<int32_t>({2}, {7, 9}))
                 .constant_input(make_tensor<float>({1}, {3}))
                 .run();
  ASSERT_TRUE(up9.ok()) << up9.status().to_string();
  expect_tensor_eq(up9->at(0), make_tensor<int32_t>({6}, {7, 7, 7, 9, 9, 9}));

  // Resize-10 nearest shrinking rounds the source coordinate up:
  // x = j / 0.6 = 0, 1.67, 3.33 -> 0, 2, 4.
  auto r10 = NodeTest("Resize", 10)
                 .input(make_tensor<float>({5}, {1, 2, 3, 4, 5}))
                 .input(make_tensor<float>({1}, {0.6f}))
                 .run();
  ASSERT_TRUE(r10.ok()) << r10.status().to_string();
  expect_tensor_eq(r10->at(0), make_tensor<float>({3}, {1, 3, 5}));

  // Upsample is gone at opset 10.
  EXPECT_FALSE(NodeTest("Upsample", 10)
                   .input(make_tensor<float>({2}, {1, 2}))
                   .input(make_tensor<float>({1}, {2}))
                   .run()
                   .ok());
}

TEST(ResizeKernel, Opset11TakesEmptyScalesWithSizes) {
  auto out = NodeTest("Resize", 11)
                 .input(make_tensor<float>({1, 3}, {1, 2, 3}))
                 .input(make_tensor<float>({0}, {}))
                 .input(make_tensor<float>({0}, {}))
                 .input(make_tensor<int64_t>({2}, {2, 3}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({2, 3}, {1, 2, 3, 1, 2, 3}));
}

TEST(ResizeKernel, Errors) {
  // Both scales and sizes.
  EXPECT_FALSE(NodeTest("Resize", 13)
                   .input(make_tensor<float>({2}, {1, 2}))
                   .missing_input()
                   .input(make_tensor<float>({1}, {2}))
                   .input(make_tensor<int64_t>({1}, {4}))
                   .run()
                   .ok());
  // Neither.
  EXPECT_FALSE(NodeTest("Resize", 13).input(make_tensor<float>({2}, {1, 2})).run().ok());
  // Wrong count of scales, unknown mode, half_pixel_symmetric before 19.
  EXPECT_FALSE(NodeTest("Resize", 13)
                   .input(make_tensor<float>({2}, {1, 2}))
                   .missing_input()
                   .input(make_tensor<float>({2}, {2, 2}))
                   .run()
                   .ok());
  EXPECT_FALSE(NodeTest("Resize", 13)
                   .input(make_tensor<float>({2}, {1, 2}))
                   .missing_input()
                   .input(make_tensor<float>({1}, {2}))
                   .attr("mode", "bicubic")
                   .run()
                   .ok());
  EXPECT_FALSE(NodeTest("Resize", 18)
                   .input(make_tensor<float>({2}, {1, 2}))
                   .missing_input()
                   .input(make_tensor<float>({1}, {2}))
                   .attr("coordinate_transformation_mode", "half_pixel_symmetric")
                   .run()
                   .ok());
  // Linear on strings.
  EXPECT_FALSE(NodeTest("Resize", 13)
                   .input(make_tensor<std::string>({2}, {"a", "b"}))
                   .missing_input()
                   .input(make_tensor<float>({1}, {2}))
                   .attr("mode", "linear")
                   .run()
                   .ok());
}

TEST(ResizeKernel, ShapeInferenceWithRuntimeScalesKeepsRank) {
  NodeTest t("Resize", 13);
  t.input(make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}))
      .missing_input()
      .input(make_tensor<float>({4}, {1, 1, 2, 2}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out_shape(t), "[?,?,?,?]");
  EXPECT_EQ(out->at(0).shape(), (Shape{1, 1, 4, 4}));
}

// ---- sweep against the reference -------------------------------------------------------

struct SweepCase {
  std::vector<int64_t> shape;
  std::vector<float> scales;  // empty: use sizes
  std::vector<int64_t> sizes;
};

TEST(ResizeKernel, MatchesReferenceAcrossModes) {
  const std::vector<SweepCase> cases = {
      {{1, 2, 5, 7}, {1, 1, 2.0f, 1.5f}, {}},  {{1, 2, 9, 8}, {1, 1, 0.5f, 0.6f}, {}},
      {{2, 1, 6, 5}, {}, {2, 1, 4, 11}},       {{3, 4, 5}, {1.7f, 1, 0.8f}, {}},
      {{1, 1, 1, 6}, {}, {1, 1, 3, 1}},        {{1, 3, 16, 16}, {1, 1, 0.3f, 0.25f}, {}},
  };
  const std::vector<std::string> coords = {"half_pixel",          "pytorch_half_pixel", "align_corners",
                                           "asymmetric",          "half_pixel_symmetric"};
  int checked = 0;
  for (const SweepCase& sc : cases) {
    int64_t n = 1;
    for (int64_t d : sc.shape) n *= d;
    const std::vector<float> input = pseudo_random(n, static_cast<uint32_t>(n));
    for (const std::string mode : {"nearest", "linear", "cubic"})
      for (const std::string& coord : coords)
        for (int aa = 0; aa <= (mode == "nearest" ? 0 : 1); ++aa)
          for (int excl = 0; excl <= (mode == "cubic" ? 1 : 0); ++excl) {
            RefConfig c;
            c.mode = mode;
            c.coord = coord;
            c.antialias = aa != 0;
            c.exclude_outside = excl != 0;
            std::vector<double> scales;
            std::vector<int64_t> out;
            for (size_t k = 0; k < sc.shape.size(); ++k) {
              if (sc.scales.empty()) {
                out.push_back(sc.sizes[k]);
                scales.push_back(static_cast<double>(sc.sizes[k]) / static_cast<double>(sc.shape[k]));
              } else {
                scales.push_back(sc.scales[k]);
                out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(sc.scales[k]) * sc.shape[k])));
              }
            }
            const std::vector<float> expected = reference_resize(c, input, sc.shape, scales, out);
            NodeTest t("Resize", 19);
            t.input(make_tensor<float>(Shape(sc.shape), input)).missing_input();
            if (sc.scales.empty()) {
              t.missing_input().input(make_tensor<int64_t>({static_cast<int64_t>(sc.sizes.size())}, sc.sizes));
            } else {
              t.input(make_tensor<float>({static_cast<int64_t>(sc.scales.size())}, sc.scales));
            }
            t.attr("mode", mode).attr("coordinate_transformation_mode", coord).attr("antialias", aa);
            t.attr("exclude_outside", excl).threads(2);
            auto got = t.run();
            ASSERT_TRUE(got.ok()) << got.status().to_string();
            SCOPED_TRACE(mode + " " + coord + " aa " + std::to_string(aa) + " excl " + std::to_string(excl) +
                         " case " + Shape(sc.shape).to_string());
            expect_tensor_near(got->at(0), make_tensor<float>(Shape(out), expected), 1e-4, 1e-4);
            ++checked;
          }
  }
  EXPECT_GT(checked, 100);
}

TEST(ResizeKernel, TfCropAndResizeMatchesReferenceIn2D) {
  const std::vector<float> input = pseudo_random(2 * 6 * 7, 7);
  const std::vector<double> roi = {0, 0, 0.2, -0.1, 1, 1, 0.9, 1.3};
  for (const std::string mode : {"nearest", "linear", "cubic"}) {
    RefConfig c;
    c.mode = mode;
    c.coord = "tf_crop_and_resize";
    c.extrapolation = 9.5;
    const std::vector<int64_t> out = {1, 2, 5, 9};
    const std::vector<double> scales = {1, 1, 5.0 / 6.0, 9.0 / 7.0};
    const std::vector<float> expected = reference_resize(c, input, {1, 2, 6, 7}, scales, out, roi);
    auto got = NodeTest("Resize", 13)
                   .input(make_tensor<float>({1, 2, 6, 7}, input))
                   .input(make_tensor<float>({8}, std::vector<float>(roi.begin(), roi.end())))
                   .missing_input()
                   .input(make_tensor<int64_t>({4}, out))
                   .attr("mode", mode)
                   .attr("coordinate_transformation_mode", "tf_crop_and_resize")
                   .attr("extrapolation_value", 9.5f)
                   .run();
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    expect_tensor_near(got->at(0), make_tensor<float>(Shape(out), expected), 1e-4, 1e-4);
  }
}

TEST(ResizeKernel, BigImageBilinearWithThreadsAndOtherTypes) {
  const Shape shape{2, 3, 37, 53};
  const std::vector<float> input = pseudo_random(shape.num_elements(), 3);
  RefConfig c;
  c.mode = "linear";
  const std::vector<int64_t> out = {2, 3, 80, 41};
  const std::vector<double> scales = {1, 1, 80.0 / 37.0, 41.0 / 53.0};
  const std::vector<float> expected = reference_resize(c, input, shape.to_vector(), scales, out);
  auto got = NodeTest("Resize", 19)
                 .input(make_tensor<float>(shape, input))
                 .missing_input()
                 .missing_input()
                 .input(make_tensor<int64_t>({4}, out))
                 .attr("mode", "linear")
                 .threads(4)
                 .run();
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  expect_tensor_near(got->at(0), make_tensor<float>(Shape(out), expected), 1e-4, 1e-4);

  // double and float16 run the same passes.
  std::vector<double> input_d(input.begin(), input.end());
  auto got_d = NodeTest("Resize", 19)
                   .input(make_tensor<double>(shape, input_d))
                   .missing_input()
                   .missing_input()
                   .input(make_tensor<int64_t>({4}, out))
                   .attr("mode", "linear")
                   .run();
  ASSERT_TRUE(got_d.ok()) << got_d.status().to_string();
  std::vector<double> expected_d(expected.begin(), expected.end());
  expect_tensor_near(got_d->at(0), make_tensor<double>(Shape(out), expected_d), 1e-5, 1e-5);

  std::vector<Float16> input_h;
  for (float v : input) input_h.push_back(Float16{float_to_float16(v)});
  auto got_h = NodeTest("Resize", 19)
                   .input(make_tensor<Float16>(shape, input_h))
                   .missing_input()
                   .missing_input()
                   .input(make_tensor<int64_t>({4}, out))
                   .attr("mode", "linear")
                   .run();
  ASSERT_TRUE(got_h.ok()) << got_h.status().to_string();
  const Float16* h = got_h->at(0).data<Float16>();
  for (size_t i = 0; i < expected.size(); ++i)
    ASSERT_NEAR(float16_to_float(h[i].bits), expected[i], 0.02) << i;
}

// Output lengths computed from scales are checked before any conversion to
// int64: too large, infinite or NaN scales and roi are errors naming the node.
TEST(ResizeKernel, HugeOrNonFiniteSizesAreAnError) {
  auto run = [](std::vector<float> scales) {
    return NodeTest("Resize", 19)
        .input(make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}))
        .missing_input()
        .input(make_tensor<float>({4}, scales))
        .attr("mode", "nearest")
        .run();
  };
  for (float bad : {1e30f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    SCOPED_TRACE(bad);
    auto out = run({1, 1, bad, 1});
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("Resize"), std::string::npos) << out.status().message();
  }
  // Each length fits int64, their product does not.
  auto product = run({1, 1, 3e9f, 3e9f});
  ASSERT_FALSE(product.ok());
  EXPECT_EQ(product.status().code(), StatusCode::kInvalidArgument) << product.status().to_string();
  EXPECT_NE(product.status().message().find("overflows"), std::string::npos) << product.status().message();
  auto length = run({1, 1, 1e19f, 1});
  ASSERT_FALSE(length.ok());
  EXPECT_NE(length.status().message().find("not a valid dimension"), std::string::npos) << length.status().message();
  // Constant scales: inference refuses the model.
  NodeTest t("Resize", 19);
  t.input(make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}))
      .missing_input()
      .constant_input(make_tensor<float>({4}, {1, 1, 1e30f, 1}))
      .attr("mode", "nearest");
  auto inferred = t.run();
  ASSERT_FALSE(inferred.ok());
  EXPECT_NE(inferred.status().message().find("not a valid dimension"), std::string::npos)
      << inferred.status().message();
}

}  // namespace
}  // namespace sy

