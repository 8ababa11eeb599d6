// Pooling kernels against a brute-force reference written here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy::testing {
namespace {

std::vector<float> values(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = static_cast<uint32_t>(seed) * 747796405u + 7;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>((s >> 10) % 1000) - 500) / 100.0f;  // few ties
  }
  return v;
}

struct PoolSpec {
  std::vector<int64_t> x;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides, dilations, pads;
  std::string auto_pad;
  bool ceil_mode = false;
  bool count_include_pad = false;
  int storage_order = 0;
  int threads = 1;
  double p = 2;  // LpPool's exponent
};

struct Expected {
  std::vector<int64_t> shape;
  std::vector<float> max, avg, lp;
  std::vector<int64_t> argmax;
};

int64_t product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

// Every tap of every window, checked one by one.
Expected reference(const PoolSpec& s, const std::vector<float>& x) {
  const size_t r = s.kernel.size();
  int64_t st[8], dl[8], pb[8], pe[8], out[8];
  for (size_t i = 0; i < r; ++i) {
    st[i] = s.strides.empty() ? 1 : s.strides[i];
    dl[i] = s.dilations.empty() ? 1 : s.dilations[i];
    const int64_t in = s.x[i + 2];
    const int64_t ek = (s.kernel[i] - 1) * dl[i] + 1;
    if (s.auto_pad == "SAME_UPPER" || s.auto_pad == "SAME_LOWER") {
      out[i] = (in + st[i] - 1) / st[i];
      const int64_t total = std::max<int64_t>(0, (out[i] - 1) * st[i] + ek - in);
      pb[i] = s.auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
      pe[i] = total - pb[i];
    } else {
      pb[i] = s.pads.empty() ? 0 : s.pads[i];
      pe[i] = s.pads.empty() ? 0 : s.pads[i + r];
      const int64_t span = in + pb[i] + pe[i] - ek;
      out[i] = (s.ceil_mode ? (span + st[i] - 1) / st[i] : span / st[i]) + 1;
      if (s.ceil_mode && (out[i] - 1) * st[i] >= in + pb[i]) --out[i];
    }
  }
  Expected e;
  e.shape = {s.x[0], s.x[1]};
  for (size_t i = 0; i < r; ++i) e.shape.push_back(out[i]);
  const int64_t planes = s.x[0] * s.x[1];
  const int64_t in_size = product(s.x, 2), out_size = product(e.shape, 2), ksize = product(s.kernel);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t q = 0; q < out_size; ++q) {
      int64_t o[8];
      for (int64_t rem = q, i = static_cast<int64_t>(r) - 1; i >= 0; --i) {
        o[i] = rem % out[i];
        rem /= out[i];
      }
      float best = -std::numeric_limits<float>::infinity();
      int64_t best_idx = -1;
      double sum = 0, power_sum = 0;
      int64_t inside_count = 0, padded_count = 0;
      for (int64_t kq = 0; kq < ksize; ++kq) {
        int64_t kk[8];
        for (int64_t rem = kq, i = static_cast<int64_t>(r) - 1; i >= 0; --i) {
          kk[i] = rem % s.kernel[static_cast<size_t>(i)];
          rem /= s.kernel[static_cast<size_t>(i)];
        }
        bool inside = true, in_padded = true;
        int64_t row_major = 0, col_major = 0, stride = 1;
        for (size_t d = 0; d < r; ++d) {
          const int64_t pos = o[d] * st[d] - pb[d] + kk[d] * dl[d];
          const int64_t in = s.x[d + 2];
          if (pos < 0 || pos >= in) inside = false;
          if (pos < -pb[d] || pos >= in + pe[d]) in_padded = false;
          row_major = row_major * in + pos;
          col_major += pos * stride;
          stride *= in;
        }
        if (in_padded) ++padded_count;
        if (!inside) continue;
        ++inside_count;
        const float v = x[static_cast<size_t>(p * in_size + row_major)];
        sum += v;
        power_sum += std::pow(std::fabs(static_cast<double>(v)), s.p);
        if (v > best) {
          best = v;
          best_idx = p * in_size + (s.storage_order == 1 ? col_major : row_major);
        }
      }
      e.max.push_back(best);
      e.argmax.push_back(best_idx);
      e.avg.push_back(static_cast<float>(sum / static_cast<double>(s.count_include_pad ? padded_count : inside_count)));
      e.lp.push_back(static_cast<float>(std::pow(power_sum, 1 / s.p)));
    }
  return e;
}

