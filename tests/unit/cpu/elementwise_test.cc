// Element-wise kernels against references computed here: std:: math in
// plain loops, broadcasting by explicit index arithmetic, and hand-computed
// values.
#include <bit>
#include <climits>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "providers/cpu/activation_simd.h"
#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

// numpy broadcasting by index arithmetic: the output shape and, for an
// output element, the flat index into an input of shape `in`.
Shape broadcast_ref_shape(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.rank(), b.rank());
  Shape out;
  out.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t da = d + a.rank() >= rank ? a[d + a.rank() - rank] : 1;
    const int64_t db = d + b.rank() >= rank ? b[d + b.rank() - rank] : 1;
    out[d] = da == 1 ? db : da;
  }
  return out;
}

int64_t source_index(const Shape& out, int64_t flat, const Shape& in) {
  int64_t index = 0;
  int64_t stride = 1;
  for (size_t k = 0; k < in.rank(); ++k) {
    const size_t din = in.rank() - 1 - k;
    const size_t dout = out.rank() - 1 - k;
    int64_t out_stride = 1;
    for (size_t j = dout + 1; j < out.rank(); ++j) out_stride *= out[j];
    const int64_t coord = (flat / out_stride) % out[dout];
    if (in[din] != 1) index += coord * stride;
    stride *= in[din];
  }
  return index;
}

template <typename T, typename R>
Tensor broadcast_ref(const Tensor& a, const Tensor& b, DataType out_type, std::function<R(T, T)> op) {
  const Shape out = broadcast_ref_shape(a.shape(), b.shape());
  Tensor t = Tensor::allocate(out_type, out).value();
  for (int64_t i = 0; i < out.num_elements(); ++i)
    t.data<R>()[i] = op(a.data<T>()[source_index(out, i, a.shape())], b.data<T>()[source_index(out, i, b.shape())]);
  return t;
}

std::vector<float> iota_floats(int64_t n, float start = 0.5f, float step = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + step * static_cast<float>(i);
  return v;
}

Result<Tensor> run_binary(const std::string& op, int opset, Tensor a, Tensor b, int threads = 1) {
  SY_ASSIGN_OR_RETURN(auto out, NodeTest(op, opset).input(std::move(a)).input(std::move(b)).threads(threads).run());
  return out[0];
}

// ---- broadcasting ----------------------------------------------------------

struct BroadcastCase {
  Shape a;
  Shape b;
};

TEST(ElementwiseBroadcast, AddMatchesIndexArithmeticForManyShapes) {
  const std::vector<BroadcastCase> cases = {
      {{2, 3}, {2, 3}},          // same shape
      {{2, 3}, {}},              // scalar
      {{}, {2, 3}},              // scalar first
      {{2, 3}, {3}},             // row (bias)
      {{4, 2, 3}, {1, 1, 3}},    // row with leading ones
      {{2, 3}, {2, 1}},          // column
      {{2, 1, 4}, {3, 1}},       // general 3-D, ones in different places
      {{3, 1}, {1, 4}},          // symmetric outer product
      {{1, 3, 1, 5}, {2, 1, 4, 1}},
      {{2, 3, 4, 5}, {3, 1, 5}},
      {{5, 1, 1}, {1}},
      {{1}, {1}},
      {{2, 0, 3}, {3}},          // empty
  };
  for (const auto& c : cases) {
    const Tensor a = make_tensor<float>(c.a, iota_floats(c.a.num_elements(), 0.25f));
    const Tensor b = make_tensor<float>(c.b, iota_floats(c.b.num_elements(), 100.0f, 10.0f));
    auto out = run_binary("Add", 14, a, b);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    SCOPED_TRACE(c.a.to_string() + " + " + c.b.to_string());
    expect_tensor_eq(*out, broadcast_ref<float, float>(a, b, DataType::kFloat, [](float x, float y) { return x + y; }));
  }
}

TEST(ElementwiseBroadcast, SubIsNotSymmetric) {
  const Tensor a = make_tensor<float>({2, 1}, {10, 20});
  const Tensor b = make_tensor<float>({3}, {1, 2, 3});
  auto out = run_binary("Sub", 14, a, b);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(*out, make_tensor<float>({2, 3}, {9, 8, 7, 19, 18, 17}));
  auto rev = run_binary("Sub", 14, b, a);
  ASSERT_TRUE(rev.ok());
  expect_tensor_eq(*rev, make_tensor<float>({2, 3}, {-9, -8, -7, -19, -18, -17}));
}

TEST(ElementwiseBroadcast, MultiThreadedLargeTensorsMatchReference) {
  const std::vector<BroadcastCase> cases = {
      {{64, 3000}, {64, 3000}},
      {{64, 3000}, {3000}},
      {{64, 3000}, {64, 1}},
      {{8, 1, 3000}, {1, 16, 1}},
      {{200000}, {}},
  };
  for (const auto& c : cases) {
    const Tensor a = make_tensor<float>(c.a, random_floats(static_cast<size_t>(c.a.num_elements()), -3, 3, 1));
    const Tensor b = make_tensor<float>(c.b, random_floats(static_cast<size_t>(c.b.num_elements()), -3, 3, 2));
    auto out = run_binary("Mul", 14, a, b, 2);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    SCOPED_TRACE(c.a.to_string() + " * " + c.b.to_string());
    expect_tensor_eq(*out, broadcast_ref<float, float>(a, b, DataType::kFloat, [](float x, float y) { return x * y; }));
  }
}

TEST(ElementwiseBroadcast, IncompatibleShapesNameTheNode) {
  auto out = run_binary("Add", 14, make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                        make_tensor<float>({2}, {1, 2}));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("test_node"), std::string::npos) << out.status().message();
}

TEST(ElementwiseBroadcast, DynamicShapesBroadcastAtRunTime) {
  auto out = NodeTest("Add", 14)
                 .input(make_tensor<float>({2, 1}, {1, 2}))
                 .input(make_tensor<float>({1, 3}, {10, 20, 30}))
                 .dynamic_shapes()
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({2, 3}, {11, 21, 31, 12, 22, 32}));
}

TEST(ElementwiseSchema, InfersBroadcastShapeAndComparisonType) {
  NodeTest t("Less", 13);
  t.input(make_tensor<float>({2, 1, 4}, std::vector<float>(8, 1.0f)))
      .input(make_tensor<float>({3, 1}, std::vector<float>(3, 2.0f)));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const ValueType& type = t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type;
  EXPECT_EQ(type.dtype, DataType::kBool);
  ASSERT_TRUE(type.has_shape);
  ASSERT_EQ(type.rank(), 3u);
  EXPECT_EQ(type.dims[0].value, 2);
  EXPECT_EQ(type.dims[1].value, 3);
  EXPECT_EQ(type.dims[2].value, 4);
}

