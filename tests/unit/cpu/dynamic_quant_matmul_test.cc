// DynamicQuantizeMatMul (com.switchyard; providers/cpu/dynamic_quant_matmul.cc)
// against a plain loop written from ONNX's DynamicQuantizeLinear and
// MatMulInteger and the float Cast / Mul / Add after them: A's range
// widened to hold 0, scale = (max - min) / 255, zero point and values
// rounded half to even, int32 sums of (a - a_zp)(b - b_zp[n]), then
// float(sum) * (a_scale * b_scale[n]) + bias[n]. Every float step there is
// one rounding of the same operands the kernel rounds, so the two must
// agree to the bit. Shapes leave tails in every loop (rows of 6, k of 4,
// columns of 16 and 32); B int8 and uint8, per tensor and per column,
// with and without zero point and bias, constant (prepacked) and not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::make_tensor;
using testing::NodeTest;

uint32_t next(uint32_t& seed) {
  seed = seed * 1664525u + 1013904223u;
  return seed >> 8;
}

struct Case {
  std::vector<int64_t> a_shape;  // [..., K]
  int64_t N = 0;
  DataType b_type = DataType::kInt8;
  bool per_column = false;
  bool zero_point = false;
  bool bias = false;
  bool b_constant = true;
  float a_lo = -1.5f, a_hi = 2.0f;  // A's values spread over [a_lo, a_hi]
  int threads = 1;
};

struct Operands {
  std::vector<float> a;
  std::vector<int32_t> b;  // [K, N], in B's type's range
  std::vector<float> b_scale;
  std::vector<int32_t> b_zp;  // empty: none
  std::vector<float> bias;    // empty: none
  int64_t K = 0;
};

Operands make_operands(const Case& c, uint32_t seed) {
  Operands o;
  o.K = c.a_shape.back();
  int64_t count = 1;
  for (int64_t d : c.a_shape) count *= d;
  for (int64_t i = 0; i < count; ++i)
    o.a.push_back(c.a_lo + (c.a_hi - c.a_lo) * static_cast<float>(next(seed) % 4096) / 4095.0f);
  const int lo = c.b_type == DataType::kInt8 ? -128 : 0;
  for (int64_t i = 0; i < o.K * c.N; ++i) o.b.push_back(lo + static_cast<int32_t>(next(seed) % 256));
  const int64_t params = c.per_column ? c.N : 1;
  for (int64_t i = 0; i < params; ++i) o.b_scale.push_back(0.001f + 0.0003f * static_cast<float>(next(seed) % 64));
  if (c.zero_point)
    for (int64_t i = 0; i < params; ++i) o.b_zp.push_back(lo + static_cast<int32_t>(next(seed) % 256));
  if (c.bias)
    for (int64_t i = 0; i < c.N; ++i) o.bias.push_back(static_cast<float>(static_cast<int>(next(seed) % 2001) - 1000) / 256.0f);
  return o;
}

// The reference, step by step as the unfused graph takes them.
std::vector<float> reference(const Case& c, const Operands& o) {
  float lo = 0.0f, hi = 0.0f;
  for (float v : o.a) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  const auto zp = static_cast<int32_t>(std::nearbyint(std::clamp(-lo / scale, 0.0f, 255.0f)));
  std::vector<int32_t> q;
  for (float v : o.a) q.push_back(static_cast<int32_t>(std::clamp(std::nearbyint(v / scale) + zp, 0.0f, 255.0f)));
  const int64_t rows = static_cast<int64_t>(o.a.size()) / o.K;
  std::vector<float> y;
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t n = 0; n < c.N; ++n) {
      const size_t p = o.b_scale.size() == 1 ? 0 : static_cast<size_t>(n);
      const int32_t bz = o.b_zp.empty() ? 0 : o.b_zp[p];
      int32_t sum = 0;
      for (int64_t k = 0; k < o.K; ++k)
        sum += (q[static_cast<size_t>(m * o.K + k)] - zp) * (o.b[static_cast<size_t>(k * c.N + n)] - bz);
      float v = static_cast<float>(sum) * (scale * o.b_scale[p]);
      if (!o.bias.empty()) v = v + o.bias[static_cast<size_t>(n)];
      y.push_back(v);
    }
  return y;
}

Tensor int_tensor(DataType t, const Shape& shape, const std::vector<int32_t>& v) {
  if (t == DataType::kInt8) return make_tensor<int8_t>(shape, std::vector<int8_t>(v.begin(), v.end()));
  return make_tensor<uint8_t>(shape, std::vector<uint8_t>(v.begin(), v.end()));
}

NodeTest make_node(const Case& c, const Operands& o) {
  NodeTest t("DynamicQuantizeMatMul", 1, "com.switchyard");
  t.input(make_tensor<float>(Shape(c.a_shape), o.a));
  Tensor b = int_tensor(c.b_type, {o.K, c.N}, o.b);
  if (c.b_constant) {
    t.constant_input(std::move(b));
  } else {
    t.input(std::move(b));
  }
  const Shape param_shape = c.per_column ? Shape{c.N} : Shape{};
  t.constant_input(make_tensor<float>(param_shape, o.b_scale));
  if (c.zero_point) {
    t.constant_input(int_tensor(c.b_type, param_shape, o.b_zp));
  } else if (c.bias) {
    t.missing_input();
  }
  if (c.bias) t.constant_input(make_tensor<float>({c.N}, o.bias));
  t.threads(c.threads);
  return t;
}