NodeTest make(const std::string& op, int opset, const PoolSpec& s, const std::vector<float>& x) {
  NodeTest t(op, opset);
  t.input(make_tensor<float>(Shape(s.x), x));
  t.attr("kernel_shape", s.kernel);
  if (!s.strides.empty()) t.attr("strides", s.strides);
  if (!s.dilations.empty()) t.attr("dilations", s.dilations);
  if (!s.pads.empty()) t.attr("pads", s.pads);
  if (!s.auto_pad.empty()) t.attr("auto_pad", s.auto_pad);
  if (s.ceil_mode) t.attr("ceil_mode", 1);
  t.threads(s.threads);
  return t;
}

void check_max(const PoolSpec& s) {
  const auto x = values(product(s.x), 1);
  const Expected e = reference(s, x);
  auto t = make("MaxPool", 12, s, x);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>(Shape(e.shape), e.max));
  auto t2 = make("MaxPool", 12, s, x);
  if (s.storage_order != 0) t2.attr("storage_order", s.storage_order);
  auto out2 = t2.outputs(2).run();
  ASSERT_TRUE(out2.ok()) << out2.status().to_string();
  expect_tensor_near(out2->at(0), make_tensor<float>(Shape(e.shape), e.max));
  expect_tensor_eq(out2->at(1), make_tensor<int64_t>(Shape(e.shape), e.argmax));
}

void check_avg(const PoolSpec& s, int opset = 19) {
  const auto x = values(product(s.x), 2);
  const Expected e = reference(s, x);
  auto t = make("AveragePool", opset, s, x);
  if (s.count_include_pad) t.attr("count_include_pad", 1);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>(Shape(e.shape), e.avg), 1e-5, 1e-5);
  const Graph& g = t.graph();
  const ValueType& yt = g.values[static_cast<size_t>(g.outputs[0])].type;
  ASSERT_TRUE(yt.has_shape);
  for (size_t i = 0; i < e.shape.size(); ++i) EXPECT_EQ(yt.dims[i].value, e.shape[i]) << "inferred dim " << i;
}

TEST(MaxPoolTest, HandComputed) {
  auto out = NodeTest("MaxPool", 12)
                 .input(make_tensor<float>({1, 1, 2, 3}, {1, 5, 2, 4, 3, 6}))
                 .attr("kernel_shape", std::vector<int64_t>{2, 2})
                 .outputs(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 1, 1, 2}, {5, 6}));
  expect_tensor_eq(out->at(1), make_tensor<int64_t>({1, 1, 1, 2}, {1, 5}));
}

TEST(MaxPoolTest, PadsStridesDilations) {
  check_max({.x = {2, 3, 9, 8}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}});
  check_max({.x = {1, 2, 10, 11}, .kernel = {2, 3}, .strides = {3, 1}, .dilations = {2, 2}, .pads = {0, 2, 1, 0}});
  check_max({.x = {1, 1, 5, 5}, .kernel = {5, 5}, .pads = {2, 2, 2, 2}});
  // ResNet's stem pool (3x3, stride 2, pad 1) on odd and even widths past a vector.
  check_max({.x = {1, 3, 35, 37}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}});
  check_max({.x = {1, 2, 12, 40}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}});
  // A row too wide for the stack buffer takes the generic path.
  check_max({.x = {1, 1, 3, 9000}, .kernel = {2, 3}, .strides = {1, 2}, .pads = {0, 1, 0, 1}});
}

