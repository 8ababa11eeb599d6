// Cast and CastLike against hand-computed values and bit patterns.
#include <bit>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy::testing {
namespace {

Result<Tensor> cast(Tensor x, DataType to, int opset = 21, int saturate = -1, int threads = 1) {
  NodeTest t("Cast", opset);
  t.input(std::move(x)).attr("to", static_cast<int64_t>(to)).threads(threads);
  if (saturate >= 0) t.attr("saturate", static_cast<int64_t>(saturate));
  SY_ASSIGN_OR_RETURN(auto out, t.run());
  return out[0];
}

Tensor u16_tensor(DataType dtype, const std::vector<uint16_t>& bits) {
  Tensor t = Tensor::allocate(dtype, Shape{static_cast<int64_t>(bits.size())}).value();
  std::memcpy(t.raw_data(), bits.data(), bits.size() * 2);
  return t;
}

std::vector<uint8_t> bytes_of(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  return std::vector<uint8_t>(p, p + t.byte_size());
}

Tensor strings(const std::vector<std::string>& v) {
  Tensor t = Tensor::allocate(DataType::kString, Shape{static_cast<int64_t>(v.size())}).value();
  for (size_t i = 0; i < v.size(); ++i) t.data<std::string>()[i] = v[i];
  return t;
}

TEST(Cast, FloatToIntegersTruncatesAndIntegersWrap) {
  auto i32 = cast(make_tensor<float>({4}, {2.7f, -2.7f, 0.0f, 100.5f}), DataType::kInt32);
  ASSERT_TRUE(i32.ok()) << i32.status().to_string();
  expect_tensor_eq(*i32, make_tensor<int32_t>({4}, {2, -2, 0, 100}));
  auto i8 = cast(make_tensor<int16_t>({3}, {200, -129, 5}), DataType::kInt8);
  ASSERT_TRUE(i8.ok());
  expect_tensor_eq(*i8, make_tensor<int8_t>({3}, {-56, 127, 5}));
  auto u8 = cast(make_tensor<int32_t>({2}, {-1, 256}), DataType::kUint8);
  ASSERT_TRUE(u8.ok());
  expect_tensor_eq(*u8, make_tensor<uint8_t>({2}, {255, 0}));
  auto d = cast(make_tensor<int64_t>({2}, {-3, int64_t{1} << 40}), DataType::kDouble);
  ASSERT_TRUE(d.ok());
  expect_tensor_eq(*d, make_tensor<double>({2}, {-3.0, 1099511627776.0}));
}

TEST(Cast, BoolConversions) {
  auto to_bool = cast(make_tensor<float>({4}, {0.0f, -0.0f, 0.1f, std::numeric_limits<float>::quiet_NaN()}),
                      DataType::kBool);
  ASSERT_TRUE(to_bool.ok());
  expect_tensor_eq(*to_bool, make_bool_tensor({4}, {0, 0, 1, 1}));
  auto from_bool = cast(make_bool_tensor({2}, {1, 0}), DataType::kFloat);
  ASSERT_TRUE(from_bool.ok());
  expect_tensor_eq(*from_bool, make_tensor<float>({2}, {1.0f, 0.0f}));
  auto int_to_bool = cast(make_tensor<int64_t>({3}, {36, 0, -1}), DataType::kBool);
  ASSERT_TRUE(int_to_bool.ok());
  expect_tensor_eq(*int_to_bool, make_bool_tensor({3}, {1, 0, 1}));
}

TEST(Cast, FloatToFloat16RoundsToNearestEvenBitExact) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {
      1.0f,
      65504.0f,                 // largest half
      65520.0f,                 // halfway to 65536: rounds (to even) to inf
      1.0f + 0x1p-11f,          // halfway between 1 and 1 + 2^-10: even, 1
      1.0f + 3 * 0x1p-11f,      // halfway between 1 + 2^-10 and 1 + 2^-9: even, up
      0x1p-24f,                 // smallest subnormal half
      0x1p-25f,                 // halfway to it: rounds to even, 0
      -2.0f,
      inf,
      0.333333343f,             // 0x3555 is the nearest half
  };
  auto out = cast(make_tensor<float>({static_cast<int64_t>(x.size())}, x), DataType::kFloat16);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const std::vector<uint16_t> expected = {0x3C00, 0x7BFF, 0x7C00, 0x3C00, 0x3C02, 0x0001, 0x0000, 0xC000, 0x7C00, 0x3555};
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(out->data<uint16_t>()[i], expected[i]) << "element " << i;
}

