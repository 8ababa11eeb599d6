// ConvTranspose against a reference that scatters each input element
// through the window, straight from the operator's definition, in double.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

struct Case {
  std::vector<int64_t> x_shape;  // N, C, spatial...
  int64_t m_per_group = 1;
  std::vector<int64_t> kernel;
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads, output_padding, output_shape;
  std::string auto_pad;
  bool bias = false;
};

std::vector<float> values(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(((i * 37 + seed * 11) % 23) - 11) / 8;
  return v;
}

int64_t product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

// The output's spatial dims and begin pads, by the spec's formulas.
void reference_geometry(const Case& c, std::vector<int64_t>& out, std::vector<int64_t>& pad_begin) {
  const size_t r = c.kernel.size();
  for (size_t i = 0; i < r; ++i) {
    const int64_t in = c.x_shape[i + 2];
    const int64_t s = c.strides.empty() ? 1 : c.strides[i];
    const int64_t d = c.dilations.empty() ? 1 : c.dilations[i];
    const int64_t op = c.output_padding.empty() ? 0 : c.output_padding[i];
    const int64_t full = s * (in - 1) + op + (c.kernel[i] - 1) * d + 1;
    int64_t target = c.output_shape.empty() ? -1 : c.output_shape[i];
    if (target < 0 && (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER")) target = in * s;
    if (target >= 0) {
      const int64_t total = full - target;
      const auto half = static_cast<int64_t>(std::floor(static_cast<double>(total) / 2));
      pad_begin.push_back(c.auto_pad == "SAME_UPPER" ? half : total - half);
      out.push_back(target);
    } else {
      const int64_t pb = c.pads.empty() ? 0 : c.pads[i], pe = c.pads.empty() ? 0 : c.pads[i + r];
      pad_begin.push_back(pb);
      out.push_back(full - pb - pe);
    }
  }
}

std::vector<float> reference(const Case& c, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& b, std::vector<int64_t>& y_shape) {
  std::vector<int64_t> out, pb;
  reference_geometry(c, out, pb);
  const size_t r = c.kernel.size();
  const int64_t N = c.x_shape[0], C = c.x_shape[1], cg = C / c.group, M = c.m_per_group * c.group;
  const int64_t in_size = product(c.x_shape, 2), out_size = product(out), taps = product(c.kernel);
  y_shape = {N, M};
  y_shape.insert(y_shape.end(), out.begin(), out.end());
  std::vector<double> y(static_cast<size_t>(N * M * out_size), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t p = 0; p < in_size; ++p)
        for (int64_t m = 0; m < c.m_per_group; ++m)
          for (int64_t t = 0; t < taps; ++t) {
            // Coordinates of p and t, last dim fastest.
            int64_t o = 0;
            bool inside = true;
            for (size_t i = 0, prest = p, trest = t; i < r; ++i) {
              const int64_t pspan = product(c.x_shape, i + 3), tspan = product(c.kernel, i + 1);
              const int64_t pi = static_cast<int64_t>(prest) / pspan, ti = static_cast<int64_t>(trest) / tspan;
              prest %= pspan;
              trest %= tspan;
              const int64_t s = c.strides.empty() ? 1 : c.strides[i];
              const int64_t d = c.dilations.empty() ? 1 : c.dilations[i];
              const int64_t oi = pi * s + ti * d - pb[i];
              if (oi < 0 || oi >= out[i]) inside = false;
              o = o * out[i] + oi;
            }
            if (!inside) continue;
            const int64_t g = ch / cg, oc = g * c.m_per_group + m;
            y[static_cast<size_t>((n * M + oc) * out_size + o)] +=
                static_cast<double>(x[static_cast<size_t>((n * C + ch) * in_size + p)]) *
                w[static_cast<size_t>((ch * c.m_per_group + m) * taps + t)];
          }
  std::vector<float> yf(y.size());
  for (size_t i = 0; i < y.size(); ++i)
    yf[i] = static_cast<float>(y[i] + (b.empty() ? 0.0 : b[(i / static_cast<size_t>(out_size)) % static_cast<size_t>(M)]));
  return yf;
}

void check(const Case& c, bool constant_w, int threads) {
  std::vector<int64_t> w_shape = {c.x_shape[1], c.m_per_group};
  w_shape.insert(w_shape.end(), c.kernel.begin(), c.kernel.end());
  const std::vector<float> x = values(product(c.x_shape), 1), w = values(product(w_shape), 2);
  const std::vector<float> b = c.bias ? values(c.m_per_group * c.group, 3) : std::vector<float>{};
  NodeTest t("ConvTranspose", 22);
  t.input(make_tensor<float>(Shape(c.x_shape), x));
  if (constant_w)
    t.constant_input(make_tensor<float>(Shape(w_shape), w));
  else
    t.input(make_tensor<float>(Shape(w_shape), w));
  if (c.bias) t.constant_input(make_tensor<float>({c.m_per_group * c.group}, b));
  if (c.group != 1) t.attr("group", c.group);
  if (!c.strides.empty()) t.attr("strides", c.strides);
  if (!c.dilations.empty()) t.attr("dilations", c.dilations);
  if (!c.pads.empty()) t.attr("pads", c.pads);
  if (!c.output_padding.empty()) t.attr("output_padding", c.output_padding);
  if (!c.output_shape.empty()) t.attr("output_shape", c.output_shape);
  if (!c.auto_pad.empty()) t.attr("auto_pad", c.auto_pad);
  t.threads(threads);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  std::vector<int64_t> y_shape;
  const std::vector<float> want = reference(c, x, w, b, y_shape);
  EXPECT_EQ(out->at(0).shape().to_string(), Shape(y_shape).to_string());
  const std::vector<float> got = to_vector<float>(out->at(0));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::fabs(want[i]))) << "element " << i;
}