TEST(MaxPoolTest, CeilModeAndAutoPad) {
  check_max({.x = {1, 2, 7, 7}, .kernel = {2, 2}, .strides = {2, 2}, .ceil_mode = true});
  check_max({.x = {1, 1, 2, 2}, .kernel = {1, 1}, .strides = {2, 2}, .ceil_mode = true});  // last window dropped
  check_max({.x = {1, 2, 7, 6}, .kernel = {3, 2}, .strides = {2, 2}, .auto_pad = "SAME_UPPER"});
  check_max({.x = {1, 2, 7, 6}, .kernel = {3, 2}, .strides = {2, 2}, .auto_pad = "SAME_LOWER"});
  check_max({.x = {1, 2, 7, 6}, .kernel = {3, 2}, .strides = {2, 1}, .auto_pad = "VALID"});
}

TEST(MaxPoolTest, IndicesColumnMajor) {
  check_max({.x = {2, 2, 5, 4}, .kernel = {2, 2}, .strides = {2, 2}, .storage_order = 1});
  check_max({.x = {1, 1, 6, 5}, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .storage_order = 1});
}

TEST(MaxPoolTest, OneAndThreeDimensionalThreaded) {
  check_max({.x = {2, 3, 20}, .kernel = {3}, .strides = {2}, .pads = {1, 1}});
  check_max({.x = {1, 2, 6, 7, 5}, .kernel = {2, 3, 2}, .strides = {2, 1, 2}, .dilations = {1, 2, 1}, .threads = 2});
  check_max({.x = {4, 16, 30, 30}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .threads = 3});
}

TEST(MaxPoolTest, Uint8) {
  auto out = NodeTest("MaxPool", 12)
                 .input(make_tensor<uint8_t>({1, 1, 3, 3}, {1, 200, 3, 4, 5, 6, 7, 8, 255}))
                 .attr("kernel_shape", std::vector<int64_t>{2, 2})
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<uint8_t>({1, 1, 2, 2}, {200, 200, 8, 255}));
}

TEST(AveragePoolTest, HandComputedLastWindowStartsOnPad) {
  // ONNX's averagepool_2d_ceil_last_window_starts_on_pad: one window, 4 of
  // its 9 taps real, divided by 9 because padding counts.
  auto out = NodeTest("AveragePool", 19)
                 .input(make_tensor<float>({1, 1, 2, 2}, {9, 18, 27, 36}))
                 .attr("kernel_shape", std::vector<int64_t>{3, 3})
                 .attr("strides", std::vector<int64_t>{3, 3})
                 .attr("pads", std::vector<int64_t>{1, 1, 1, 1})
                 .attr("ceil_mode", 1)
                 .attr("count_include_pad", 1)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 1, 1, 1}, {10}));
}

TEST(AveragePoolTest, CountIncludePad) {
  for (bool include : {false, true}) {
    check_avg({.x = {1, 2, 7, 7}, .kernel = {3, 3}, .pads = {2, 2, 2, 2}, .count_include_pad = include});
    check_avg({.x = {2, 2, 8, 6}, .kernel = {3, 2}, .strides = {2, 2}, .pads = {1, 0, 1, 1}, .count_include_pad = include},
              11);
    check_avg({.x = {1, 1, 7, 7}, .kernel = {3, 3}, .strides = {2, 2}, .auto_pad = "SAME_LOWER",
               .count_include_pad = include});
  }
}

TEST(AveragePoolTest, CeilModeAndDilations) {
  for (bool include : {false, true}) {
    check_avg({.x = {1, 2, 7, 8}, .kernel = {2, 3}, .strides = {2, 2}, .pads = {1, 1, 0, 0}, .ceil_mode = true,
               .count_include_pad = include});
    check_avg({.x = {1, 1, 4, 4}, .kernel = {2, 2}, .dilations = {2, 2}, .ceil_mode = true});
    // ONNX's averagepool_3d_dilations_large: a window running past the end with no pads.
    check_avg({.x = {1, 1, 14, 14, 14}, .kernel = {5, 5, 5}, .strides = {3, 3, 3}, .dilations = {2, 2, 2},
               .ceil_mode = true, .count_include_pad = include, .threads = 2});
  }
}

