// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear against
// hand-computed values: rounding half to even, saturation, per-axis and
// blocked scales, packed 4- and 2-bit outputs, float8 with and without
// saturation, and the errors bad scales and zero points get.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// A tensor of a packed or minifloat type from its raw bytes.
Tensor raw_tensor(DataType dtype, const Shape& shape, const std::vector<uint8_t>& bytes) {
  Tensor t = Tensor::allocate(dtype, shape).value();
  EXPECT_EQ(t.byte_size(), bytes.size()) << "raw_tensor: wrong byte count";
  std::memcpy(t.raw_data(), bytes.data(), std::min(bytes.size(), t.byte_size()));
  return t;
}

std::vector<uint8_t> bytes_of(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  return std::vector<uint8_t>(p, p + t.byte_size());
}

// One output of a node run, or the error.
Result<Tensor> run1(NodeTest& t) {
  SY_ASSIGN_OR_RETURN(auto out, t.run());
  return out[0];
}

void expect_error(NodeTest& t, const std::vector<std::string>& parts) {
  auto out = t.run();
  ASSERT_FALSE(out.ok()) << "expected an error";
  const std::string message = out.status().to_string();
  for (const std::string& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
}

TEST(QuantizeLinear, RoundsHalfToEvenAndSaturates) {
  NodeTest t("QuantizeLinear", 21);
  t.input(make_tensor<float>({11}, {0.5f, 1.5f, 2.5f, 3.5f, -0.5f, -1.5f, -2.5f, 2.4f, 300.0f, -300.0f, kNaN}))
      .input(make_tensor<float>({}, {1.0f}))
      .input(make_tensor<int8_t>({}, {0}));
  auto y = run1(t);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_tensor_eq(*y, make_tensor<int8_t>({11}, {0, 2, 2, 4, 0, -2, -2, 2, 127, -128, -128}));
}

TEST(QuantizeLinear, ZeroPointAddsAfterRoundingAndUint8IsTheDefault) {
  // x / 2 = 1.25, 2.5, -2.5, 1000: rounded 1, 2, -2, 1000; + 128, saturated.
  NodeTest with_zp("QuantizeLinear", 13);
  with_zp.input(make_tensor<float>({4}, {2.5f, 5.0f, -5.0f, 2000.0f}))
      .input(make_tensor<float>({}, {2.0f}))
      .input(make_tensor<uint8_t>({}, {128}));
  auto y = run1(with_zp);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_tensor_eq(*y, make_tensor<uint8_t>({4}, {129, 130, 126, 255}));
  // No zero point: uint8 with zero point 0, so negatives saturate to 0.
  NodeTest no_zp("QuantizeLinear", 10);
  no_zp.input(make_tensor<float>({3}, {-7.0f, 7.0f, 511.0f})).input(make_tensor<float>({}, {2.0f}));
  y = run1(no_zp);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_tensor_eq(*y, make_tensor<uint8_t>({3}, {0, 4, 255}));
}

// The vector loops (per tensor, runs of 16 and more) against values worked
// out here, over lengths that leave every tail, on several threads.
TEST(QuantizeLinear, VectorPathMatchesTheFormulaForEveryTail) {
  for (int64_t n : {1, 15, 16, 17, 33, 100000}) {
    std::vector<float> x(static_cast<size_t>(n));
    std::vector<uint8_t> expected_u8(x.size());
    std::vector<int8_t> expected_s8(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      // Multiples of 0.25 from -200 up: scale 0.5 makes every other one a tie.
      x[i] = -200.0f + 0.25f * static_cast<float>(i % 1700);
      const double q = std::nearbyint(x[i] / 0.5);
      expected_u8[i] = static_cast<uint8_t>(std::clamp(q + 10, 0.0, 255.0));
      expected_s8[i] = static_cast<int8_t>(std::clamp(q - 3, -128.0, 127.0));
    }
    NodeTest u8("QuantizeLinear", 21);
    u8.input(make_tensor<float>({n}, x))
        .input(make_tensor<float>({}, {0.5f}))
        .input(make_tensor<uint8_t>({}, {10}))
        .threads(4);
    auto y = run1(u8);
    ASSERT_TRUE(y.ok()) << y.status().to_string();
    expect_tensor_eq(*y, make_tensor<uint8_t>({n}, expected_u8));
    NodeTest s8("QuantizeLinear", 21);
    s8.input(make_tensor<float>({n}, x)).input(make_tensor<float>({}, {0.5f})).input(make_tensor<int8_t>({}, {-3}));
    y = run1(s8);
    ASSERT_TRUE(y.ok()) << y.status().to_string();
    expect_tensor_eq(*y, make_tensor<int8_t>({n}, expected_s8));
  }
}

TEST(QuantizeLinear, PerAxis) {
  // x [2, 3, 2], axis 1: scales 1, 2, 4 and zero points 0, 1, 2.
  NodeTest t("QuantizeLinear", 13);
  t.input(make_tensor<float>({2, 3, 2}, {1, 2, 3, 5, 8, 10, -1, 4, 6, -6, 100, 2}))
      .input(make_tensor<float>({3}, {1.0f, 2.0f, 4.0f}))
      .input(make_tensor<uint8_t>({3}, {0, 1, 2}))
      .attr("axis", 1);
  auto y = run1(t);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  // 3/2 = 1.5 -> 2, 5/2 = 2.5 -> 2, 10/4 = 2.5 -> 2, -6/2 = -3 -> -3 + 1 = -2 -> 0.
  expect_tensor_eq(*y, make_tensor<uint8_t>({2, 3, 2}, {1, 2, 3, 3, 4, 4, 0, 4, 4, 0, 27, 2}));
  // A negative axis counts from the back; the last axis has runs of one.
  NodeTest last("QuantizeLinear", 13);
  last.input(make_tensor<float>({2, 2}, {3, 3, -3, -3}))
      .input(make_tensor<float>({2}, {2.0f, 1.0f}))
      .input(make_tensor<int8_t>({2}, {0, 0}))
      .attr("axis", -1);
  auto z = run1(last);
  ASSERT_TRUE(z.ok()) << z.status().to_string();
  expect_tensor_eq(*z, make_tensor<int8_t>({2, 2}, {2, 3, -2, -3}));
}

TEST(QuantizeLinear, BlockedWithALastShortBlock) {
  // x [2, 5], axis 1, block 2: scale [2, 3], the last block of one element.
  NodeTest t("QuantizeLinear", 21);
  t.input(make_tensor<float>({2, 5}, {2, 4, 6, 8, 10, 1, 2, 3, 4, 5}))
      .input(make_tensor<float>({2, 3}, {2, 4, 10, 1, 2, 0.5f}))
      .input(make_tensor<int8_t>({2, 3}, {0, 1, -1, 0, 0, 0}))
      .attr("axis", 1)
      .attr("block_size", 2);
  auto y = run1(t);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  // Row 0: 2/2, 4/2, 6/4 = 1.5 -> 2 + 1, 8/4 + 1, 10/10 - 1. Row 1: 1, 2, 1.5 -> 2, 2, 10.
  expect_tensor_eq(*y, make_tensor<int8_t>({2, 5}, {1, 2, 3, 3, 0, 1, 2, 2, 2, 10}));
}

TEST(QuantizeLinear, Int4PacksLowNibbleFirstWithAnOddCount) {
  NodeTest t("QuantizeLinear", 21);
  t.input(make_tensor<float>({5}, {1, -1, 9, -9, 7}))
      .input(make_tensor<float>({}, {1.0f}))
      .input(raw_tensor(DataType::kInt4, {}, {0x00}));
  auto y = run1(t);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  ASSERT_EQ(y->dtype(), DataType::kInt4);
  // 1, -1 (0xF), 7 (9 saturated), -8 (0x8), 7; the last byte's high nibble stays 0.
  EXPECT_EQ(bytes_of(*y), (std::vector<uint8_t>{0xF1, 0x87, 0x07}));
  // uint4 through output_dtype, zero point 3.
  NodeTest u("QuantizeLinear", 21);
  u.input(make_tensor<float>({3}, {0, 13, -4}))
      .input(make_tensor<float>({}, {1.0f}))
      .attr("output_dtype", static_cast<int64_t>(DataType::kUint4));
  auto z = run1(u);
  ASSERT_TRUE(z.ok()) << z.status().to_string();
  ASSERT_EQ(z->dtype(), DataType::kUint4);
  EXPECT_EQ(bytes_of(*z), (std::vector<uint8_t>{0xD0, 0x00}));
}

TEST(QuantizeLinear, Int2PacksFourToAByte) {
  NodeTest t("QuantizeLinear", 25);
  t.input(make_tensor<float>({5}, {1, -1, 5, -5, -2}))
      .input(make_tensor<float>({}, {1.0f}))
      .input(raw_tensor(DataType::kInt2, {}, {0x00}));
  auto y = run1(t);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  // 1 (01), -1 (11), 1 (01, saturated), -2 (10); then -2 (10).
  EXPECT_EQ(bytes_of(*y), (std::vector<uint8_t>{0b10011101, 0b10}));
}

TEST(QuantizeLinear, Float8SaturatesOrOverflows) {
  const std::vector<float> x = {1.0f, 1000.0f, -1000.0f, 0.0f};
  for (int saturate : {1, 0}) {
    NodeTest t("QuantizeLinear", 21);
    t.input(make_tensor<float>({4}, x))
        .input(make_tensor<float>({}, {1.0f}))
        .input(raw_tensor(DataType::kFloat8E4M3FN, {}, {0x00}))
        .attr("saturate", saturate);
    auto y = run1(t);
    ASSERT_TRUE(y.ok()) << y.status().to_string();
    // 1.0 is 0x38; 448 (0x7E) is e4m3fn's largest; without saturation NaN (0x7F).
    const std::vector<uint8_t> expected = saturate ? std::vector<uint8_t>{0x38, 0x7E, 0xFE, 0x00}
                                                   : std::vector<uint8_t>{0x38, 0x7F, 0xFF, 0x00};
    EXPECT_EQ(bytes_of(*y), expected) << "saturate " << saturate;
    NodeTest e5("QuantizeLinear", 21);
    e5.input(make_tensor<float>({2}, {100000.0f, 3.0f}))
        .input(make_tensor<float>({}, {1.0f}))
        .input(raw_tensor(DataType::kFloat8E5M2, {}, {0x00}))
        .attr("saturate", saturate);
    auto z = run1(e5);
    ASSERT_TRUE(z.ok()) << z.status().to_string();
    // 57344 (0x7B) is e5m2's largest; without saturation +inf (0x7C). 3.0 is 0x42.
    EXPECT_EQ(bytes_of(*z), (std::vector<uint8_t>{static_cast<uint8_t>(saturate ? 0x7B : 0x7C), 0x42}));
  }
}

TEST(QuantizeLinear, Float16ScaleDividesInFloat16) {
  // 1 / 3 in float16 is 0.33325195; 1000 / 3 in float16 is 333.25 -> 333.
  Tensor x = Tensor::allocate(DataType::kFloat16, Shape{2}).value();
  x.data<uint16_t>()[0] = 0x3C00;  // 1
  x.data<uint16_t>()[1] = 0x63D0;  // 1000
  Tensor s = Tensor::allocate(DataType::kFloat16, Shape{}).value();
  s.data<uint16_t>()[0] = 0x4200;  // 3
  NodeTest t("QuantizeLinear", 21);
  t.input(std::move(x)).input(std::move(s)).input(make_tensor<int16_t>({}, {0}));
  auto y = run1(t);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_tensor_eq(*y, make_tensor<int16_t>({2}, {0, 333}));
}

TEST(DequantizeLinear, PerTensorAndVectorPath) {
  for (int64_t n : {5, 16, 37, 70000}) {
    std::vector<int8_t> x(static_cast<size_t>(n));
    std::vector<uint8_t> xu(x.size());
    std::vector<float> expected_s8(x.size()), expected_u8(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<int8_t>(static_cast<int>(i * 7 % 256) - 128);
      xu[i] = static_cast<uint8_t>(i * 13 % 256);
      expected_s8[i] = static_cast<float>(x[i] - 5) * 0.25f;
      expected_u8[i] = static_cast<float>(xu[i] - 200) * 0.125f;
    }
    NodeTest s8("DequantizeLinear", 21);
    s8.input(make_tensor<int8_t>({n}, x))
        .input(make_tensor<float>({}, {0.25f}))
        .input(make_tensor<int8_t>({}, {5}))
        .threads(3);
    auto y = run1(s8);
    ASSERT_TRUE(y.ok()) << y.status().to_string();
    expect_tensor_eq(*y, make_tensor<float>({n}, expected_s8));
    NodeTest u8("DequantizeLinear", 10);
    u8.input(make_tensor<uint8_t>({n}, xu)).input(make_tensor<float>({}, {0.125f})).input(make_tensor<uint8_t>({}, {200}));
    y = run1(u8);
    ASSERT_TRUE(y.ok()) << y.status().to_string();
    expect_tensor_eq(*y, make_tensor<float>({n}, expected_u8));
  }
}

TEST(DequantizeLinear, PerAxisBlockedAndInt32) {
  NodeTest axis("DequantizeLinear", 13);
  axis.input(make_tensor<uint8_t>({2, 2}, {10, 20, 30, 40}))
      .input(make_tensor<float>({2}, {0.5f, 2.0f}))
      .input(make_tensor<uint8_t>({2}, {10, 0}))
      .attr("axis", 0);
  auto y = run1(axis);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_tensor_eq(*y, make_tensor<float>({2, 2}, {0.0f, 5.0f, 60.0f, 80.0f}));
  NodeTest blocked("DequantizeLinear", 21);
  blocked.input(make_tensor<int16_t>({3, 2}, {1, 2, 3, 4, -5, 6}))
      .input(make_tensor<float>({2, 2}, {1.0f, 10.0f, 100.0f, 1000.0f}))
      .attr("axis", 0)
      .attr("block_size", 2);
  y = run1(blocked);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_tensor_eq(*y, make_tensor<float>({3, 2}, {1.0f, 20.0f, 3.0f, 40.0f, -500.0f, 6000.0f}));
  NodeTest i32("DequantizeLinear", 13);
  i32.input(make_tensor<int32_t>({2}, {-100000, 7})).input(make_tensor<float>({}, {0.5f}));
  y = run1(i32);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_tensor_eq(*y, make_tensor<float>({2}, {-50000.0f, 3.5f}));
}

TEST(DequantizeLinear, PackedAndFloat8Inputs) {
  // int4 0xF1, 0x08: 1, -1, -8 (odd count); zero point -1.
  NodeTest i4("DequantizeLinear", 21);
  i4.input(raw_tensor(DataType::kInt4, {3}, {0xF1, 0x08}))
      .input(make_tensor<float>({}, {2.0f}))
      .input(raw_tensor(DataType::kInt4, {}, {0x0F}));
  auto y = run1(i4);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_tensor_eq(*y, make_tensor<float>({3}, {4.0f, 0.0f, -14.0f}));
  NodeTest u2("DequantizeLinear", 25);
  u2.input(raw_tensor(DataType::kUint2, {5}, {0b11100100, 0b10})).input(make_tensor<float>({}, {1.5f}));
  y = run1(u2);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_tensor_eq(*y, make_tensor<float>({5}, {0.0f, 1.5f, 3.0f, 4.5f, 3.0f}));
  // e4m3fn 0x38 = 1, 0x7E = 448, 0x7F = NaN.
  NodeTest f8("DequantizeLinear", 21);
  f8.input(raw_tensor(DataType::kFloat8E4M3FN, {3}, {0x38, 0x7E, 0x7F})).input(make_tensor<float>({}, {0.5f}));
  y = run1(f8);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  expect_tensor_near(*y, make_tensor<float>({3}, {0.5f, 224.0f, kNaN}));
}

TEST(DequantizeLinear, Float16AndBfloat16Outputs) {
  Tensor s = Tensor::allocate(DataType::kFloat16, Shape{}).value();
  s.data<uint16_t>()[0] = 0x3800;  // 0.5
  NodeTest half("DequantizeLinear", 21);
  half.input(make_tensor<uint8_t>({2}, {3, 0})).input(std::move(s)).input(make_tensor<uint8_t>({}, {1}));
  auto y = run1(half);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  ASSERT_EQ(y->dtype(), DataType::kFloat16);
  EXPECT_EQ(y->data<uint16_t>()[0], 0x3C00);  // 1
  EXPECT_EQ(y->data<uint16_t>()[1], 0xB800);  // -0.5
  NodeTest bf("DequantizeLinear", 23);
  bf.input(make_tensor<int8_t>({1}, {-3}))
      .input(make_tensor<float>({}, {2.0f}))
      .attr("output_dtype", static_cast<int64_t>(DataType::kBfloat16));
  y = run1(bf);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  ASSERT_EQ(y->dtype(), DataType::kBfloat16);
  EXPECT_EQ(y->data<uint16_t>()[0], 0xC0C0);  // -6
}

TEST(DynamicQuantizeLinear, TheSpecExample) {
  NodeTest t("DynamicQuantizeLinear", 11);
  t.input(make_tensor<float>({6}, {0.0f, 2.0f, -3.0f, -2.5f, 1.34f, 0.5f})).outputs(3);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // scale (2 - -3) / 255, zero point 3 / scale = 153.
  expect_tensor_eq(out->at(0), make_tensor<uint8_t>({6}, {153, 255, 0, 26, 221, 179}));
  expect_tensor_eq(out->at(1), make_tensor<float>({}, {5.0f / 255.0f}));
  expect_tensor_eq(out->at(2), make_tensor<uint8_t>({}, {153}));
}

TEST(DynamicQuantizeLinear, RangeHoldsZeroAndAllZerosGetScaleOne) {
  NodeTest pos("DynamicQuantizeLinear", 11);
  pos.input(make_tensor<float>({3}, {1.0f, 2.55f, kNaN})).outputs(3);
  auto out = pos.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(1), make_tensor<float>({}, {2.55f / 255.0f}));
  expect_tensor_eq(out->at(2), make_tensor<uint8_t>({}, {0}));
  expect_tensor_eq(out->at(0), make_tensor<uint8_t>({3}, {100, 255, 0}));
  NodeTest zeros("DynamicQuantizeLinear", 11);
  zeros.input(make_tensor<float>({2}, {0.0f, 0.0f})).outputs(3);
  out = zeros.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<uint8_t>({2}, {0, 0}));
  expect_tensor_eq(out->at(1), make_tensor<float>({}, {1.0f}));
}

