// OneHot, Compress, NonZero, ReverseSequence and BitCast against the spec's
// examples, hand-computed values and reference loops.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::make_bool_tensor;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

std::string output_shape(const NodeTest& t) {
  return t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type.shape_string();
}

// ---- OneHot -----------------------------------------------------------------------

TEST(OneHotKernel, DefaultAxisWithNegativeAndOutOfRangeIndices) {
  NodeTest t("OneHot", 11);
  t.input(make_tensor<int64_t>({4}, {0, -1, 3, -5}))
      .constant_input(make_tensor<float>({}, {4}))
      .input(make_tensor<int32_t>({2}, {2, 5}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // -1 is 3; 3 is 3; -5 is out of range: all off.
  expect_tensor_eq(out->at(0), make_tensor<int32_t>({4, 4}, {5, 2, 2, 2,  //
                                                             2, 2, 2, 5,  //
                                                             2, 2, 2, 5,  //
                                                             2, 2, 2, 2}));
  EXPECT_EQ(output_shape(t), "[4,4]");
}

TEST(OneHotKernel, MiddleAxisWithFloatIndicesMatchesReference) {
  // indices [2,3] as floats (truncated), axis 1, depth 5 given as int64.
  const std::vector<float> idx = {1.0f, 4.9f, 0.0f, 2.0f, -2.0f, 7.0f};
  auto out = NodeTest("OneHot", 11)
                 .input(make_tensor<float>({2, 3}, idx))
                 .input(make_tensor<int64_t>({1}, {5}))
                 .input(make_tensor<float>({2}, {0.5f, 9.0f}))
                 .attr("axis", -2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  std::vector<float> expected(2 * 5 * 3, 0.5f);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t k = 0; k < 3; ++k) {
      int64_t v = static_cast<int64_t>(idx[static_cast<size_t>(i * 3 + k)]);
      if (v < 0) v += 5;
      if (v >= 0 && v < 5) expected[static_cast<size_t>((i * 5 + v) * 3 + k)] = 9.0f;
    }
  expect_tensor_eq(out->at(0), make_tensor<float>({2, 5, 3}, expected));
}

TEST(OneHotKernel, StringValuesAndBadAxis) {
  // OneHot-9: -1 is out of range rather than the last class.
  auto s = NodeTest("OneHot", 9)
               .input(make_tensor<int32_t>({3}, {1, 0, -1}))
               .input(make_tensor<int32_t>({}, {2}))
               .input(make_tensor<std::string>({2}, {"off", "on"}))
               .attr("axis", 0)
               .run();
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  expect_tensor_eq(s->at(0), make_tensor<std::string>({2, 3}, {"off", "on", "off", "on", "off", "off"}));
  auto bad = NodeTest("OneHot", 11)
                 .input(make_tensor<int64_t>({2}, {1, 0}))
                 .input(make_tensor<int64_t>({}, {2}))
                 .input(make_tensor<float>({2}, {0, 1}))
                 .attr("axis", 2)
                 .run();
  EXPECT_FALSE(bad.ok());
}

// ---- Compress -------------------------------------------------------------------

TEST(CompressKernel, AxesFlattenedAndShortCondition) {
  const std::vector<float> data = {1, 2, 3, 4, 5, 6};  // [3,2]
  auto a0 = NodeTest("Compress", 11)
                .input(make_tensor<float>({3, 2}, data))
                .input(make_bool_tensor({3}, {0, 1, 1}))
                .attr("axis", 0)
                .run();
  ASSERT_TRUE(a0.ok()) << a0.status().to_string();
  expect_tensor_eq(a0->at(0), make_tensor<float>({2, 2}, {3, 4, 5, 6}));
  auto neg = NodeTest("Compress", 11)
                 .input(make_tensor<float>({3, 2}, data))
                 .input(make_bool_tensor({1}, {0}))
                 .attr("axis", -1)
                 .run();
  ASSERT_TRUE(neg.ok()) << neg.status().to_string();
  EXPECT_EQ(neg->at(0).shape(), (Shape{3, 0}));
  NodeTest flat("Compress", 9);
  flat.input(make_tensor<float>({3, 2}, data)).constant_input(make_bool_tensor({5}, {0, 1, 0, 0, 1}));
  auto f = flat.run();
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  expect_tensor_eq(f->at(0), make_tensor<float>({2}, {2, 5}));
  EXPECT_EQ(output_shape(flat), "[2]");
  // A true entry past the end of the axis is an error.
  auto beyond = NodeTest("Compress", 11)
                    .input(make_tensor<float>({3, 2}, data))
                    .input(make_bool_tensor({3}, {0, 0, 1}))
                    .attr("axis", 1)
                    .run();
  EXPECT_FALSE(beyond.ok());
}

TEST(CompressKernel, MiddleAxisStringsMatchReference) {
  std::vector<std::string> data;
  for (int i = 0; i < 2 * 4 * 3; ++i) data.push_back("s" + std::to_string(i) + std::string(20, 'x'));
  const std::vector<int> cond = {1, 0, 1, 1};
  auto out = NodeTest("Compress", 11)
                 .input(make_tensor<std::string>({2, 4, 3}, data))
                 .input(make_bool_tensor({4}, cond))
                 .attr("axis", 1)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  std::vector<std::string> expected;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 4; ++b)
      if (cond[static_cast<size_t>(b)])
        for (int c = 0; c < 3; ++c) expected.push_back(data[static_cast<size_t>((a * 4 + b) * 3 + c)]);
  expect_tensor_eq(out->at(0), make_tensor<std::string>({2, 3, 3}, expected));
}

// ---- NonZero --------------------------------------------------------------------

TEST(NonZeroKernel, SpecExampleAndFloats) {
  auto b = NodeTest("NonZero", 13).input(make_bool_tensor({2, 2}, {1, 0, 1, 1})).run();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  expect_tensor_eq(b->at(0), make_tensor<int64_t>({2, 3}, {0, 1, 1, 0, 0, 1}));
  // -0.0 is zero; NaN is not.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto f = NodeTest("NonZero", 9).input(make_tensor<float>({5}, {0.0f, -0.0f, 2.5f, nan, 0.0f})).run();
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  expect_tensor_eq(f->at(0), make_tensor<int64_t>({1, 2}, {2, 3}));
  auto none = NodeTest("NonZero", 13).input(make_tensor<int32_t>({2, 3}, {0, 0, 0, 0, 0, 0})).run();
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  EXPECT_EQ(none->at(0).shape(), (Shape{2, 0}));
}

TEST(NonZeroKernel, BigInputWithThreadsMatchesReference) {
  const int64_t d0 = 7, d1 = 300, d2 = 500;
  std::vector<int8_t> x(static_cast<size_t>(d0 * d1 * d2));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>((i * 2654435761u >> 7) % 5 == 0 ? 3 : 0);
  auto out = NodeTest("NonZero", 13).input(make_tensor<int8_t>({d0, d1, d2}, x)).threads(2).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  std::vector<int64_t> rows[3];
  for (int64_t i = 0; i < d0 * d1 * d2; ++i)
    if (x[static_cast<size_t>(i)] != 0) {
      rows[0].push_back(i / (d1 * d2));
      rows[1].push_back(i / d2 % d1);
      rows[2].push_back(i % d2);
    }
  std::vector<int64_t> expected;
  for (auto& r : rows) expected.insert(expected.end(), r.begin(), r.end());
  ASSERT_EQ(out->at(0).shape(), (Shape{3, static_cast<int64_t>(rows[0].size())}));
  EXPECT_EQ(to_vector<int64_t>(out->at(0)), expected);
}

// ---- ReverseSequence ------------------------------------------------------------

TEST(ReverseSequenceKernel, SpecExamples) {
  // Example 1: time axis 0, batch axis 1.
  auto t = NodeTest("ReverseSequence", 10)
               .input(make_tensor<float>({4, 4}, {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15}))
               .input(make_tensor<int64_t>({4}, {4, 3, 2, 1}))
               .attr("time_axis", 0)
               .attr("batch_axis", 1)
               .run();
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  expect_tensor_eq(t->at(0), make_tensor<float>({4, 4}, {3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15}));
  // Example 2: batch axis 0, time axis 1, with an inner dim of 2.
  std::vector<int32_t> data(16 * 2);
  std::iota(data.begin(), data.end(), 0);
  auto b = NodeTest("ReverseSequence", 10)
               .input(make_tensor<int32_t>({4, 4, 2}, data))
               .input(make_tensor<int64_t>({4}, {1, 2, 3, 0}))
               .attr("time_axis", 1)
               .attr("batch_axis", 0)
               .run();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  std::vector<int32_t> expected;
  const int64_t lens[] = {1, 2, 3, 0};
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t s = 0; s < 4; ++s) {
      const int64_t from = s < lens[i] ? lens[i] - 1 - s : s;
      for (int64_t d = 0; d < 2; ++d) expected.push_back(data[static_cast<size_t>((i * 4 + from) * 2 + d)]);
    }
  expect_tensor_eq(b->at(0), make_tensor<int32_t>({4, 4, 2}, expected));
}