TEST(AveragePoolTest, OneDimensional) {
  check_avg({.x = {2, 3, 11}, .kernel = {4}, .strides = {3}, .pads = {2, 1}, .count_include_pad = true});
}

// LpPool with an integer p (versions 2 on) or a float one (version 1).
void check_lp(const PoolSpec& s, int opset = 22) {
  const auto x = values(product(s.x), 3);
  const Expected e = reference(s, x);
  auto t = make("LpPool", opset, s, x);
  if (opset < 2) {
    t.attr("p", static_cast<float>(s.p));
  } else {
    t.attr("p", static_cast<int64_t>(s.p));
  }
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>(Shape(e.shape), e.lp), 1e-5, 1e-5);
}

TEST(LpPoolTest, HandComputedDilations) {
  // ONNX's lppool_2d_dilations: 2x2 taps two apart over 1..16, p = 2, so
  // the first output is sqrt(1 + 9 + 81 + 121) = sqrt(212).
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  auto out = NodeTest("LpPool", 22)
                 .input(make_tensor<float>({1, 1, 4, 4}, x))
                 .attr("kernel_shape", std::vector<int64_t>{2, 2})
                 .attr("dilations", std::vector<int64_t>{2, 2})
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 1, 2, 2}, {14.560219778561036f, 16.24807680927192f,
                                                                   21.633307652783937f, 23.49468024894146f}));
}

TEST(LpPoolTest, PadsStridesAndAutoPadForSeveralP) {
  for (double p : {1.0, 2.0, 3.0, 4.0}) {
    check_lp({.x = {1, 3, 9, 9}, .kernel = {3, 3}, .pads = {2, 2, 2, 2}, .p = p});
    check_lp({.x = {2, 2, 8, 7}, .kernel = {3, 2}, .strides = {2, 3}, .pads = {1, 0, 0, 1}, .p = p}, 11);
    check_lp({.x = {1, 2, 7, 6}, .kernel = {2, 2}, .auto_pad = "SAME_UPPER", .p = p}, 2);
    check_lp({.x = {1, 2, 7, 6}, .kernel = {2, 2}, .auto_pad = "SAME_LOWER", .p = p}, 18);
    check_lp({.x = {1, 2, 7, 6}, .kernel = {3, 2}, .strides = {2, 1}, .auto_pad = "VALID", .p = p});
  }
}

TEST(LpPoolTest, CeilModeDilationsAndRanks) {
  check_lp({.x = {1, 2, 7, 8}, .kernel = {2, 3}, .strides = {2, 2}, .pads = {1, 1, 0, 0}, .ceil_mode = true, .p = 3},
           18);
  check_lp({.x = {1, 1, 9, 9}, .kernel = {2, 2}, .strides = {2, 2}, .dilations = {3, 2}, .ceil_mode = true});
  check_lp({.x = {2, 3, 32}, .kernel = {2}, .p = 3});
  check_lp({.x = {1, 2, 6, 7, 5}, .kernel = {2, 3, 2}, .strides = {2, 1, 2}, .dilations = {1, 2, 1}, .threads = 2});
  check_lp({.x = {4, 8, 20, 20}, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .threads = 3, .p = 4});
}

TEST(LpPoolTest, VersionOneTakesAFloatP) {
  check_lp({.x = {1, 2, 6, 6}, .kernel = {2, 2}, .strides = {2, 2}, .p = 1.5}, 1);
  check_lp({.x = {1, 2, 6, 6}, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .p = 2}, 1);
}

