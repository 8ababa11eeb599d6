// Expand and Tile against hand-computed values and reference loops.
#include <gtest/gtest.h>

#include <numeric>
#include <climits>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

std::vector<float> iota_floats(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

Tensor int64s(std::vector<int64_t> v) { return make_tensor<int64_t>(Shape{static_cast<int64_t>(v.size())}, v); }

TEST(ExpandKernel, SpecExamples) {
  // test_expand_dim_changed: [3,1] to [2,1,6].
  NodeTest t("Expand", 13);
  t.input(make_tensor<float>({3, 1}, {1, 2, 3})).constant_input(int64s({2, 1, 6}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  std::vector<float> expected;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 6; ++j) expected.push_back(static_cast<float>(i + 1));
  expect_tensor_eq(out->at(0), make_tensor<float>({2, 3, 6}, expected));
  EXPECT_EQ(t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type.shape_string(), "[2,3,6]");

  // test_expand_dim_unchanged: [3,1] to [3,4].
  auto same = NodeTest("Expand", 8).input(make_tensor<float>({3, 1}, {1, 2, 3})).input(int64s({3, 4})).run();
  ASSERT_TRUE(same.ok()) << same.status().to_string();
  expect_tensor_eq(same->at(0), make_tensor<float>({3, 4}, {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
}

TEST(ExpandKernel, ShapeSmallerThanInputAndBidirectional) {
  // Shape [2,1] against [1,3]: both broadcast, result [2,3].
  auto out = NodeTest("Expand", 13).input(make_tensor<int32_t>({1, 3}, {7, 8, 9})).input(int64s({2, 1})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int32_t>({2, 3}, {7, 8, 9, 7, 8, 9}));
  // A shape of lower rank keeps the input's dims.
  auto low = NodeTest("Expand", 13).input(make_tensor<float>({2, 3}, iota_floats(6))).input(int64s({3})).run();
  ASSERT_TRUE(low.ok()) << low.status().to_string();
  expect_tensor_eq(low->at(0), make_tensor<float>({2, 3}, iota_floats(6)));
  auto bad = NodeTest("Expand", 13).input(make_tensor<float>({2, 3}, iota_floats(6))).input(int64s({4})).run();
  EXPECT_FALSE(bad.ok());
}

TEST(ExpandKernel, StringsAndBigWithThreads) {
  auto s = NodeTest("Expand", 13)
               .input(make_tensor<std::string>({2, 1}, {"x", "a long string kept on the heap"}))
               .input(int64s({2, 2}))
               .run();
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  expect_tensor_eq(s->at(0), make_tensor<std::string>({2, 2}, {"x", "x", "a long string kept on the heap",
                                                               "a long string kept on the heap"}));

  // An attention mask [B,1,1,S] expanded to [B,H,S,S].
  const int64_t b = 2, h = 4, seq = 96;
  const std::vector<float> mask = iota_floats(b * seq);
  auto big = NodeTest("Expand", 13)
                 .input(make_tensor<float>({b, 1, 1, seq}, mask))
                 .input(int64s({b, h, seq, seq}))
                 .threads(2)
                 .run();
  ASSERT_TRUE(big.ok()) << big.status().to_string();
  std::vector<float> expected;
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < h; ++j)
      for (int64_t q = 0; q < seq; ++q)
        for (int64_t k = 0; k < seq; ++k) expected.push_back(mask[static_cast<size_t>(i * seq + k)]);
  EXPECT_EQ(to_vector<float>(big->at(0)), expected);
}

TEST(TileKernel, RepeatsEveryAxis) {
  NodeTest t("Tile", 13);
  t.input(make_tensor<float>({2, 2}, {0, 1, 2, 3})).constant_input(int64s({2, 3}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(
      out->at(0), make_tensor<float>({4, 6}, {0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3}));
  EXPECT_EQ(t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type.shape_string(), "[4,6]");
}

TEST(TileKernel, Reference3DAndZeroRepeat) {
  const Shape s{2, 3, 4};
  const std::vector<float> in = iota_floats(24);
  const std::vector<int64_t> reps = {3, 1, 2};
  auto out = NodeTest("Tile", 6).input(make_tensor<float>(s, in)).input(int64s(reps)).threads(2).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  std::vector<float> expected;
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 8; ++k) expected.push_back(in[static_cast<size_t>(((i % 2) * 3 + j) * 4 + k % 4)]);
  EXPECT_EQ(out->at(0).shape(), (Shape{6, 3, 8}));
  EXPECT_EQ(to_vector<float>(out->at(0)), expected);

  auto zero = NodeTest("Tile", 13).input(make_tensor<float>(s, in)).input(int64s({1, 0, 1})).run();
  ASSERT_TRUE(zero.ok()) << zero.status().to_string();
  EXPECT_EQ(zero->at(0).shape(), (Shape{2, 0, 4}));
  EXPECT_FALSE(NodeTest("Tile", 13).input(make_tensor<float>(s, in)).input(int64s({1, 2})).run().ok());
}

// Sizes from the model or an input whose product overflows int64: an
// InvalidArgument naming the op, never a wrapped (small, valid-looking)
// shape. 3 * 6148914691236517206 wraps to 2, which used to give a 2-element
// output read with garbage strides.
TEST(TileKernel, RepeatsThatOverflowAreAnError) {
  const Tensor in = make_tensor<float>({3}, {1, 2, 3});
  auto wraps = NodeTest("Tile", 13).input(in).input(int64s({6148914691236517206})).run();
  ASSERT_FALSE(wraps.ok());
  EXPECT_EQ(wraps.status().code(), StatusCode::kInvalidArgument) << wraps.status().to_string();
  EXPECT_NE(wraps.status().message().find("Tile"), std::string::npos) << wraps.status().message();
  EXPECT_NE(wraps.status().message().find("6148914691236517206"), std::string::npos) << wraps.status().message();
  // Each dim fits, the element count does not: [2^32, 2^32].
  auto count = NodeTest("Tile", 13)
                   .input(make_tensor<float>({2, 2}, {1, 2, 3, 4}))
                   .input(int64s({int64_t{1} << 31, int64_t{1} << 31}))
                   .run();
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(count.status().code(), StatusCode::kInvalidArgument) << count.status().to_string();
  EXPECT_NE(count.status().message().find("overflows"), std::string::npos) << count.status().message();
  // Constant repeats: shape inference refuses the model.
  NodeTest constant("Tile", 13);
  constant.input(in).constant_input(int64s({INT64_MAX}));
  auto c = constant.run();
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("overflows int64"), std::string::npos) << c.status().message();
}

TEST(ExpandKernel, ShapesThatOverflowAreAnError) {
  const Tensor in = make_tensor<float>({1, 1}, {5});
  auto out = NodeTest("Expand", 13).input(in).input(int64s({int64_t{1} << 62, 4})).run();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << out.status().to_string();
  EXPECT_NE(out.status().message().find("[4611686018427387904,4] overflows"), std::string::npos)
      << out.status().message();
  // Empty results may have any dims whose non-zero product fits (numpy's
  // broadcast_to(x, (2**63 - 1, 0)) is fine).
  auto empty = NodeTest("Expand", 13).input(in).input(int64s({INT64_MAX, 0})).run();
  ASSERT_TRUE(empty.ok()) << empty.status().to_string();
  EXPECT_EQ(empty->at(0).shape(), (Shape{INT64_MAX, 0}));
}

}  // namespace
}  // namespace sy