TEST(ElementwiseSchema, MismatchedInputTypesAreAnError) {
  auto out = run_binary("Add", 14, make_tensor<float>({1}, {1}), make_tensor<int64_t>({1}, {1}));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("int64"), std::string::npos) << out.status().message();
}

// ---- arithmetic on integer types ------------------------------------------------

TEST(ElementwiseArithmetic, IntegerDivisionTruncatesTowardZero) {
  auto out = run_binary("Div", 14, make_tensor<int32_t>({4}, {7, -7, 7, -7}), make_tensor<int32_t>({4}, {2, 2, -2, -2}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(*out, make_tensor<int32_t>({4}, {3, -3, -3, 3}));
}

TEST(ElementwiseArithmetic, IntegerDivisionByZeroDoesNotCrash) {
  auto out = run_binary("Div", 14, make_tensor<int64_t>({2}, {5, std::numeric_limits<int64_t>::min()}),
                        make_tensor<int64_t>({2}, {0, -1}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->data<int64_t>()[0], 0);
}

TEST(ElementwiseArithmetic, SmallIntegersWrap) {
  auto out = run_binary("Add", 14, make_tensor<int8_t>({2}, {120, -120}), make_tensor<int8_t>({2}, {10, -10}));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(*out, make_tensor<int8_t>({2}, {-126, 126}));
  auto u = run_binary("Sub", 14, make_tensor<uint8_t>({1}, {3}), make_tensor<uint8_t>({1}, {5}));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->data<uint8_t>()[0], 254);
}

TEST(ElementwiseArithmetic, AllArithmeticOpsOnInt64AndDouble) {
  const Tensor a = make_tensor<int64_t>({2, 2}, {9, -4, 100, 7});
  const Tensor b = make_tensor<int64_t>({2}, {2, 3});
  auto add = run_binary("Add", 14, a, b);
  auto mul = run_binary("Mul", 14, a, b);
  ASSERT_TRUE(add.ok() && mul.ok());
  expect_tensor_eq(*add, make_tensor<int64_t>({2, 2}, {11, -1, 102, 10}));
  expect_tensor_eq(*mul, make_tensor<int64_t>({2, 2}, {18, -12, 200, 21}));
  auto d = run_binary("Div", 14, make_tensor<double>({2}, {1.0, -3.0}), make_tensor<double>({}, {4.0}));
  ASSERT_TRUE(d.ok());
  expect_tensor_eq(*d, make_tensor<double>({2}, {0.25, -0.75}));
}

TEST(ElementwiseArithmetic, Float16AddRoundsToNearestEven) {
  // 1.0 (0x3C00) + 2^-11 (0x1000) is exactly halfway between 1.0 and the next
  // half, 1 + 2^-10 (0x3C01): ties go to the even mantissa, 1.0. With
  // 1.5 * 2^-10 (0x1600) the sum is halfway between 0x3C01 and 0x3C02: even
  // wins again, upwards this time.
  Tensor a = Tensor::allocate(DataType::kFloat16, Shape{2}).value();
  Tensor b = Tensor::allocate(DataType::kFloat16, Shape{2}).value();
  a.data<uint16_t>()[0] = 0x3C00;
  a.data<uint16_t>()[1] = 0x3C00;
  b.data<uint16_t>()[0] = 0x1000;
  b.data<uint16_t>()[1] = 0x1600;
  auto out = run_binary("Add", 14, a, b);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->dtype(), DataType::kFloat16);
  EXPECT_EQ(out->data<uint16_t>()[0], 0x3C00);
  EXPECT_EQ(out->data<uint16_t>()[1], 0x3C02);
}

TEST(ElementwiseArithmetic, ModFollowsDivisorSignUnlessFmod) {
  const Tensor a = make_tensor<int32_t>({4}, {7, -7, 7, -7});
  const Tensor b = make_tensor<int32_t>({4}, {3, 3, -3, -3});
  auto py = run_binary("Mod", 13, a, b);
  ASSERT_TRUE(py.ok()) << py.status().to_string();
  expect_tensor_eq(*py, make_tensor<int32_t>({4}, {1, 2, -2, -1}));
  auto c = NodeTest("Mod", 13).input(a).input(b).attr("fmod", 1).run();
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  expect_tensor_eq(c->at(0), make_tensor<int32_t>({4}, {1, -1, 1, -1}));
  auto f = NodeTest("Mod", 13)
               .input(make_tensor<float>({3}, {5.5f, -5.5f, 5.5f}))
               .input(make_tensor<float>({3}, {2.0f, 2.0f, -2.0f}))
               .attr("fmod", 1)
               .run();
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  expect_tensor_eq(f->at(0), make_tensor<float>({3}, {1.5f, -1.5f, 1.5f}));
}

// ---- Pow ---------------------------------------------------------------------

TEST(ElementwisePow, FloatBaseWithFloatAndIntegerExponents) {
  const std::vector<float> base = {2.0f, 3.0f, 0.5f, 9.0f};
  auto ff = run_binary("Pow", 15, make_tensor<float>({4}, base), make_tensor<float>({4}, {3.0f, 0.5f, -2.0f, 1.5f}));
  ASSERT_TRUE(ff.ok()) << ff.status().to_string();
  expect_tensor_near(*ff, make_tensor<float>({4}, {8.0f, std::sqrt(3.0f), 4.0f, 27.0f}));
  auto fi = run_binary("Pow", 15, make_tensor<float>({4}, base), make_tensor<int64_t>({4}, {2, 3, -1, 0}));
  ASSERT_TRUE(fi.ok()) << fi.status().to_string();
  expect_tensor_near(*fi, make_tensor<float>({4}, {4.0f, 27.0f, 2.0f, 1.0f}));
}

TEST(ElementwisePow, ScalarExponentFastPathsMatchStdPow) {
  const std::vector<float> x = random_floats(1000, 0.1f, 5.0f, 7);
  for (float e : {2.0f, 3.0f, 0.5f, 1.0f, -1.0f, 2.5f}) {
    auto out = run_binary("Pow", 15, make_tensor<float>({1000}, x), make_tensor<float>({}, {e}));
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    std::vector<float> ref(x.size());
    for (size_t i = 0; i < x.size(); ++i) ref[i] = std::pow(x[i], e);
    SCOPED_TRACE(e);
    expect_tensor_near(*out, make_tensor<float>({1000}, ref), 1e-6, 0);
  }
}

TEST(ElementwisePow, IntegerBase) {
  auto ii = run_binary("Pow", 15, make_tensor<int64_t>({4}, {2, -3, 5, 1}), make_tensor<int64_t>({4}, {10, 3, 0, -4}));
  ASSERT_TRUE(ii.ok()) << ii.status().to_string();
  expect_tensor_eq(*ii, make_tensor<int64_t>({4}, {1024, -27, 1, 1}));
  auto i_f = run_binary("Pow", 15, make_tensor<int32_t>({2}, {4, 10}), make_tensor<float>({2}, {0.5f, 2.0f}));
  ASSERT_TRUE(i_f.ok()) << i_f.status().to_string();
  expect_tensor_eq(*i_f, make_tensor<int32_t>({2}, {2, 100}));
}

// ---- comparison, logic, bitwise ----------------------------------------------

TEST(ElementwiseCompare, AllComparisonsWithBroadcast) {
  const Tensor a = make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = make_tensor<float>({3}, {2, 2, 7});
  struct Case {
    const char* op;
    int opset;
    std::vector<int> expected;
  };
  const std::vector<Case> cases = {
      {"Equal", 19, {0, 1, 0, 0, 0, 0}},      {"Less", 13, {1, 0, 1, 0, 0, 1}},
      {"Greater", 13, {0, 0, 0, 1, 1, 0}},    {"LessOrEqual", 16, {1, 1, 1, 0, 0, 1}},
      {"GreaterOrEqual", 16, {0, 1, 0, 1, 1, 0}},
  };
  for (const auto& c : cases) {
    auto out = run_binary(c.op, c.opset, a, b);
    ASSERT_TRUE(out.ok()) << c.op << ": " << out.status().to_string();
    SCOPED_TRACE(c.op);
    expect_tensor_eq(*out, make_bool_tensor({2, 3}, c.expected));
  }
}

TEST(ElementwiseCompare, NaNComparesFalseAndIntegersCompareExactly) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto eq = run_binary("Equal", 13, make_tensor<float>({2}, {nan, 1}), make_tensor<float>({2}, {nan, 1}));
  ASSERT_TRUE(eq.ok());
  expect_tensor_eq(*eq, make_bool_tensor({2}, {0, 1}));
  // 2^53 + 1 is not a double: the comparison must not go through double.
  const int64_t big = (int64_t{1} << 53) + 1;
  auto gt = run_binary("Greater", 13, make_tensor<int64_t>({1}, {big}), make_tensor<int64_t>({1}, {big - 1}));
  ASSERT_TRUE(gt.ok());
  expect_tensor_eq(*gt, make_bool_tensor({1}, {1}));
}

