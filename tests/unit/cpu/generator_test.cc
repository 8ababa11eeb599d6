// Constant, ConstantOfShape, Range, EyeLike.
#include <gtest/gtest.h>

#include <climits>
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

Tensor int64s(std::vector<int64_t> v) { return make_tensor<int64_t>(Shape{static_cast<int64_t>(v.size())}, v); }

const ValueType& output_type(const NodeTest& t) {
  return t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type;
}

TEST(ConstantKernel, ValueTensor) {
  NodeTest t("Constant", 13);
  t.attr("value", make_tensor<float>({2, 2}, {1, 2, 3, 4}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(output_type(t).dtype, DataType::kFloat);
  EXPECT_EQ(output_type(t).shape_string(), "[2,2]");
}

TEST(ConstantKernel, ScalarAndListAttributes) {
  NodeTest f("Constant", 13);
  f.attr("value_float", 2.5f);
  auto fo = f.run();
  ASSERT_TRUE(fo.ok()) << fo.status().to_string();
  expect_tensor_eq(fo->at(0), make_tensor<float>({}, {2.5f}));
  EXPECT_EQ(output_type(f).shape_string(), "[]");

  NodeTest fs("Constant", 13);
  fs.attr("value_floats", std::vector<float>{1.0f, -1.0f});
  auto fso = fs.run();
  ASSERT_TRUE(fso.ok()) << fso.status().to_string();
  expect_tensor_eq(fso->at(0), make_tensor<float>({2}, {1.0f, -1.0f}));

  NodeTest i("Constant", 13);
  i.attr("value_int", int64_t{-7});
  auto io = i.run();
  ASSERT_TRUE(io.ok()) << io.status().to_string();
  expect_tensor_eq(io->at(0), make_tensor<int64_t>({}, {-7}));
  EXPECT_EQ(output_type(i).dtype, DataType::kInt64);

  NodeTest is("Constant", 13);
  is.attr("value_ints", std::vector<int64_t>{3, 4, 5});
  auto iso = is.run();
  ASSERT_TRUE(iso.ok()) << iso.status().to_string();
  expect_tensor_eq(iso->at(0), int64s({3, 4, 5}));
  EXPECT_EQ(output_type(is).shape_string(), "[3]");

  NodeTest s("Constant", 13);
  s.attr("value_string", "hello");
  auto so = s.run();
  ASSERT_TRUE(so.ok()) << so.status().to_string();
  expect_tensor_eq(so->at(0), make_tensor<std::string>({}, {"hello"}));
}

TEST(ConstantKernel, NoValueOrTwoValuesIsAnError) {
  EXPECT_FALSE(NodeTest("Constant", 13).run().ok());
  EXPECT_FALSE(NodeTest("Constant", 13).attr("value_int", int64_t{1}).attr("value_float", 1.0f).run().ok());
}

TEST(ConstantOfShapeKernel, DefaultFloatZeroAndValue) {
  NodeTest t("ConstantOfShape", 9);
  t.constant_input(int64s({2, 3}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({2, 3}, std::vector<float>(6, 0.0f)));
  EXPECT_EQ(output_type(t).shape_string(), "[2,3]");

  NodeTest v("ConstantOfShape", 20);
  v.input(int64s({4})).attr("value", make_tensor<int32_t>({1}, {5}));
  auto vo = v.run();
  ASSERT_TRUE(vo.ok()) << vo.status().to_string();
  expect_tensor_eq(vo->at(0), make_tensor<int32_t>({4}, {5, 5, 5, 5}));
  EXPECT_EQ(output_type(v).dtype, DataType::kInt32);

  // test_constantofshape_int_shape_zero: a 0 dim.
  auto z = NodeTest("ConstantOfShape", 20).input(int64s({0})).attr("value", make_tensor<int32_t>({1}, {1})).run();
  ASSERT_TRUE(z.ok()) << z.status().to_string();
  EXPECT_EQ(z->at(0).shape(), (Shape{0}));

  // An empty shape gives a scalar.
  auto scalar = NodeTest("ConstantOfShape", 20).input(int64s({})).attr("value", make_tensor<double>({1}, {1.5})).run();
  ASSERT_TRUE(scalar.ok()) << scalar.status().to_string();
  expect_tensor_eq(scalar->at(0), make_tensor<double>({}, {1.5}));
}

TEST(ConstantOfShapeKernel, BigWithThreads) {
  auto out = NodeTest("ConstantOfShape", 20)
                 .input(int64s({512, 1024}))
                 .attr("value", make_tensor<float>({1}, {-3.0f}))
                 .threads(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<float>(out->at(0)), std::vector<float>(512 * 1024, -3.0f));
}

TEST(RangeKernel, IntegerAndFloat) {
  auto scalar_i32 = [](int32_t v) { return make_tensor<int32_t>({}, {v}); };
  // test_range_int32_type_negative_delta: 10, 6, -3 -> [10, 7].
  auto a = NodeTest("Range", 11).input(scalar_i32(10)).input(scalar_i32(6)).input(scalar_i32(-3)).run();
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  expect_tensor_eq(a->at(0), make_tensor<int32_t>({2}, {10, 7}));

  auto b = NodeTest("Range", 11)
               .input(make_tensor<int64_t>({}, {3}))
               .input(make_tensor<int64_t>({}, {9}))
               .input(make_tensor<int64_t>({}, {3}))
               .run();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  expect_tensor_eq(b->at(0), int64s({3, 6}));

  auto empty = NodeTest("Range", 11).input(scalar_i32(0)).input(scalar_i32(5)).input(scalar_i32(-1)).run();
  ASSERT_TRUE(empty.ok()) << empty.status().to_string();
  EXPECT_EQ(empty->at(0).shape(), (Shape{0}));

  // test_range_float_type_positive_delta: 1, 5, 2 -> [1, 3].
  NodeTest f("Range", 11);
  f.constant_input(make_tensor<float>({}, {1}))
      .constant_input(make_tensor<float>({}, {5}))
      .constant_input(make_tensor<float>({}, {2}));
  auto fo = f.run();
  ASSERT_TRUE(fo.ok()) << fo.status().to_string();
  expect_tensor_eq(fo->at(0), make_tensor<float>({2}, {1, 3}));
  EXPECT_EQ(output_type(f).shape_string(), "[2]");

  auto d = NodeTest("Range", 11)
               .input(make_tensor<double>({}, {0.0}))
               .input(make_tensor<double>({}, {1.0}))
               .input(make_tensor<double>({}, {0.25}))
               .run();
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  expect_tensor_eq(d->at(0), make_tensor<double>({4}, {0, 0.25, 0.5, 0.75}));

  EXPECT_FALSE(NodeTest("Range", 11).input(scalar_i32(0)).input(scalar_i32(5)).input(scalar_i32(0)).run().ok());
}

TEST(RangeKernel, HalfTypesFromOpset27) {
  auto half = [](float v) {
    Tensor t = Tensor::allocate(DataType::kFloat16, Shape{}).value();
    t.data<uint16_t>()[0] = float_to_float16(v);
    return t;
  };
  auto out = NodeTest("Range", 27).input(half(1)).input(half(5)).input(half(2)).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->at(0).shape(), (Shape{2}));
  EXPECT_EQ(float16_to_float(out->at(0).data<uint16_t>()[0]), 1.0f);
  EXPECT_EQ(float16_to_float(out->at(0).data<uint16_t>()[1]), 3.0f);
  // Before 27, float16 is not a Range type.
  EXPECT_FALSE(NodeTest("Range", 21).input(half(1)).input(half(5)).input(half(2)).run().ok());
}

TEST(EyeLikeKernel, DiagonalsAndDtype) {
  auto a = NodeTest("EyeLike", 9).input(make_tensor<float>({3, 4}, std::vector<float>(12, 9.0f))).attr("k", 1).run();
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  expect_tensor_eq(a->at(0), make_tensor<float>({3, 4}, {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));

  NodeTest t("EyeLike", 22);
  t.input(make_tensor<int32_t>({3, 2}, std::vector<int32_t>(6, 0)))
      .attr("k", -1)
      .attr("dtype", static_cast<int64_t>(DataType::kDouble));
  auto b = t.run();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  expect_tensor_eq(b->at(0), make_tensor<double>({3, 2}, {0, 0, 1, 0, 0, 1}));
  EXPECT_EQ(output_type(t).dtype, DataType::kDouble);

  auto h = NodeTest("EyeLike", 22)
               .input(make_tensor<float>({2, 2}, {0, 0, 0, 0}))
               .attr("dtype", static_cast<int64_t>(DataType::kFloat16))
               .run();
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  expect_tensor_near(h->at(0), [] {
    Tensor e = Tensor::allocate(DataType::kFloat16, Shape{2, 2}).value();
    const float v[] = {1, 0, 0, 1};
    for (int i = 0; i < 4; ++i) e.data<uint16_t>()[i] = float_to_float16(v[i]);
    return e;
  }());
}

// Range near the int64 limits: limit - start used to overflow int64. Values
// from numpy's np.arange, except the two whose span exceeds int64, where
// numpy itself overflows ("overflow encountered in scalar subtract", an
// empty result): those are Python's exact range().
TEST(RangeKernel, Int64NearTheLimitsCountsExactly) {
  const int64_t kMax = INT64_MAX;
  const int64_t kMin = INT64_MIN;
  struct Case {
    int64_t start, limit, delta;
    std::vector<int64_t> expected;
  };
  const Case cases[] = {
      {kMax - 5, kMax, 2, {kMax - 5, kMax - 3, kMax - 1}},
      {kMax, kMax - 5, -2, {kMax, kMax - 2, kMax - 4}},
      {kMin + 5, kMin, -2, {kMin + 5, kMin + 3, kMin + 1}},
      {kMin, kMin + 7, 3, {kMin, kMin + 3, kMin + 6}},
      {kMax - 1, kMax, 1, {kMax - 1}},
      {kMin, kMax, kMax, {kMin, -1, kMax - 1}},  // Python's range
      {kMax, kMin, kMin, {kMax, -1}},             // Python's range
      {kMax, kMin, 1, {}},
      {kMin, kMax, -1, {}},
  };
  for (const Case& c : cases) {
    NodeTest t("Range", 11);
    t.constant_input(make_tensor<int64_t>({}, {c.start}))
        .constant_input(make_tensor<int64_t>({}, {c.limit}))
        .constant_input(make_tensor<int64_t>({}, {c.delta}));
    auto out = t.run();
    ASSERT_TRUE(out.ok()) << out.status().to_string() << " " << c.start << " " << c.limit << " " << c.delta;
    EXPECT_EQ(to_vector<int64_t>(out->at(0)), c.expected) << c.start << " " << c.limit << " " << c.delta;
    EXPECT_EQ(output_type(t).shape_string(), "[" + std::to_string(c.expected.size()) + "]");
  }
}

TEST(RangeKernel, Int32NearTheLimits) {
  auto run = [](int32_t s, int32_t l, int32_t d) {
    return NodeTest("Range", 11)
        .input(make_tensor<int32_t>({}, {s}))
        .input(make_tensor<int32_t>({}, {l}))
        .input(make_tensor<int32_t>({}, {d}))
        .run();
  };
  auto a = run(INT32_MIN, INT32_MAX, INT32_MAX);  // Python: [-2147483648, -1, 2147483646]
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  expect_tensor_eq(a->at(0), make_tensor<int32_t>({3}, {INT32_MIN, -1, INT32_MAX - 1}));
  auto b = run(INT32_MAX - 2, INT32_MAX, 1);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  expect_tensor_eq(b->at(0), make_tensor<int32_t>({2}, {INT32_MAX - 2, INT32_MAX - 1}));
}

TEST(RangeKernel, CountsTooLargeToHoldAreRefusedBeforeAllocating) {
  auto i64 = [](int64_t s, int64_t l, int64_t d) {
    return NodeTest("Range", 11)
        .input(make_tensor<int64_t>({}, {s}))
        .input(make_tensor<int64_t>({}, {l}))
        .input(make_tensor<int64_t>({}, {d}))
        .run();
  };
  auto a = i64(0, INT64_MAX, 1);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument) << a.status().to_string();
  EXPECT_NE(a.status().message().find("9223372036854775807 elements"), std::string::npos) << a.status().message();
  EXPECT_NE(a.status().message().find("Range"), std::string::npos) << a.status().message();
  // 2^64 - 1 elements: more than int64 can count.
  auto b = i64(INT64_MIN, INT64_MAX, 1);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("18446744073709551615 elements"), std::string::npos) << b.status().message();

  auto f32 = [](float s, float l, float d) {
    return NodeTest("Range", 11)
        .input(make_tensor<float>({}, {s}))
        .input(make_tensor<float>({}, {l}))
        .input(make_tensor<float>({}, {d}))
        .run();
  };
  auto huge = f32(0.0f, 1e30f, 1.0f);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kInvalidArgument) << huge.status().to_string();
  auto nan = f32(0.0f, std::numeric_limits<float>::quiet_NaN(), 1.0f);
  ASSERT_FALSE(nan.ok());
  EXPECT_NE(nan.status().message().find("no finite number"), std::string::npos) << nan.status().message();
  // A negative count of any size is an empty range, not a conversion.
  auto down = f32(0.0f, 1e30f, -1.0f);
  ASSERT_TRUE(down.ok()) << down.status().to_string();
  EXPECT_EQ(down->at(0).shape(), (Shape{0}));
}

TEST(ConstantOfShapeKernel, OverflowingShapeIsAnError) {
  auto out = NodeTest("ConstantOfShape", 9).input(int64s({INT64_MAX, 2})).run();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << out.status().to_string();
  EXPECT_NE(out.status().message().find("[9223372036854775807,2] overflows"), std::string::npos)
      << out.status().message();
  // Fits in int64 but not in memory: refused before allocating.
  auto big = NodeTest("ConstantOfShape", 9).input(int64s({int64_t{1} << 31, int64_t{1} << 31})).run();
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("1 TiB"), std::string::npos) << big.status().message();
}

TEST(EyeLikeKernel, KAtTheInt64LimitsGivesZeros) {
  for (int64_t k : {INT64_MIN, INT64_MAX}) {
    auto out = NodeTest("EyeLike", 9).input(make_tensor<float>({2, 3}, std::vector<float>(6, 9.0f))).attr("k", k).run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_tensor_eq(out->at(0), make_tensor<float>({2, 3}, std::vector<float>(6, 0.0f)));
  }
}

}  // namespace
}  // namespace sy