TEST(ReverseSequenceKernel, Errors) {
  auto too_long = NodeTest("ReverseSequence", 10)
                      .input(make_tensor<float>({2, 2}, {1, 2, 3, 4}))
                      .input(make_tensor<int64_t>({2}, {3, 1}))
                      .run();
  EXPECT_FALSE(too_long.ok());
  auto same_axes = NodeTest("ReverseSequence", 10)
                       .input(make_tensor<float>({2, 2}, {1, 2, 3, 4}))
                       .input(make_tensor<int64_t>({2}, {1, 1}))
                       .attr("time_axis", 1)
                       .run();
  EXPECT_FALSE(same_axes.ok());
}

// ---- BitCast ----------------------------------------------------------------------

TEST(BitCastKernel, ReinterpretsBits) {
  NodeTest t("BitCast", 26);
  t.input(make_tensor<float>({3}, {1.0f, -2.5f, 3.75f})).attr("to", static_cast<int64_t>(DataType::kInt32));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int32_t>({3}, {1065353216, -1071644672, 1081081856}));
  EXPECT_EQ(output_shape(t), "[3]");
  auto u = NodeTest("BitCast", 26)
               .input(make_tensor<uint16_t>({3}, {1, 32768, 65535}))
               .attr("to", static_cast<int64_t>(DataType::kInt16))
               .run();
  ASSERT_TRUE(u.ok()) << u.status().to_string();
  expect_tensor_eq(u->at(0), make_tensor<int16_t>({3}, {1, -32768, -1}));
  auto h = NodeTest("BitCast", 26)
               .input(make_tensor<uint16_t>({1}, {0x3c00}))
               .attr("to", static_cast<int64_t>(DataType::kFloat16))
               .run();
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_EQ(float16_to_float(h->at(0).data<Float16>()[0].bits), 1.0f);
}

TEST(BitCastKernel, WidthMismatchIsAnError) {
  auto out = NodeTest("BitCast", 26)
                 .input(make_tensor<float>({1}, {1}))
                 .attr("to", static_cast<int64_t>(DataType::kInt64))
                 .run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("32 bits"), std::string::npos) << out.status().message();
}

}  // namespace
}  // namespace sy