TEST(DynamicQuantizeLinear, LargeInputOnSeveralThreads) {
  const int64_t n = 200003;
  std::vector<float> x(static_cast<size_t>(n));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int64_t>(i * 37 % 1001) - 400) / 8.0f;
  x[123457] = -80.0f;  // the minimum, far from the first task
  NodeTest t("DynamicQuantizeLinear", 11);
  t.input(make_tensor<float>({n}, x)).outputs(3).threads(4);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const float scale = (75.0f + 80.0f) / 255.0f;
  EXPECT_EQ(out->at(1).data<float>()[0], scale);
  const auto zp = static_cast<int>(std::nearbyint(80.0f / scale));
  EXPECT_EQ(out->at(2).data<uint8_t>()[0], zp);
  const uint8_t* y = out->at(0).data<uint8_t>();
  for (size_t i = 0; i < x.size(); i += 997) {
    EXPECT_EQ(y[i], std::clamp(static_cast<int>(std::nearbyint(x[i] / scale)) + zp, 0, 255)) << i;
  }
}

// ---- bad input: an error naming the node and the input, never a crash ----

TEST(QuantizeLinear, ZeroScaleIsAnError) {
  NodeTest t("QuantizeLinear", 21);
  t.input(make_tensor<float>({2}, {1, 2})).input(make_tensor<float>({2}, {1.0f, 0.0f})).attr("axis", 0);
  expect_error(t, {"test_node", "QuantizeLinear", "y_scale", "is 0 at element 1"});
}