TEST(ElementwiseCompare, EqualOnStrings) {
  Tensor a = Tensor::allocate(DataType::kString, Shape{3}).value();
  Tensor b = Tensor::allocate(DataType::kString, Shape{1}).value();
  a.data<std::string>()[0] = "cat";
  a.data<std::string>()[1] = "dog";
  a.data<std::string>()[2] = "ca";
  b.data<std::string>()[0] = "cat";
  auto out = run_binary("Equal", 19, a, b);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(*out, make_bool_tensor({3}, {1, 0, 0}));
}

TEST(ElementwiseLogic, AndOrXorNot) {
  const Tensor a = make_bool_tensor({2, 2}, {0, 0, 1, 1});
  const Tensor b = make_bool_tensor({2}, {0, 1});
  auto a_and = run_binary("And", 7, a, b);
  auto a_or = run_binary("Or", 7, a, b);
  auto a_xor = run_binary("Xor", 7, a, b);
  ASSERT_TRUE(a_and.ok() && a_or.ok() && a_xor.ok());
  expect_tensor_eq(*a_and, make_bool_tensor({2, 2}, {0, 0, 0, 1}));
  expect_tensor_eq(*a_or, make_bool_tensor({2, 2}, {0, 1, 1, 1}));
  expect_tensor_eq(*a_xor, make_bool_tensor({2, 2}, {0, 1, 1, 0}));
  auto n = NodeTest("Not", 1).input(a).run();
  ASSERT_TRUE(n.ok());
  expect_tensor_eq(n->at(0), make_bool_tensor({2, 2}, {1, 1, 0, 0}));
}

TEST(ElementwiseLogic, AndRejectsNonBool) {
  auto out = run_binary("And", 7, make_tensor<float>({1}, {1}), make_tensor<float>({1}, {1}));
  EXPECT_FALSE(out.ok());
}

TEST(ElementwiseBitwise, ShiftsAndBitwiseOps) {
  auto left = NodeTest("BitShift", 11)
                  .input(make_tensor<uint8_t>({3}, {1, 3, 255}))
                  .input(make_tensor<uint8_t>({3}, {3, 2, 1}))
                  .attr("direction", "LEFT")
                  .run();
  ASSERT_TRUE(left.ok()) << left.status().to_string();
  expect_tensor_eq(left->at(0), make_tensor<uint8_t>({3}, {8, 12, 254}));
  auto right = NodeTest("BitShift", 11)
                   .input(make_tensor<uint32_t>({3}, {16, 4, 7}))
                   .input(make_tensor<uint32_t>({1}, {2}))
                   .attr("direction", "RIGHT")
                   .run();
  ASSERT_TRUE(right.ok()) << right.status().to_string();
  expect_tensor_eq(right->at(0), make_tensor<uint32_t>({3}, {4, 1, 1}));
  auto bad = NodeTest("BitShift", 11)
                 .input(make_tensor<uint32_t>({1}, {1}))
                 .input(make_tensor<uint32_t>({1}, {1}))
                 .attr("direction", "UP")
                 .run();
  EXPECT_FALSE(bad.ok());

  const Tensor x = make_tensor<int32_t>({3}, {0b1100, -1, 5});
  const Tensor y = make_tensor<int32_t>({3}, {0b1010, 0x0F, 3});
  auto band = run_binary("BitwiseAnd", 18, x, y);
  auto bor = run_binary("BitwiseOr", 18, x, y);
  auto bxor = run_binary("BitwiseXor", 18, x, y);
  ASSERT_TRUE(band.ok() && bor.ok() && bxor.ok());
  expect_tensor_eq(*band, make_tensor<int32_t>({3}, {0b1000, 0x0F, 1}));
  expect_tensor_eq(*bor, make_tensor<int32_t>({3}, {0b1110, -1, 7}));
  expect_tensor_eq(*bxor, make_tensor<int32_t>({3}, {0b0110, -16, 6}));
  auto bnot = NodeTest("BitwiseNot", 18).input(make_tensor<uint16_t>({2}, {0, 0x00FF})).run();
  ASSERT_TRUE(bnot.ok());
  expect_tensor_eq(bnot->at(0), make_tensor<uint16_t>({2}, {0xFFFF, 0xFF00}));
}