TEST(Cast, EveryFloat16RoundTripsThroughFloatAndDouble) {
  std::vector<uint16_t> all;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint32_t exp = (b >> 10) & 0x1F;
    if (exp == 0x1F && (b & 0x3FF) != 0) continue;  // NaN payloads need not survive
    all.push_back(static_cast<uint16_t>(b));
  }
  for (DataType mid : {DataType::kFloat, DataType::kDouble}) {
    auto wide = cast(u16_tensor(DataType::kFloat16, all), mid, 21, -1, 2);
    ASSERT_TRUE(wide.ok()) << wide.status().to_string();
    auto back = cast(*wide, DataType::kFloat16, 21, -1, 2);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(std::memcmp(back->raw_data(), all.data(), all.size() * 2), 0) << data_type_name(mid);
  }
  // A few decoded values by hand.
  auto f = cast(u16_tensor(DataType::kFloat16, {0x3555, 0x0001, 0xFBFF}), DataType::kFloat);
  ASSERT_TRUE(f.ok());
  expect_tensor_eq(*f, make_tensor<float>({3}, {0.333251953125f, 0x1p-24f, -65504.0f}));
}

TEST(Cast, BFloat16) {
  // 1 + 2^-8 is halfway between bfloat16 1.0 (0x3F80) and 1 + 2^-7 (0x3F81):
  // even wins, 0x3F80; 1 + 3 * 2^-8 rounds up to 0x3F82.
  auto out = cast(make_tensor<float>({3}, {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -3.0f}), DataType::kBfloat16, 13);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->data<uint16_t>()[0], 0x3F80);
  EXPECT_EQ(out->data<uint16_t>()[1], 0x3F82);
  EXPECT_EQ(out->data<uint16_t>()[2], 0xC040);
  auto back = cast(*out, DataType::kFloat, 13);
  ASSERT_TRUE(back.ok());
  expect_tensor_eq(*back, make_tensor<float>({3}, {1.0f, 1.0f + 0x1p-6f, -3.0f}));
}

TEST(Cast, StringsToNumbers) {
  auto f = cast(strings({"3.14", "1e-5", "1E8", "+INF", "-inf", "NaN", "-0.5"}), DataType::kFloat);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  const float* v = f->data<float>();
  EXPECT_FLOAT_EQ(v[0], 3.14f);
  EXPECT_FLOAT_EQ(v[1], 1e-5f);
  EXPECT_FLOAT_EQ(v[2], 1e8f);
  EXPECT_EQ(v[3], std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[4], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(v[5]));
  EXPECT_EQ(v[6], -0.5f);
  auto i = cast(strings({"123456789012345678", "-42", "+7", "100.5"}), DataType::kInt64);
  ASSERT_TRUE(i.ok());
  expect_tensor_eq(*i, make_tensor<int64_t>({4}, {123456789012345678, -42, 7, 100}));
  auto h = cast(strings({"0.5", "inf"}), DataType::kFloat16);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->data<uint16_t>()[0], 0x3800);
  EXPECT_EQ(h->data<uint16_t>()[1], 0x7C00);
}

TEST(Cast, NumbersToStrings) {
  auto f = cast(make_tensor<float>({5}, {0.1f, -2.5f, 1e-5f, std::numeric_limits<float>::infinity(),
                                         std::numeric_limits<float>::quiet_NaN()}),
                DataType::kString);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  const std::string* s = f->data<std::string>();
  EXPECT_EQ(s[0], "0.1");
  EXPECT_EQ(s[1], "-2.5");
  EXPECT_EQ(s[2], "1e-05");
  EXPECT_EQ(s[3], "INF");
  EXPECT_EQ(s[4], "NaN");
  auto i = cast(make_tensor<int64_t>({2}, {-123456789012345678, 0}), DataType::kString);
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i->data<std::string>()[0], "-123456789012345678");
  EXPECT_EQ(i->data<std::string>()[1], "0");
  // Round trip through text keeps every float.
  const std::vector<float> x = {0.1f, 3.4028235e38f, 1.17549435e-38f, 123456.789f, -7.0f};
  auto text = cast(make_tensor<float>({5}, x), DataType::kString);
  ASSERT_TRUE(text.ok());
  auto back = cast(*text, DataType::kFloat);
  ASSERT_TRUE(back.ok());
  expect_tensor_eq(*back, make_tensor<float>({5}, x));
  auto b = cast(make_bool_tensor({2}, {1, 0}), DataType::kString);
  ASSERT_TRUE(b.ok());
  auto b2 = cast(*b, DataType::kBool);
  ASSERT_TRUE(b2.ok());
  expect_tensor_eq(*b2, make_bool_tensor({2}, {1, 0}));
}