TEST(QuantizeLinear, ScaleOfTheWrongShapeIsAnError) {
  NodeTest per_axis("QuantizeLinear", 13);
  per_axis.input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
      .input(make_tensor<float>({2}, {1, 1}))
      .attr("axis", 1);
  expect_error(per_axis, {"test_node", "input 1", "y_scale", "per-axis"});
  // The same found at run time, where the shapes are not known before.
  NodeTest dynamic("QuantizeLinear", 13);
  dynamic.input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
      .input(make_tensor<float>({2}, {1, 1}))
      .attr("axis", 1)
      .dynamic_shapes();
  expect_error(dynamic, {"test_node", "input 1", "y_scale", "per-axis"});
  // Blocked: 5 elements in blocks of 2 need 3 scales, not 2.
  NodeTest blocked("QuantizeLinear", 21);
  blocked.input(make_tensor<float>({1, 5}, {1, 2, 3, 4, 5}))
      .input(make_tensor<float>({1, 2}, {1, 1}))
      .attr("axis", 1)
      .attr("block_size", 2)
      .dynamic_shapes();
  expect_error(blocked, {"test_node", "y_scale", "block_size 2", "ceil(5 / 2) = 3"});
  // A zero point whose shape is not the scale's.
  NodeTest zp("DequantizeLinear", 13);
  zp.input(make_tensor<uint8_t>({2, 2}, {1, 2, 3, 4}))
      .input(make_tensor<float>({2}, {1, 1}))
      .input(make_tensor<uint8_t>({1}, {0}))
      .dynamic_shapes();
  expect_error(zp, {"test_node", "x_zero_point", "shape of input 1"});
}

