// Concat and Split kernels, checked against a reference loop over
// [outer, axis, inner] indices.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

std::vector<float> iota_floats(int64_t n, float start = 0.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

Tensor int64s(std::vector<int64_t> v) { return make_tensor<int64_t>(Shape{static_cast<int64_t>(v.size())}, v); }

// Reference Concat of row-major inputs along `axis`.
template <typename T>
std::vector<T> reference_concat(const std::vector<std::vector<T>>& inputs, const std::vector<Shape>& shapes,
                                size_t axis) {
  std::vector<T> out;
  const int64_t outer = shapes[0].size_to(axis);
  for (int64_t o = 0; o < outer; ++o)
    for (size_t j = 0; j < inputs.size(); ++j) {
      const int64_t block = shapes[j].size_from(axis);
      for (int64_t x = 0; x < block; ++x) out.push_back(inputs[j][static_cast<size_t>(o * block + x)]);
    }
  return out;
}

TEST(ConcatKernel, EveryAxisOf3DIncludingNegative) {
  const std::vector<float> a = iota_floats(2 * 3 * 4);
  for (int64_t axis = -3; axis < 3; ++axis) {
    const size_t a_norm = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    Shape sa{2, 3, 4};
    Shape sb = sa;
    sb[a_norm] = 2;
    const std::vector<float> b = iota_floats(sb.num_elements(), 100.0f);
    NodeTest t("Concat", 13);
    t.input(make_tensor<float>(sa, a)).input(make_tensor<float>(sb, b)).attr("axis", axis);
    auto out = t.run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    Shape expected_shape = sa;
    expected_shape[a_norm] += 2;
    EXPECT_EQ(out->at(0).shape(), expected_shape) << "axis " << axis;
    EXPECT_EQ(to_vector<float>(out->at(0)), reference_concat<float>({a, b}, {sa, sb}, a_norm)) << "axis " << axis;
    const ValueType& type = t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type;
    EXPECT_EQ(type.static_shape(), expected_shape);
  }
}

TEST(ConcatKernel, ThreeInputsWithAnEmptyOne) {
  auto out = NodeTest("Concat", 11)
                 .input(make_tensor<int32_t>({2, 1}, {1, 2}))
                 .input(make_tensor<int32_t>({2, 0}, {}))
                 .input(make_tensor<int32_t>({2, 2}, {3, 4, 5, 6}))
                 .attr("axis", 1)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int32_t>({2, 3}, {1, 3, 4, 2, 5, 6}));
}

TEST(ConcatKernel, Strings) {
  auto out =
      NodeTest("Concat", 13)
          .input(make_tensor<std::string>({2, 1}, {"a", "b"}))
          .input(make_tensor<std::string>({2, 2}, {"cc", "dd", "a string too long for small-string storage", ""}))
          .attr("axis", 1)
          .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<std::string>(
                                   {2, 3}, {"a", "cc", "dd", "b", "a string too long for small-string storage", ""}));
}

TEST(ConcatKernel, MismatchedDimsIsAnError) {
  auto out = NodeTest("Concat", 13)
                 .dynamic_shapes()
                 .input(make_tensor<float>({2, 3}, iota_floats(6)))
                 .input(make_tensor<float>({3, 3}, iota_floats(9)))
                 .attr("axis", 1)
                 .run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("input 1"), std::string::npos) << out.status().message();
}

TEST(ConcatKernel, BigKVCacheWithThreads) {
  // [B, H, S, D] past + new along S, the KV-cache pattern.
  const Shape past{2, 4, 300, 64};
  const Shape cur{2, 4, 7, 64};
  const std::vector<float> a = iota_floats(past.num_elements());
  const std::vector<float> b = iota_floats(cur.num_elements(), -1e6f);
  auto out = NodeTest("Concat", 13)
                 .input(make_tensor<float>(past, a))
                 .input(make_tensor<float>(cur, b))
                 .attr("axis", 2)
                 .threads(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{2, 4, 307, 64}));
  EXPECT_EQ(to_vector<float>(out->at(0)), reference_concat<float>({a, b}, {past, cur}, 2));
}

TEST(SplitKernel, VariablePartsFromInput) {
  NodeTest t("Split", 13);
  t.input(make_tensor<float>({2, 6}, iota_floats(12))).constant_input(int64s({2, 4})).attr("axis", 1).outputs(2);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({2, 2}, {0, 1, 6, 7}));
  expect_tensor_eq(out->at(1), make_tensor<float>({2, 4}, {2, 3, 4, 5, 8, 9, 10, 11}));
  EXPECT_EQ(t.graph().values[static_cast<size_t>(t.graph().outputs[1])].type.shape_string(), "[2,4]");
}