// ---- variadic -------------------------------------------------------------------

TEST(ElementwiseVariadic, MaxMinSumMeanOverThreeBroadcastInputs) {
  const Tensor a = make_tensor<float>({2, 3}, {1, 8, 3, -4, 5, 6});
  const Tensor b = make_tensor<float>({3}, {2, 2, 2});
  const Tensor c = make_tensor<float>({2, 1}, {0, 7});
  auto run3 = [&](const char* op) { return NodeTest(op, 13).input(a).input(b).input(c).run(); };
  auto mx = run3("Max");
  auto mn = run3("Min");
  auto sm = run3("Sum");
  auto me = run3("Mean");
  ASSERT_TRUE(mx.ok() && mn.ok() && sm.ok() && me.ok()) << mx.status().to_string();
  expect_tensor_eq(mx->at(0), make_tensor<float>({2, 3}, {2, 8, 3, 7, 7, 7}));
  expect_tensor_eq(mn->at(0), make_tensor<float>({2, 3}, {0, 0, 0, -4, 2, 2}));
  expect_tensor_eq(sm->at(0), make_tensor<float>({2, 3}, {3, 10, 5, 5, 14, 15}));
  expect_tensor_near(me->at(0), make_tensor<float>({2, 3}, {1, 10.0f / 3, 5.0f / 3, 5.0f / 3, 14.0f / 3, 5}));
}

TEST(ElementwiseVariadic, SingleInputIsCopiedAndMaxPropagatesNaN) {
  auto one = NodeTest("Sum", 13).input(make_tensor<float>({3}, {1, 2, 3})).run();
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  expect_tensor_eq(one->at(0), make_tensor<float>({3}, {1, 2, 3}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto mx = NodeTest("Max", 13)
                .input(make_tensor<float>({2}, {nan, 1}))
                .input(make_tensor<float>({2}, {1, nan}))
                .run();
  ASSERT_TRUE(mx.ok());
  EXPECT_TRUE(std::isnan(mx->at(0).data<float>()[0]));
  EXPECT_TRUE(std::isnan(mx->at(0).data<float>()[1]));
  auto imax = NodeTest("Max", 13)
                  .input(make_tensor<uint8_t>({3}, {1, 200, 3}))
                  .input(make_tensor<uint8_t>({3}, {100, 2, 3}))
                  .run();
  ASSERT_TRUE(imax.ok()) << imax.status().to_string();
  expect_tensor_eq(imax->at(0), make_tensor<uint8_t>({3}, {100, 200, 3}));
}

// ---- PRelu, Where --------------------------------------------------------------

TEST(ElementwisePRelu, ChannelSlopeBroadcastsToX) {
  // X [1, 2, 2, 2], slope [2, 1, 1]: one slope per channel.
  const Tensor x = make_tensor<float>({1, 2, 2, 2}, {-1, 2, -3, 4, -5, 6, -7, 8});
  const Tensor slope = make_tensor<float>({2, 1, 1}, {0.5f, 0.25f});
  auto out = run_binary("PRelu", 16, x, slope);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(*out, make_tensor<float>({1, 2, 2, 2}, {-0.5f, 2, -1.5f, 4, -1.25f, 6, -1.75f, 8}));
  auto bad = run_binary("PRelu", 16, make_tensor<float>({2}, {1, 2}), make_tensor<float>({2, 2}, {1, 2, 3, 4}));
  EXPECT_FALSE(bad.ok());
}

TEST(ElementwiseWhere, ThreeWayBroadcast) {
  const Tensor c = make_bool_tensor({2, 1}, {1, 0});
  const Tensor x = make_tensor<float>({3}, {1, 2, 3});
  const Tensor y = make_tensor<float>({}, {-1});
  auto out = NodeTest("Where", 16).input(c).input(x).input(y).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({2, 3}, {1, 2, 3, -1, -1, -1}));
  const Tensor c2 = make_bool_tensor({4}, {1, 0, 0, 1});
  auto same = NodeTest("Where", 16)
                  .input(c2)
                  .input(make_tensor<int64_t>({4}, {1, 2, 3, 4}))
                  .input(make_tensor<int64_t>({4}, {5, 6, 7, 8}))
                  .run();
  ASSERT_TRUE(same.ok());
  expect_tensor_eq(same->at(0), make_tensor<int64_t>({4}, {1, 6, 7, 4}));
}

TEST(ElementwiseWhere, Strings) {
  Tensor x = Tensor::allocate(DataType::kString, Shape{2}).value();
  Tensor y = Tensor::allocate(DataType::kString, Shape{1}).value();
  x.data<std::string>()[0] = "a";
  x.data<std::string>()[1] = "b";
  y.data<std::string>()[0] = "z";
  auto out = NodeTest("Where", 16).input(make_bool_tensor({2}, {0, 1})).input(x).input(y).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).data<std::string>()[0], "z");
  EXPECT_EQ(out->at(0).data<std::string>()[1], "b");
}

// ---- integer overflow ---------------------------------------------------------
// Integers wrap in two's complement, as numpy and ONNX Runtime do; the
// expected values are numpy's.