TEST(QuantizeLinear, AxisOutOfRangeAndNegativeBlockSizeAreErrors) {
  NodeTest axis("QuantizeLinear", 13);
  axis.input(make_tensor<float>({2, 2}, {1, 2, 3, 4})).input(make_tensor<float>({2}, {1, 1})).attr("axis", 2);
  expect_error(axis, {"test_node", "axis 2 is out of range"});
  NodeTest block("DequantizeLinear", 21);
  block.input(make_tensor<int8_t>({2}, {1, 2})).input(make_tensor<float>({1}, {1})).attr("block_size", -2);
  expect_error(block, {"test_node", "block_size is -2"});
}

TEST(QuantizeLinear, ZeroPointTypeMustBeTheOutputType) {
  NodeTest t("QuantizeLinear", 21);
  t.input(make_tensor<float>({1}, {1}))
      .input(make_tensor<float>({}, {1}))
      .input(make_tensor<int8_t>({}, {0}))
      .attr("output_dtype", static_cast<int64_t>(DataType::kUint8));
  expect_error(t, {"test_node", "y_zero_point", "int8", "output_dtype"});
  // DequantizeLinear: the zero point's type is x's.
  NodeTest dq("DequantizeLinear", 21);
  dq.input(make_tensor<int8_t>({1}, {1})).input(make_tensor<float>({}, {1})).input(make_tensor<uint8_t>({}, {0}));
  expect_error(dq, {"test_node", "input 2"});
}

}  // namespace
}  // namespace sy::testing