TEST(Cast, Float8SaturatesOrOverflowsPerSpec) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {0.5f, 448.0f, 500.0f, inf, -inf, -0.0f, 0.0107421875f /* 11 * 2^-10 */, 1.0625f};
  const auto n = static_cast<int64_t>(x.size());
  // e4m3fn: 0.5 = 0 0110 000; max 448 = 0 1111 110; NaN 0 1111 111.
  // 11 * 2^-10 is subnormal: 2^-6 * (m / 8) with m = 5.5 -> 6 (even). 1.0625 is
  // halfway between 1 and 1.125: even mantissa, 1.0.
  auto sat = cast(make_tensor<float>({n}, x), DataType::kFloat8E4M3FN, 19);
  ASSERT_TRUE(sat.ok()) << sat.status().to_string();
  EXPECT_EQ(bytes_of(*sat), (std::vector<uint8_t>{0x30, 0x7E, 0x7E, 0x7E, 0xFE, 0x80, 0x06, 0x38}));
  auto nosat = cast(make_tensor<float>({n}, x), DataType::kFloat8E4M3FN, 19, 0);
  ASSERT_TRUE(nosat.ok());
  EXPECT_EQ(bytes_of(*nosat), (std::vector<uint8_t>{0x30, 0x7E, 0x7F, 0x7F, 0xFF, 0x80, 0x06, 0x38}));
  // e5m2: inf exists; max 57344 = 0 11110 11.
  auto e5 = cast(make_tensor<float>({4}, {57344.0f, 1e6f, inf, 1.0f}), DataType::kFloat8E5M2, 19, 0);
  ASSERT_TRUE(e5.ok());
  EXPECT_EQ(bytes_of(*e5), (std::vector<uint8_t>{0x7B, 0x7C, 0x7C, 0x3C}));
  // fnuz: no -0 and NaN is 0x80; e4m3fnuz has bias 8, max 240.
  auto uz = cast(make_tensor<float>({4}, {-0.0f, 240.0f, 1.0f, std::numeric_limits<float>::quiet_NaN()}),
                 DataType::kFloat8E4M3FNUZ, 19);
  ASSERT_TRUE(uz.ok());
  EXPECT_EQ(bytes_of(*uz), (std::vector<uint8_t>{0x00, 0x7F, 0x40, 0x80}));
  // And back.
  Tensor codes = Tensor::allocate(DataType::kFloat8E4M3FN, Shape{4}).value();
  const uint8_t raw[] = {0x7E, 0x7F, 0x01, 0xB8};
  std::memcpy(codes.raw_data(), raw, 4);
  auto decoded = cast(codes, DataType::kFloat, 19);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->data<float>()[0], 448.0f);
  EXPECT_TRUE(std::isnan(decoded->data<float>()[1]));
  EXPECT_EQ(decoded->data<float>()[2], 0x1p-9f);
  EXPECT_EQ(decoded->data<float>()[3], -1.0f);
}

TEST(Cast, Int4KeepsLowBitsAndPacksTwoPerByte) {
  std::vector<float> x;
  for (int v = -9; v <= 15; ++v) x.push_back(static_cast<float>(v));
  auto out = cast(make_tensor<float>({5, 5}, x), DataType::kInt4, 21);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // -9 -> 7, -8 -> 8, ..., -1 -> 15, 0 -> 0 ...: low nibble first.
  EXPECT_EQ(bytes_of(*out), (std::vector<uint8_t>{0x87, 0xA9, 0xCB, 0xED, 0x0F, 0x21, 0x43, 0x65, 0x87, 0xA9,
                                                  0xCB, 0xED, 0x0F}));
  auto back = cast(*out, DataType::kInt8, 21);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  std::vector<int8_t> expected;
  for (int v = -9; v <= 15; ++v) expected.push_back(static_cast<int8_t>(((v & 15) ^ 8) - 8));
  expect_tensor_eq(*back, make_tensor<int8_t>({5, 5}, expected));
  auto u = cast(*out, DataType::kUint4, 21);
  ASSERT_TRUE(u.ok());
  auto u8 = cast(*u, DataType::kUint8, 21);
  ASSERT_TRUE(u8.ok());
  EXPECT_EQ(u8->data<uint8_t>()[0], 7);
  EXPECT_EQ(u8->data<uint8_t>()[8], 15);
}