TEST(ElementwiseIntegerOverflow, AddSubMulWrapLikeNumpy) {
  const Tensor a32 = make_tensor<int32_t>({3}, {INT32_MAX, INT32_MIN, 2000000000});
  const Tensor b32 = make_tensor<int32_t>({3}, {1, -1, 2000000000});
  auto add = run_binary("Add", 14, a32, b32);
  auto sub = run_binary("Sub", 14, a32, b32);
  auto mul = run_binary("Mul", 14, a32, b32);
  ASSERT_TRUE(add.ok() && sub.ok() && mul.ok()) << add.status().to_string();
  expect_tensor_eq(*add, make_tensor<int32_t>({3}, {INT32_MIN, INT32_MAX, -294967296}));
  expect_tensor_eq(*sub, make_tensor<int32_t>({3}, {INT32_MAX - 1, INT32_MIN + 1, 0}));
  expect_tensor_eq(*mul, make_tensor<int32_t>({3}, {INT32_MAX, INT32_MIN, -1651507200}));

  const Tensor a64 = make_tensor<int64_t>({3}, {INT64_MAX, 3037000500, INT64_MIN});
  const Tensor b64 = make_tensor<int64_t>({3}, {2, 3037000500, -1});
  auto add64 = run_binary("Add", 14, a64, b64);
  auto mul64 = run_binary("Mul", 14, a64, b64);
  ASSERT_TRUE(add64.ok() && mul64.ok()) << add64.status().to_string();
  expect_tensor_eq(*add64, make_tensor<int64_t>({3}, {INT64_MIN + 1, 6074001000, INT64_MAX}));
  expect_tensor_eq(*mul64, make_tensor<int64_t>({3}, {-2, -9223372036709301616, INT64_MIN}));

  // Narrow types promote to int: 65535 * 65535 must not overflow int.
  auto u16 = run_binary("Mul", 14, make_tensor<uint16_t>({1}, {65535}), make_tensor<uint16_t>({1}, {65535}));
  ASSERT_TRUE(u16.ok()) << u16.status().to_string();
  expect_tensor_eq(*u16, make_tensor<uint16_t>({1}, {1}));
  auto i16 = run_binary("Mul", 14, make_tensor<int16_t>({1}, {-32768}), make_tensor<int16_t>({1}, {-1}));
  ASSERT_TRUE(i16.ok()) << i16.status().to_string();
  expect_tensor_eq(*i16, make_tensor<int16_t>({1}, {-32768}));

  // A long row, so the vector loop (not only its tail) wraps.
  std::vector<int32_t> big(1000, INT32_MAX);
  auto row = run_binary("Add", 14, make_tensor<int32_t>({1000}, big), make_tensor<int32_t>({}, {1}));
  ASSERT_TRUE(row.ok()) << row.status().to_string();
  expect_tensor_eq(*row, make_tensor<int32_t>({1000}, std::vector<int32_t>(1000, INT32_MIN)));
}

TEST(ElementwiseIntegerOverflow, NegAndAbsOfTheMinimumWrap) {
  auto neg = NodeTest("Neg", 13).input(make_tensor<int32_t>({2}, {INT32_MIN, 5})).run();
  ASSERT_TRUE(neg.ok()) << neg.status().to_string();
  expect_tensor_eq(neg->at(0), make_tensor<int32_t>({2}, {INT32_MIN, -5}));
  auto abs = NodeTest("Abs", 13).input(make_tensor<int64_t>({2}, {INT64_MIN, -7})).run();
  ASSERT_TRUE(abs.ok()) << abs.status().to_string();
  expect_tensor_eq(abs->at(0), make_tensor<int64_t>({2}, {INT64_MIN, 7}));
}

TEST(ElementwiseIntegerOverflow, IntegerPowWrapsAndFloatExponentsConvertLikeX86) {
  // numpy: np.power(np.int32(3), np.int32(40)) == 689956897;
  // np.power(np.int64(3), np.int64(41)) == -420491770248316829.
  auto i32 = run_binary("Pow", 15, make_tensor<int32_t>({1}, {3}), make_tensor<int32_t>({1}, {40}));
  ASSERT_TRUE(i32.ok()) << i32.status().to_string();
  expect_tensor_eq(*i32, make_tensor<int32_t>({1}, {689956897}));
  auto i64 = run_binary("Pow", 15, make_tensor<int64_t>({1}, {3}), make_tensor<int64_t>({1}, {41}));
  ASSERT_TRUE(i64.ok()) << i64.status().to_string();
  expect_tensor_eq(*i64, make_tensor<int64_t>({1}, {-420491770248316829}));
  // 2^40 and NaN do not fit an int32: INT32_MIN, as numpy's
  // np.array([2.0**40, nan]).astype(np.int32) gives on x86.
  auto f = run_binary("Pow", 15, make_tensor<int32_t>({3}, {2, 2, -8}),
                      make_tensor<double>({3}, {40.0, 0.5, 1.0 / 3.0}));
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  expect_tensor_eq(*f, make_tensor<int32_t>({3}, {INT32_MIN, 1, INT32_MIN}));
}

// ---- unary ------------------------------------------------------------------------

struct UnaryCase {
  const char* op;
  int opset;
  float lo;
  float hi;
  std::function<double(double)> ref;
  double rtol;
};

TEST(ElementwiseUnary, FloatOpsMatchStdMath) {
  const std::vector<UnaryCase> cases = {
      {"Abs", 13, -5, 5, [](double x) { return std::fabs(x); }, 0},
      {"Neg", 13, -5, 5, [](double x) { return -x; }, 0},
      {"Reciprocal", 13, 0.1f, 5, [](double x) { return 1 / x; }, 1e-7},
      {"Floor", 13, -5, 5, [](double x) { return std::floor(x); }, 0},
      {"Ceil", 13, -5, 5, [](double x) { return std::ceil(x); }, 0},
      {"Sqrt", 13, 0, 50, [](double x) { return std::sqrt(x); }, 1e-7},
      {"Exp", 13, -80, 80, [](double x) { return std::exp(x); }, 2e-7},
      {"Log", 13, 0.01f, 100, [](double x) { return std::log(x); }, 2e-7},
      {"Sin", 7, -6, 6, [](double x) { return std::sin(x); }, 1e-6},
      {"Cos", 7, -6, 6, [](double x) { return std::cos(x); }, 1e-6},
      {"Tan", 7, -1.5f, 1.5f, [](double x) { return std::tan(x); }, 1e-6},
      {"Asin", 7, -1, 1, [](double x) { return std::asin(x); }, 1e-6},
      {"Acos", 7, -1, 1, [](double x) { return std::acos(x); }, 1e-6},
      {"Atan", 7, -10, 10, [](double x) { return std::atan(x); }, 1e-6},
      {"Sinh", 9, -5, 5, [](double x) { return std::sinh(x); }, 1e-6},
      {"Cosh", 9, -5, 5, [](double x) { return std::cosh(x); }, 1e-6},
      {"Asinh", 9, -5, 5, [](double x) { return std::asinh(x); }, 1e-6},
      {"Acosh", 9, 1, 10, [](double x) { return std::acosh(x); }, 1e-6},
      {"Atanh", 9, -0.99f, 0.99f, [](double x) { return std::atanh(x); }, 1e-6},
      {"Erf", 13, -5, 5, [](double x) { return std::erf(x); }, 1.5e-7},
      {"Tanh", 13, -10, 10, [](double x) { return std::tanh(x); }, 5e-7},
      {"Sigmoid", 13, -30, 30, [](double x) { return 1 / (1 + std::exp(-x)); }, 3e-7},
      {"Relu", 14, -5, 5, [](double x) { return x > 0 ? x : 0; }, 0},
      {"Softplus", 1, -20, 20, [](double x) { return std::log1p(std::exp(x)); }, 1e-6},
      {"Softsign", 1, -20, 20, [](double x) { return x / (1 + std::fabs(x)); }, 1e-7},
      {"Mish", 18, -10, 10, [](double x) { return x * std::tanh(std::log1p(std::exp(x))); }, 1e-6},
      {"HardSwish", 14, -5, 5, [](double x) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); }, 1e-6},
      {"HardSigmoid", 6, -5, 5, [](double x) { return std::max(0.0, std::min(1.0, double{0.2f} * x + 0.5)); }, 1e-6},
      {"Elu", 6, -5, 5, [](double x) { return x < 0 ? std::exp(x) - 1 : x; }, 1e-6},
      {"Selu", 6, -5, 5,
       [](double x) { return 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * (std::exp(x) - 1)); }, 1e-6},
      {"Celu", 12, -5, 5, [](double x) { return x > 0 ? x : std::exp(x) - 1; }, 1e-6},
      {"LeakyRelu", 16, -5, 5, [](double x) { return x < 0 ? 0.01 * x : x; }, 1e-6},
      {"ThresholdedRelu", 10, -5, 5, [](double x) { return x > 1 ? x : 0; }, 0},
      {"Sign", 13, -5, 5, [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }, 0},
      {"Gelu", 20, -9, 8, [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }, 1e-6},
  };
  const int64_t n = 20001;
  for (const auto& c : cases) {
    std::vector<float> x(static_cast<size_t>(n));
    std::vector<float> ref(x.size());
    for (int64_t i = 0; i < n; ++i) {
      x[static_cast<size_t>(i)] = c.lo + (c.hi - c.lo) * static_cast<float>(i) / static_cast<float>(n - 1);
      ref[static_cast<size_t>(i)] = static_cast<float>(c.ref(x[static_cast<size_t>(i)]));
    }
    auto out = NodeTest(c.op, c.opset).input(make_tensor<float>({n}, x)).threads(2).run();
    ASSERT_TRUE(out.ok()) << c.op << ": " << out.status().to_string();
    SCOPED_TRACE(c.op);
    // atol covers results that round to zero (Tan near 0, Sinh near 0 ...).
    expect_tensor_near(out->at(0), make_tensor<float>({n}, ref), c.rtol, 1e-30);
  }
}