TEST(SplitKernel, SplitAttributeBeforeOpset13) {
  auto out = NodeTest("Split", 11)
                 .input(make_tensor<float>({6}, iota_floats(6)))
                 .attr("split", std::vector<int64_t>{1, 5})
                 .outputs(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({1}, {0}));
  expect_tensor_eq(out->at(1), make_tensor<float>({5}, {1, 2, 3, 4, 5}));
}

TEST(SplitKernel, EqualPartsAndUnevenNumOutputs) {
  auto eq = NodeTest("Split", 13).input(make_tensor<float>({6}, iota_floats(6))).outputs(3).run();
  ASSERT_TRUE(eq.ok()) << eq.status().to_string();
  expect_tensor_eq(eq->at(2), make_tensor<float>({2}, {4, 5}));

  // test_split_1d_uneven_split_opset18: 7 into 4 -> 2,2,2,1.
  auto uneven =
      NodeTest("Split", 18).input(make_tensor<float>({7}, iota_floats(7))).attr("num_outputs", 4).outputs(4).run();
  ASSERT_TRUE(uneven.ok()) << uneven.status().to_string();
  expect_tensor_eq(uneven->at(0), make_tensor<float>({2}, {0, 1}));
  expect_tensor_eq(uneven->at(2), make_tensor<float>({2}, {4, 5}));
  expect_tensor_eq(uneven->at(3), make_tensor<float>({1}, {6}));

  // 2-D, negative axis.
  auto two = NodeTest("Split", 18)
                 .input(make_tensor<float>({2, 5}, iota_floats(10)))
                 .attr("num_outputs", 2)
                 .attr("axis", -1)
                 .outputs(2)
                 .run();
  ASSERT_TRUE(two.ok()) << two.status().to_string();
  expect_tensor_eq(two->at(0), make_tensor<float>({2, 3}, {0, 1, 2, 5, 6, 7}));
  expect_tensor_eq(two->at(1), make_tensor<float>({2, 2}, {3, 4, 8, 9}));

  // Before 18 an uneven equal split is an error.
  auto bad = NodeTest("Split", 13).dynamic_shapes().input(make_tensor<float>({7}, iota_floats(7))).outputs(2).run();
  EXPECT_FALSE(bad.ok());
}

TEST(SplitKernel, ZeroSizeSplitsAndBadSums) {
  auto zero = NodeTest("Split", 18).input(make_tensor<float>({0}, {})).input(int64s({0, 0, 0})).outputs(3).run();
  ASSERT_TRUE(zero.ok()) << zero.status().to_string();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(zero->at(i).shape(), (Shape{0}));

  auto bad =
      NodeTest("Split", 13).input(make_tensor<float>({6}, iota_floats(6))).input(int64s({2, 3})).outputs(2).run();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("sum to 5"), std::string::npos) << bad.status().message();
}

TEST(SplitKernel, BigQKVSplitWithThreads) {
  // [B*S, 3*hidden] split into Q, K, V along the last axis.
  const int64_t rows = 512;
  const int64_t hidden = 256;
  const std::vector<float> in = iota_floats(rows * 3 * hidden);
  auto out = NodeTest("Split", 18)
                 .input(make_tensor<float>({rows, 3 * hidden}, in))
                 .attr("axis", 1)
                 .attr("num_outputs", 3)
                 .outputs(3)
                 .threads(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  for (int64_t p = 0; p < 3; ++p) {
    ASSERT_EQ(out->at(static_cast<size_t>(p)).shape(), (Shape{rows, hidden}));
    const float* d = out->at(static_cast<size_t>(p)).data<float>();
    int bad = 0;
    for (int64_t r = 0; r < rows && bad < 5; ++r)
      for (int64_t c = 0; c < hidden; ++c)
        if (d[r * hidden + c] != in[static_cast<size_t>(r * 3 * hidden + p * hidden + c)]) {
          ADD_FAILURE() << "part " << p << " at " << r << "," << c;
          ++bad;
          break;
        }
  }
}

// Empty inputs may have any dims, so the sum along the axis can overflow.
TEST(ConcatKernel, AxisSumThatOverflowsIsAnError) {
  const Tensor big = make_tensor<float>({0, int64_t{1} << 62}, {});
  auto out = NodeTest("Concat", 13).input(big).input(big).attr("axis", 1).dynamic_shapes().run();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << out.status().to_string();
  EXPECT_NE(out.status().message().find("add up to more than"), std::string::npos) << out.status().message();
  NodeTest inferred("Concat", 13);
  inferred.input(big).input(big).attr("axis", 1);
  auto in = inferred.run();
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.status().message().find("add up to more than"), std::string::npos) << in.status().message();
}

}  // namespace
}  // namespace sy