TEST(Cast, Float4E2M1) {
  // Values 0, 0.5, 1, 1.5, 2, 3, 4, 6; ties to even; saturating at 6.
  auto out = cast(make_tensor<float>({6}, {0.25f, 1.25f, -3.5f, 100.0f, 0.75f, -0.0f}), DataType::kFloat4E2M1, 23);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // 0.25 -> 0 (0), 1.25 -> 1 (2), -3.5 -> -4 (0xE), 100 -> 6 (7), 0.75 -> 1 (2), -0 (8).
  EXPECT_EQ(bytes_of(*out), (std::vector<uint8_t>{0x20, 0x7E, 0x82}));
}

TEST(Cast, MultiThreadedFloatToHalfMatchesScalarConversion) {
  std::vector<float> x(300000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.37f - 50000.0f;
  auto out = cast(make_tensor<float>({static_cast<int64_t>(x.size())}, x), DataType::kFloat16, 21, -1, 2);
  ASSERT_TRUE(out.ok());
  for (size_t i = 0; i < x.size(); i += 7) ASSERT_EQ(out->data<uint16_t>()[i], float_to_float16(x[i])) << i;
}

TEST(Cast, InfersOutputTypeAndRejectsBadTo) {
  NodeTest t("Cast", 13);
  t.input(make_tensor<float>({2, 3}, std::vector<float>(6, 1.0f))).attr("to", int64_t{7});
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const ValueType& type = t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type;
  EXPECT_EQ(type.dtype, DataType::kInt64);
  ASSERT_EQ(type.rank(), 2u);
  EXPECT_EQ(type.dims[1].value, 3);
  auto bad = cast(make_tensor<float>({1}, {1}), static_cast<DataType>(99));
  EXPECT_FALSE(bad.ok());
}

TEST(CastLike, TakesTheTypeOfTheSecondInput) {
  auto out = NodeTest("CastLike", 15)
                 .input(make_tensor<double>({3}, {1.5, -2.5, 7.9}))
                 .input(make_tensor<int32_t>({}, {0}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).data<int32_t>()[0], 1);
  EXPECT_EQ(out->at(0).data<int32_t>()[1], -2);
  auto half = NodeTest("CastLike", 19)
                  .input(make_tensor<float>({1}, {2.0f}))
                  .input(u16_tensor(DataType::kFloat16, {0}))
                  .run();
  ASSERT_TRUE(half.ok()) << half.status().to_string();
  EXPECT_EQ(half->at(0).dtype(), DataType::kFloat16);
  EXPECT_EQ(half->at(0).data<uint16_t>()[0], 0x4000);
}

// Out-of-range and NaN floats into integers: what x86's cvtt gives, which is
// what numpy gives on x86. Expected values printed by numpy for
// np.array([...], np.float32 / np.float64).astype(...).
TEST(Cast, OutOfRangeFloatsToIntegersMatchNumpyOnX86) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {300.7f, -1.5f, 1e10f, -1e10f, nan, inf, -inf, 3e9f, 1.8e19f, 1e20f, -129.9f};
  const Shape s{static_cast<int64_t>(x.size())};
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    auto i8 = cast(make_tensor<float>(s, x), DataType::kInt8, 21, -1, threads);
    auto u8 = cast(make_tensor<float>(s, x), DataType::kUint8, 21, -1, threads);
    auto i16 = cast(make_tensor<float>(s, x), DataType::kInt16, 21, -1, threads);
    auto u16 = cast(make_tensor<float>(s, x), DataType::kUint16, 21, -1, threads);
    auto i32 = cast(make_tensor<float>(s, x), DataType::kInt32, 21, -1, threads);
    auto u32 = cast(make_tensor<float>(s, x), DataType::kUint32, 21, -1, threads);
    auto i64 = cast(make_tensor<float>(s, x), DataType::kInt64, 21, -1, threads);
    auto u64 = cast(make_tensor<float>(s, x), DataType::kUint64, 21, -1, threads);
    ASSERT_TRUE(i8.ok() && u8.ok() && i16.ok() && u16.ok() && i32.ok() && u32.ok() && i64.ok() && u64.ok());
    expect_tensor_eq(*i8, make_tensor<int8_t>(s, {44, -1, 0, 0, 0, 0, 0, 0, 0, 0, 127}));
    expect_tensor_eq(*u8, make_tensor<uint8_t>(s, {44, 255, 0, 0, 0, 0, 0, 0, 0, 0, 127}));
    expect_tensor_eq(*i16, make_tensor<int16_t>(s, {300, -1, 0, 0, 0, 0, 0, 0, 0, 0, -129}));
    expect_tensor_eq(*u16, make_tensor<uint16_t>(s, {300, 65535, 0, 0, 0, 0, 0, 0, 0, 0, 65407}));
    const int32_t m32 = INT32_MIN;
    expect_tensor_eq(*i32, make_tensor<int32_t>(s, {300, -1, m32, m32, m32, m32, m32, m32, m32, m32, -129}));
    expect_tensor_eq(*u32, make_tensor<uint32_t>(s, {300, 4294967295u, 0, 2147483648u, 2147483648u, 0, 2147483648u,
                                                     3000000000u, 0, 0, 4294967167u}));
    const int64_t m64 = INT64_MIN;
    expect_tensor_eq(*i64, make_tensor<int64_t>(s, {300, -1, 10000000000, -10000000000, m64, m64, m64, 3000000000,
                                                    m64, m64, -129}));
    expect_tensor_eq(*u64, make_tensor<uint64_t>(s, {300, 18446744073709551615ull, 10000000000,
                                                     18446744063709551616ull, 9223372036854775808ull, 0,
                                                     9223372036854775808ull, 3000000000, 18000000404716257280ull, 0,
                                                     18446744073709551487ull}));
  }
  // The double path gives the same.
  std::vector<double> xd(x.begin(), x.end());
  auto d32 = cast(make_tensor<double>(s, xd), DataType::kUint32);
  ASSERT_TRUE(d32.ok()) << d32.status().to_string();
  expect_tensor_eq(*d32, make_tensor<uint32_t>(s, {300, 4294967295u, 0, 2147483648u, 2147483648u, 0, 2147483648u,
                                                   3000000000u, 0, 0, 4294967167u}));
}