// Erf decides GELU's accuracy in transformer models: check it over every
// 4099th float between -6 and 6, against std::erf in double.
TEST(ElementwiseUnary, ErfIsAccurateToAboutOneUlp) {
  std::vector<float> x;
  for (uint32_t bits = 0; bits < 0x40C00000u; bits += 4099) {
    x.push_back(std::bit_cast<float>(bits));
    x.push_back(-std::bit_cast<float>(bits));
  }
  const auto n = static_cast<int64_t>(x.size());
  auto out = NodeTest("Erf", 13).input(make_tensor<float>({n}, x)).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  double worst = 0;
  float worst_x = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = std::erf(static_cast<double>(x[i]));
    if (std::fabs(ref) < 1e-37) continue;  // denormal results carry fewer bits
    const double got = out->at(0).data<float>()[i];
    const double rel = ref == 0 ? std::fabs(got) : std::fabs(got - ref) / std::fabs(ref);
    if (rel > worst) {
      worst = rel;
      worst_x = x[i];
    }
  }
  EXPECT_LT(worst, 1.5e-7) << "at x = " << worst_x;
}

TEST(ElementwiseUnary, ExpHandlesOverflowUnderflowAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = NodeTest("Exp", 13).input(make_tensor<float>({6}, {0.0f, 89.0f, -200.0f, inf, -inf, nan})).run();
  ASSERT_TRUE(out.ok());
  const float* y = out->at(0).data<float>();
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], inf);
  EXPECT_EQ(y[2], 0.0f);
  EXPECT_EQ(y[3], inf);
  EXPECT_EQ(y[4], 0.0f);
  EXPECT_TRUE(std::isnan(y[5]));
  // Results below FLT_MIN come out as denormals, not 0.
  auto tiny = NodeTest("Exp", 13).input(make_tensor<float>({1}, {-95.0f})).run();
  ASSERT_TRUE(tiny.ok());
  EXPECT_NEAR(tiny->at(0).data<float>()[0], std::exp(-95.0f), 1e-44);
  EXPECT_GT(tiny->at(0).data<float>()[0], 0.0f);
}

TEST(ElementwiseUnary, TanhSigmoidErfSaturateAndKeepNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = make_tensor<float>({4}, {inf, -inf, nan, 1e-6f});
  auto t = NodeTest("Tanh", 13).input(x).run();
  auto s = NodeTest("Sigmoid", 13).input(x).run();
  auto e = NodeTest("Erf", 13).input(x).run();
  ASSERT_TRUE(t.ok() && s.ok() && e.ok());
  EXPECT_EQ(t->at(0).data<float>()[0], 1.0f);
  EXPECT_EQ(t->at(0).data<float>()[1], -1.0f);
  EXPECT_TRUE(std::isnan(t->at(0).data<float>()[2]));
  EXPECT_FLOAT_EQ(t->at(0).data<float>()[3], 1e-6f);
  EXPECT_EQ(s->at(0).data<float>()[0], 1.0f);
  EXPECT_EQ(s->at(0).data<float>()[1], 0.0f);
  EXPECT_TRUE(std::isnan(s->at(0).data<float>()[2]));
  EXPECT_EQ(e->at(0).data<float>()[0], 1.0f);
  EXPECT_EQ(e->at(0).data<float>()[1], -1.0f);
  EXPECT_TRUE(std::isnan(e->at(0).data<float>()[2]));
}

TEST(ElementwiseUnary, DoubleAndHalfInputs) {
  auto d = NodeTest("Sqrt", 13).input(make_tensor<double>({2}, {2.0, 9.0})).run();
  ASSERT_TRUE(d.ok());
  EXPECT_DOUBLE_EQ(d->at(0).data<double>()[0], std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(d->at(0).data<double>()[1], 3.0);
  Tensor h = Tensor::allocate(DataType::kFloat16, Shape{2}).value();
  h.data<uint16_t>()[0] = 0xC000;  // -2
  h.data<uint16_t>()[1] = 0x3C00;  // 1
  auto r = NodeTest("Relu", 14).input(h).run();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->at(0).data<uint16_t>()[0], 0x0000);
  EXPECT_EQ(r->at(0).data<uint16_t>()[1], 0x3C00);
}