void expect_matches_reference(const Case& c, uint32_t seed) {
  const Operands o = make_operands(c, seed);
  auto out = make_node(c, o).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  Shape y_shape(std::vector<int64_t>(c.a_shape.begin(), c.a_shape.end() - 1));
  y_shape.push_back(c.N);
  expect_tensor_eq((*out)[0], make_tensor<float>(y_shape, reference(c, o)));
}

TEST(DynamicQuantizeMatMul, MatchesTheSpecOnOddShapes) {
  // M 7 and 13 (not multiples of 6), K 13 and 70 (not of 4), N 37 and 5.
  for (const auto& shape : {std::vector<int64_t>{7, 13}, std::vector<int64_t>{13, 70}, std::vector<int64_t>{2, 3, 70}})
    for (int64_t n : {37, 5, 48}) {
      Case c;
      c.a_shape = shape;
      c.N = n;
      SCOPED_TRACE("K " + std::to_string(shape.back()) + " N " + std::to_string(n));
      expect_matches_reference(c, static_cast<uint32_t>(shape.back() * 100 + n));
    }
}

TEST(DynamicQuantizeMatMul, EveryParameterCombination) {
  for (DataType bt : {DataType::kInt8, DataType::kUint8})
    for (int flags = 0; flags < 8; ++flags) {
      Case c;
      c.a_shape = {2, 3, 21};
      c.N = 40;
      c.b_type = bt;
      c.per_column = (flags & 1) != 0;
      c.zero_point = (flags & 2) != 0;
      c.bias = (flags & 4) != 0;
      SCOPED_TRACE(std::string(bt == DataType::kInt8 ? "int8" : "uint8") + " flags " + std::to_string(flags));
      expect_matches_reference(c, static_cast<uint32_t>(flags + 1));
    }
}

TEST(DynamicQuantizeMatMul, RuntimeBAndThreads) {
  Case c;
  c.a_shape = {100, 77};
  c.N = 300;
  c.per_column = true;
  c.zero_point = true;
  c.bias = true;
  c.b_type = DataType::kUint8;
  for (bool constant : {true, false})
    for (int threads : {1, 2, 3}) {
      c.b_constant = constant;
      c.threads = threads;
      SCOPED_TRACE(std::string(constant ? "constant" : "runtime") + " B, threads " + std::to_string(threads));
      expect_matches_reference(c, 99);
    }
}

TEST(DynamicQuantizeMatMul, OneSidedAndZeroRanges) {
  // All positive (zero point 0), all negative (zero point 255), all zero
  // (scale 1) and a 1-D A.
  Case c;
  c.a_shape = {5, 16};
  c.N = 17;
  c.bias = true;
  for (auto [lo, hi] : {std::pair{0.25f, 3.0f}, std::pair{-4.0f, -0.5f}, std::pair{0.0f, 0.0f}}) {
    c.a_lo = lo;
    c.a_hi = hi;
    SCOPED_TRACE(std::to_string(lo) + ".." + std::to_string(hi));
    expect_matches_reference(c, 5);
  }
  c.a_shape = {16};
  expect_matches_reference(c, 6);
}

TEST(DynamicQuantizeMatMul, BadInputsNameTheNodeAndInput) {
  Case c;
  c.a_shape = {4, 8};
  c.N = 6;
  const Operands o = make_operands(c, 3);
  // A's K does not match B's.
  {
    NodeTest t("DynamicQuantizeMatMul", 1, "com.switchyard");
    t.dynamic_shapes();
    t.input(make_tensor<float>({4, 7}, std::vector<float>(28, 1.0f)));
    t.constant_input(int_tensor(DataType::kInt8, {8, 6}, o.b));
    t.constant_input(make_tensor<float>({}, {0.5f}));
    auto out = t.run();
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("DynamicQuantizeMatMul"), std::string::npos) << out.status().to_string();
    EXPECT_NE(out.status().message().find("input 0 (A)"), std::string::npos) << out.status().to_string();
  }
  // A bias of the wrong length.
  {
    NodeTest t("DynamicQuantizeMatMul", 1, "com.switchyard");
    t.dynamic_shapes();
    t.input(make_tensor<float>({4, 8}, o.a));
    t.constant_input(int_tensor(DataType::kInt8, {8, 6}, o.b));
    t.constant_input(make_tensor<float>({}, {0.5f}));
    t.missing_input();
    t.input(make_tensor<float>({5}, std::vector<float>(5, 1.0f)));
    auto out = t.run();
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("input 4 (bias)"), std::string::npos) << out.status().to_string();
  }
  // A zero point of another type than B: inference refuses it at load.
  {
    NodeTest t("DynamicQuantizeMatMul", 1, "com.switchyard");
    t.input(make_tensor<float>({4, 8}, o.a));
    t.constant_input(int_tensor(DataType::kInt8, {8, 6}, o.b));
    t.constant_input(make_tensor<float>({}, {0.5f}));
    t.constant_input(make_tensor<uint8_t>({}, {3}));
    auto out = t.run();
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("input 3 (B_zero_point)"), std::string::npos) << out.status().to_string();
  }
}

TEST(DynamicQuantizeMatMul, InfersTheOutputShape) {
  Case c;
  c.a_shape = {2, 3, 8};
  c.N = 5;
  const Operands o = make_operands(c, 4);
  NodeTest t = make_node(c, o);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const Node& node = t.graph().nodes.front();
  const ValueType& y = t.graph().values[static_cast<size_t>(node.outputs[0])].type;
  EXPECT_EQ(y.dtype, DataType::kFloat);
  ASSERT_TRUE(y.is_static());
  EXPECT_EQ(y.static_shape(), (Shape{2, 3, 5}));
}

}  // namespace
}  // namespace sy