// The Cast spec's string forms give numbers; anything else is an error
// naming the string, where strtod used to give 0 for "abc".
TEST(Cast, StringsThatAreNotNumbersAreAnError) {
  auto ok = cast(strings({"1e-5", "-inf", "NaN", "+INF", "inf", "-NaN", "1E8", ".5", "-2.", "1e400", "TRUE"}),
                 DataType::kDouble);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  const double* v = ok->data<double>();
  EXPECT_EQ(v[0], 1e-5);
  EXPECT_EQ(v[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[3], std::numeric_limits<double>::infinity());
  EXPECT_EQ(v[4], std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(v[5]));
  EXPECT_EQ(v[6], 1e8);
  EXPECT_EQ(v[7], 0.5);
  EXPECT_EQ(v[8], -2.0);
  EXPECT_EQ(v[9], std::numeric_limits<double>::infinity());  // float("1e400") in Python
  EXPECT_EQ(v[10], 1.0);
  for (const char* bad : {"abc", "1.5x", "", " 1", "1 ", "0x10", "infinity", "nan(1)", "--1", "+-1", "1e", "e5"}) {
    SCOPED_TRACE(bad);
    for (DataType to : {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kInt32, DataType::kInt64,
                        DataType::kUint8, DataType::kBool, DataType::kFloat8E4M3FN, DataType::kInt4}) {
      auto out = cast(strings({"1", bad}), to);
      ASSERT_FALSE(out.ok()) << data_type_name(to);
      EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << out.status().to_string();
      EXPECT_NE(out.status().message().find("element 1 is \"" + std::string(bad) + "\""), std::string::npos)
          << out.status().message();
      EXPECT_NE(out.status().message().find("Cast"), std::string::npos) << out.status().message();
    }
  }
  // Strings into integers: integer text exactly, other numbers truncated.
  auto i = cast(strings({"9223372036854775807", "-7", "1e3", "-2.9"}), DataType::kInt64);
  ASSERT_TRUE(i.ok()) << i.status().to_string();
  expect_tensor_eq(*i, make_tensor<int64_t>({4}, {INT64_MAX, -7, 1000, -2}));
}

}  // namespace
}  // namespace sy::testing