TEST(ElementwiseUnary, IntegerAbsNegSignRelu) {
  const Tensor x = make_tensor<int32_t>({4}, {-3, 0, 5, -1});
  auto abs = NodeTest("Abs", 13).input(x).run();
  auto neg = NodeTest("Neg", 13).input(x).run();
  auto sign = NodeTest("Sign", 13).input(x).run();
  auto relu = NodeTest("Relu", 14).input(x).run();
  ASSERT_TRUE(abs.ok() && neg.ok() && sign.ok() && relu.ok());
  expect_tensor_eq(abs->at(0), make_tensor<int32_t>({4}, {3, 0, 5, 1}));
  expect_tensor_eq(neg->at(0), make_tensor<int32_t>({4}, {3, 0, -5, 1}));
  expect_tensor_eq(sign->at(0), make_tensor<int32_t>({4}, {-1, 0, 1, -1}));
  expect_tensor_eq(relu->at(0), make_tensor<int32_t>({4}, {0, 0, 5, 0}));
}

TEST(ElementwiseUnary, RoundHalfToEven) {
  auto out = NodeTest("Round", 11).input(make_tensor<float>({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f})).run();
  ASSERT_TRUE(out.ok());
  expect_tensor_eq(out->at(0), make_tensor<float>({6}, {0, 2, 2, -0.0f, -2, 2}));
}

TEST(ElementwiseUnary, AttributesChangeTheFormula) {
  auto lr = NodeTest("LeakyRelu", 16).input(make_tensor<float>({2}, {-2, 3})).attr("alpha", 0.5f).run();
  ASSERT_TRUE(lr.ok());
  expect_tensor_eq(lr->at(0), make_tensor<float>({2}, {-1, 3}));
  auto hs = NodeTest("HardSigmoid", 6)
                .input(make_tensor<float>({3}, {-10, 0, 1}))
                .attr("alpha", 0.25f)
                .attr("beta", 0.25f)
                .run();
  ASSERT_TRUE(hs.ok());
  expect_tensor_eq(hs->at(0), make_tensor<float>({3}, {0, 0.25f, 0.5f}));
  auto th = NodeTest("ThresholdedRelu", 10).input(make_tensor<float>({3}, {1, 2, 3})).attr("alpha", 2.0f).run();
  ASSERT_TRUE(th.ok());
  expect_tensor_eq(th->at(0), make_tensor<float>({3}, {0, 0, 3}));
  auto shrink = NodeTest("Shrink", 9)
                    .input(make_tensor<float>({5}, {-2, -1, 0, 1, 2}))
                    .attr("lambd", 1.5f)
                    .attr("bias", 1.5f)
                    .run();
  ASSERT_TRUE(shrink.ok());
  expect_tensor_eq(shrink->at(0), make_tensor<float>({5}, {-0.5f, 0, 0, 0, 0.5f}));
  auto ishrink = NodeTest("Shrink", 9)
                     .input(make_tensor<int8_t>({5}, {-8, -1, 0, 1, 8}))
                     .attr("lambd", 1.5f)
                     .attr("bias", 2.0f)
                     .run();
  ASSERT_TRUE(ishrink.ok()) << ishrink.status().to_string();
  expect_tensor_eq(ishrink->at(0), make_tensor<int8_t>({5}, {-6, 0, 0, 0, 6}));
  auto celu = NodeTest("Celu", 12).input(make_tensor<float>({2}, {-1, 1})).attr("alpha", 2.0f).run();
  ASSERT_TRUE(celu.ok());
  expect_tensor_near(celu->at(0), make_tensor<float>({2}, {static_cast<float>(2 * (std::exp(-0.5) - 1)), 1}));
}

// Through erfc, GELU of negative inputs keeps its relative accuracy where
// 1 + erf(x / sqrt 2) would cancel to nothing.
TEST(ElementwiseUnary, GeluTailIsRelativelyAccurate) {
  const std::vector<float> x = {-3.0f, -6.0f, -9.0f};
  auto out = NodeTest("Gelu", 20).input(make_tensor<float>({3}, x)).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = 0.5 * x[i] * std::erfc(-x[i] / std::sqrt(2.0));
    EXPECT_NEAR(out->at(0).data<float>()[i], ref, std::fabs(ref) * 1e-5) << x[i];
  }
}

// Many 16-wide vector steps (the test above is one zero-padded partial
// vector) and a partial one at the end: both tails down to where GELU
// underflows, infinities and NaN.
TEST(ElementwiseUnary, GeluVectorStepsMatchErfc) {
  std::vector<float> x;
  for (int i = -300; i <= 300; ++i) x.push_back(static_cast<float>(i) * 0.05f);
  const float inf = std::numeric_limits<float>::infinity();
  x.insert(x.end(), {-inf, inf, -20.0f, 20.0f, -0.0f, 1e-30f, -1e-30f, std::nanf("")});
  while (x.size() % 16 != 5) x.push_back(0.5f);
  auto out = NodeTest("Gelu", 20).input(make_tensor<float>({static_cast<int64_t>(x.size())}, x)).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const float* y = out->at(0).data<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isinf(x[i])) {
      // -inf: x * Phi(x) is -inf * 0, NaN, as in the Erf chain the GELU
      // fusion replaces, the ONNX function body and PyTorch.
      if (x[i] > 0) EXPECT_EQ(y[i], inf);
      else EXPECT_TRUE(std::isnan(y[i])) << y[i];
      continue;
    }
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(y[i]));
      continue;
    }
    const double ref = 0.5 * x[i] * std::erfc(-x[i] / std::sqrt(2.0));
    EXPECT_NEAR(y[i], ref, std::fabs(ref) * 2e-6 + 1e-43) << x[i];
  }
}