TEST(ConvTransposeKernel, EveryAttributeAgainstTheDefinition) {
  const std::vector<Case> cases = {
      {{1, 1, 3, 3}, 2, {3, 3}},
      {{2, 3, 5}, 2, {3}, 1, {2}, {}, {1, 0}, {1}, {}, "", true},
      {{1, 2, 3, 4, 5}, 2, {3, 2, 3}, 1, {1, 2, 1}, {1, 1, 2}, {}, {}, {}, "", true},
      {{1, 1, 3, 3}, 2, {3, 3}, 1, {2, 2}, {}, {}, {}, {}, "SAME_UPPER"},
      {{1, 1, 3, 3}, 2, {3, 3}, 1, {2, 2}, {}, {}, {}, {}, "SAME_LOWER"},
      {{1, 1, 4, 4}, 1, {1, 1}, 1, {2, 2}, {}, {}, {}, {}, "SAME_UPPER"},  // negative padding
      {{1, 1, 3, 3}, 1, {2, 2}, 1, {}, {2, 2}},
      {{3, 4, 3, 3}, 3, {3, 3}, 2, {2, 1}, {}, {0, 1, 2, 0}, {}, {}, "", true},
      {{1, 6, 4, 5}, 1, {3, 3}, 6, {2, 2}, {}, {1, 1, 1, 1}, {1, 1}, {}, "", true},  // depthwise
      {{1, 1, 3, 3}, 2, {3, 3}, 1, {3, 2}, {}, {}, {1, 1}, {10, 8}},
      {{1, 1, 3, 3}, 2, {3, 3}, 1, {3, 2}, {}, {}, {}, {10, 8}},  // one past the full size
      {{1, 1, 3, 3}, 2, {3, 3}, 1, {3, 2}, {}, {1, 2, 1, 2}},
      {{2, 8, 6, 7}, 4, {2, 2}, 1, {2, 2}, {}, {}, {}, {}, "", true},       // the 2x2 upsampler
      {{1, 8, 6, 7}, 4, {4, 4}, 1, {2, 2}, {}, {1, 1, 1, 1}, {}, {}, "", true},  // the 4x4 one
      {{1, 2, 2, 3}, 1, {1, 1}, 1, {3, 3}, {}, {}, {2, 2}},                // positions only the bias reaches
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    check(cases[i], true, 1);
    check(cases[i], false, 2);
  }
}

TEST(ConvTransposeKernel, ManyChunksAndThreads) {
  // 64 x 4 rows of cols per position: the 4096 positions need several chunks.
  check({{1, 16, 64, 64}, 64, {2, 2}, 1, {2, 2}, {}, {}, {}, {}, "", true}, true, 2);
  check({{1, 4, 2048}, 256, {16}, 1, {8}, {}, {4, 4}, {}, {}, "", true}, true, 2);
}

TEST(ConvTransposeKernel, RefusesBadAttributesAndShapes) {
  const auto run = [](std::vector<int64_t> x, std::vector<int64_t> w, auto&& setup) {
    NodeTest t("ConvTranspose", 22);
    t.input(make_tensor<float>(Shape(x), values(product(x), 1)));
    t.constant_input(make_tensor<float>(Shape(w), values(product(w), 2)));
    setup(t);
    return t.run();
  };
  const auto none = [](NodeTest&) {};
  EXPECT_TRUE(run({1, 2, 3, 3}, {2, 1, 2, 2}, none).ok());
  EXPECT_FALSE(run({1, 3, 3, 3}, {2, 1, 2, 2}, none).ok());  // C != W[0]
  EXPECT_FALSE(run({1, 2, 3}, {2, 1, 2, 2}, none).ok());     // ranks differ
  EXPECT_FALSE(run({1, 2, 3, 3}, {2, 1, 2, 2}, [](NodeTest& t) { t.attr("group", int64_t{0}); }).ok());
  EXPECT_FALSE(run({1, 2, 3, 3}, {2, 1, 2, 2}, [](NodeTest& t) { t.attr("group", int64_t{3}); }).ok());
  EXPECT_FALSE(run({1, 2, 3, 3}, {2, 1, 2, 2}, [](NodeTest& t) { t.attr("strides", std::vector<int64_t>{0, 1}); }).ok());
  EXPECT_FALSE(run({1, 2, 3, 3}, {2, 1, 2, 2}, [](NodeTest& t) { t.attr("pads", std::vector<int64_t>{5, 5, 5, 5}); }).ok());
  EXPECT_FALSE(
      run({1, 2, 3, 3}, {2, 1, 2, 2}, [](NodeTest& t) { t.attr("output_padding", std::vector<int64_t>{1, 1}); }).ok());
  EXPECT_FALSE(run({1, 2, 3, 3}, {2, 1, 2, 2}, [](NodeTest& t) { t.attr("kernel_shape", std::vector<int64_t>{3, 3}); })
                   .ok());
  EXPECT_FALSE(run({1, 2, 3, 3}, {2, 1, 2, 2}, [](NodeTest& t) {
                 t.attr("strides", std::vector<int64_t>{INT64_MAX / 2, 1});
               }).ok());
}

}  // namespace
}  // namespace sy