TEST(LpPoolTest, Float16ComputesInFloat) {
  // Window {3, 4} (in float16: 0x4200, 0x4400) with p = 2 gives 5 (0x4500).
  Tensor x = Tensor::allocate(DataType::kFloat16, Shape{1, 1, 1, 2}).value();
  x.data<uint16_t>()[0] = 0x4200;
  x.data<uint16_t>()[1] = 0x4400;
  auto out = NodeTest("LpPool", 22).input(x).attr("kernel_shape", std::vector<int64_t>{1, 2}).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->at(0).dtype(), DataType::kFloat16);
  EXPECT_EQ(out->at(0).shape(), Shape({1, 1, 1, 1}));
  EXPECT_EQ(out->at(0).data<uint16_t>()[0], 0x4500);
}

TEST(LpPoolTest, NonPositivePIsAnError) {
  for (int64_t p : {int64_t{0}, int64_t{-2}}) {
    auto out = NodeTest("LpPool", 22)
                   .input(make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4}))
                   .attr("kernel_shape", std::vector<int64_t>{2, 2})
                   .attr("p", p)
                   .run();
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("p must be positive"), std::string::npos) << out.status().to_string();
  }
  auto missing = NodeTest("LpPool", 22).input(make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4})).run();
  EXPECT_FALSE(missing.ok());
}

TEST(GlobalPoolTest, AverageAndMax) {
  const auto x = values(2 * 3 * 5 * 7, 4);
  std::vector<float> avg, mx;
  for (int p = 0; p < 6; ++p) {
    double s = 0;
    float m = -1e30f;
    for (int i = 0; i < 35; ++i) {
      s += x[static_cast<size_t>(p * 35 + i)];
      m = std::max(m, x[static_cast<size_t>(p * 35 + i)]);
    }
    avg.push_back(static_cast<float>(s / 35));
    mx.push_back(m);
  }
  auto a = NodeTest("GlobalAveragePool", 1).input(make_tensor<float>({2, 3, 5, 7}, x)).run();
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  expect_tensor_near(a->at(0), make_tensor<float>({2, 3, 1, 1}, avg));
  auto m = NodeTest("GlobalMaxPool", 1).input(make_tensor<float>({2, 3, 5, 7}, x)).threads(2).run();
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  expect_tensor_near(m->at(0), make_tensor<float>({2, 3, 1, 1}, mx));
  auto three = NodeTest("GlobalAveragePool", 1).input(make_tensor<float>({1, 1, 2, 1, 2}, {1, 2, 3, 6})).run();
  ASSERT_TRUE(three.ok()) << three.status().to_string();
  expect_tensor_near(three->at(0), make_tensor<float>({1, 1, 1, 1, 1}, {3}));
}

TEST(GlobalLpPoolTest, HandComputedNormsForEachVersion) {
  // Plane 0 holds 3, -4 (L2 norm 5, L1 norm 7); plane 1 holds 1, 2, 2 and a 0
  // (L2 norm 3); p = 3 over -1, 2: (1 + 8)^(1/3).
  const Tensor x = make_tensor<float>({1, 2, 2, 2}, {3, -4, 0, 0, 1, 2, 2, 0});
  auto two = NodeTest("GlobalLpPool", 2).input(x).threads(2).run();
  ASSERT_TRUE(two.ok()) << two.status().to_string();
  expect_tensor_near(two->at(0), make_tensor<float>({1, 2, 1, 1}, {5, 3}));
  auto one = NodeTest("GlobalLpPool", 1).input(x).attr("p", 1.0f).run();
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  expect_tensor_near(one->at(0), make_tensor<float>({1, 2, 1, 1}, {7, 5}));
  auto three = NodeTest("GlobalLpPool", 22).input(make_tensor<double>({1, 1, 2}, {-1, 2})).attr("p", int64_t{3}).run();
  ASSERT_TRUE(three.ok()) << three.status().to_string();
  expect_tensor_near(three->at(0), make_tensor<double>({1, 1, 1}, {std::cbrt(9.0)}));
  EXPECT_FALSE(NodeTest("GlobalLpPool", 2).input(x).attr("p", int64_t{0}).run().ok());
}

TEST(PoolTest, MissingKernelShapeIsAnError) {
  auto out = NodeTest("MaxPool", 12).input(make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4})).run();
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace sy::testing