// Every 1021st float below 16 in magnitude, both signs, through the span
// loop of each ISA this CPU runs (the GEMM epilogue's): rows of 37 (two
// whole vectors and a masked tail) 40 apart, both GELU forms. With AVX-512
// that is the piecewise tables for |x| < 31.5 / 8 and the exact steps past
// them, vectors that mix both included. Each result within 1e-6 of the
// form in double, relatively; for tanh, where float's rounding of the
// sigmoid's argument z costs about |z| * 6e-8 and the exact steps' own
// exponential as much again, within 1e-6 + 2e-7 |z|, and its results
// below 1e-36 in magnitude may be 0.
// The gaps between rows stay untouched.
TEST(ElementwiseUnary, GeluRowsAreRelativelyAccurateEverywhere) {
  using Fn = void (*)(cpu::SimdActivation, const float*, float*, int64_t, int64_t, int64_t);
  std::vector<std::pair<const char*, Fn>> isas = {{"portable", &cpu::activation_detail::activation_f32_portable}};
  if (cpu_supports(CpuIsa::kAvx2)) isas.emplace_back("avx2", &cpu::activation_detail::activation_f32_avx2);
  if (cpu_supports(CpuIsa::kAvx512)) isas.emplace_back("avx512", &cpu::activation_detail::activation_f32_avx512);
  std::vector<float> values;
  for (uint32_t bits = 0; bits < 0x41800000u; bits += 1021) {
    values.push_back(std::bit_cast<float>(bits));
    values.push_back(-std::bit_cast<float>(bits));
  }
  const int64_t n = 37, ld = 40;
  const int64_t rows = static_cast<int64_t>(values.size()) / n;
  std::vector<float> x(static_cast<size_t>(rows * ld), 99.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(r * ld + i)] = values[static_cast<size_t>(r * n + i)];
  for (const bool tanh_form : {false, true}) {
    for (const auto& [name, fn] : isas) {
      SCOPED_TRACE(std::string(name) + (tanh_form ? " tanh" : " erf"));
      std::vector<float> y(x.size(), -7.0f);
      fn(tanh_form ? cpu::SimdActivation::kGeluTanh : cpu::SimdActivation::kGeluErf, x.data(), y.data(), rows, n, ld);
      double worst = 0;  // error over tolerance
      float worst_x = 0;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t i = 0; i < ld; ++i) {
          const auto k = static_cast<size_t>(r * ld + i);
          if (i >= n) {
            ASSERT_EQ(y[k], -7.0f) << "row " << r << " column " << i;
            continue;
          }
          const double v = x[k];
          const double z = 2 * std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v);
          const double ref = tanh_form ? v / (1 + std::exp(-z)) : 0.5 * v * std::erfc(-v / std::sqrt(2.0));
          // Denormals carry fewer bits; the tanh form's sigmoid gives 0 once
          // its e^-z overflows (z < -88.8, GELU above -1e-36).
          const double tiny = tanh_form ? 1e-36 : std::numeric_limits<float>::min();
          if (std::fabs(ref) < tiny) {
            ASSERT_NEAR(y[k], ref, tanh_form ? tiny : 1e-43) << v;
            continue;
          }
          const double tolerance = tanh_form ? 1e-6 + 2e-7 * std::fabs(z) : 1e-6;
          const double over = std::fabs(y[k] - ref) / std::fabs(ref) / tolerance;
          if (over > worst) {
            worst = over;
            worst_x = x[k];
          }
        }
      }
      EXPECT_LT(worst, 1.0) << "error over tolerance, at x = " << worst_x;
    }
  }
}

TEST(ElementwiseUnary, GeluTanhApproximation) {
  const std::vector<float> x = random_floats(1000, -6, 6, 3);
  std::vector<float> ref(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    ref[i] = static_cast<float>(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
  }
  auto out = NodeTest("Gelu", 20).input(make_tensor<float>({1000}, x)).attr("approximate", "tanh").run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1000}, ref), 1e-6, 1e-7);
  auto bad = NodeTest("Gelu", 20).input(make_tensor<float>({1}, {1})).attr("approximate", "fast").run();
  EXPECT_FALSE(bad.ok());
}

TEST(ElementwiseUnary, IsNaNAndIsInf) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = make_tensor<float>({4}, {1, nan, inf, -inf});
  auto isnan = NodeTest("IsNaN", 20).input(x).run();
  ASSERT_TRUE(isnan.ok());
  expect_tensor_eq(isnan->at(0), make_bool_tensor({4}, {0, 1, 0, 0}));
  auto isinf = NodeTest("IsInf", 20).input(x).run();
  ASSERT_TRUE(isinf.ok());
  expect_tensor_eq(isinf->at(0), make_bool_tensor({4}, {0, 0, 1, 1}));
  auto neg_only = NodeTest("IsInf", 20).input(x).attr("detect_positive", 0).run();
  ASSERT_TRUE(neg_only.ok());
  expect_tensor_eq(neg_only->at(0), make_bool_tensor({4}, {0, 0, 0, 1}));
}

// ---- Clip ----------------------------------------------------------------------

TEST(ElementwiseClip, AttributesBeforeOpset11) {
  auto out = NodeTest("Clip", 6)
                 .input(make_tensor<float>({4}, {-3, -1, 1, 3}))
                 .attr("min", -2.0f)
                 .attr("max", 2.0f)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({4}, {-2, -1, 1, 2}));
  auto no_max = NodeTest("Clip", 6).input(make_tensor<float>({2}, {-3, 1e30f})).attr("min", 0.0f).run();
  ASSERT_TRUE(no_max.ok());
  expect_tensor_eq(no_max->at(0), make_tensor<float>({2}, {0, 1e30f}));
}

TEST(ElementwiseClip, OptionalInputsFromOpset11AndIntegers) {
  const Tensor x = make_tensor<float>({4}, {-3, -1, 1, 3});
  auto both = NodeTest("Clip", 13)
                  .input(x)
                  .input(make_tensor<float>({}, {-2}))
                  .input(make_tensor<float>({}, {2}))
                  .run();
  ASSERT_TRUE(both.ok()) << both.status().to_string();
  expect_tensor_eq(both->at(0), make_tensor<float>({4}, {-2, -1, 1, 2}));
  auto max_only = NodeTest("Clip", 13).input(x).missing_input().input(make_tensor<float>({}, {0})).run();
  ASSERT_TRUE(max_only.ok()) << max_only.status().to_string();
  expect_tensor_eq(max_only->at(0), make_tensor<float>({4}, {-3, -1, 0, 0}));
  auto none = NodeTest("Clip", 13).input(x).run();
  ASSERT_TRUE(none.ok());
  expect_tensor_eq(none->at(0), x);
  // min > max: everything becomes max, as numpy.clip does.
  auto inverted = NodeTest("Clip", 13)
                      .input(x)
                      .input(make_tensor<float>({}, {2}))
                      .input(make_tensor<float>({}, {1}))
                      .run();
  ASSERT_TRUE(inverted.ok());
  expect_tensor_eq(inverted->at(0), make_tensor<float>({4}, {1, 1, 1, 1}));
  auto ints = NodeTest("Clip", 13)
                  .input(make_tensor<int64_t>({3}, {-100, 5, 100}))
                  .constant_input(make_tensor<int64_t>({}, {0}))
                  .constant_input(make_tensor<int64_t>({}, {10}))
                  .run();
  ASSERT_TRUE(ints.ok()) << ints.status().to_string();
  expect_tensor_eq(ints->at(0), make_tensor<int64_t>({3}, {0, 5, 10}));
}

}  // namespace
}  // namespace sy::testing
