// Slice, checked against a reference that walks the spec's clamping rules
// element by element.
#include <gtest/gtest.h>

#include <climits>
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

std::vector<float> iota_floats(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

Tensor int64s(std::vector<int64_t> v) { return make_tensor<int64_t>(Shape{static_cast<int64_t>(v.size())}, v); }

// The indices a 1-D slice visits, by the spec's pseudo-code.
std::vector<int64_t> slice_indices(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
  }
  std::vector<int64_t> v;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) v.push_back(i);
  return v;
}

TEST(SliceKernel, ReferenceOverManyBoundsOn2D) {
  // 2-D input [5, 7]; axis 1 sliced with many (start, end, step).
  const int64_t rows = 5;
  const int64_t cols = 7;
  const std::vector<float> in = iota_floats(rows * cols);
  const int64_t bounds[] = {INT64_MIN, -100, -8, -7, -3, -1, 0, 1, 3, 6, 7, 9, INT64_MAX};
  const int64_t steps[] = {1, 2, 3, -1, -2, -5};
  int cases = 0;
  for (int64_t b : bounds)
    for (int64_t e : bounds)
      for (int64_t st : steps) {
        auto out = NodeTest("Slice", 13)
                       .input(make_tensor<float>({rows, cols}, in))
                       .input(int64s({b}))
                       .input(int64s({e}))
                       .input(int64s({1}))
                       .input(int64s({st}))
                       .run();
        ASSERT_TRUE(out.ok()) << out.status().to_string();
        const std::vector<int64_t> idx = slice_indices(cols, b, e, st);
        std::vector<float> expected;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c : idx) expected.push_back(in[static_cast<size_t>(r * cols + c)]);
        ASSERT_EQ(out->at(0).shape(), (Shape{rows, static_cast<int64_t>(idx.size())}))
            << "start " << b << " end " << e << " step " << st;
        ASSERT_EQ(to_vector<float>(out->at(0)), expected) << "start " << b << " end " << e << " step " << st;
        ++cases;
      }
  EXPECT_EQ(cases, 13 * 13 * 6);
}

TEST(SliceKernel, SpecExamples) {
  // test_slice: x[0:3, 0:10] of [20,10,5].
  const std::vector<float> in = iota_floats(20 * 10 * 5);
  NodeTest t("Slice", 13);
  t.input(make_tensor<float>({20, 10, 5}, in))
      .constant_input(int64s({0, 0}))
      .constant_input(int64s({3, 10}))
      .constant_input(int64s({0, 1}))
      .constant_input(int64s({1, 1}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{3, 10, 5}));
  EXPECT_EQ(to_vector<float>(out->at(0)), std::vector<float>(in.begin(), in.begin() + 150));
  EXPECT_EQ(t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type.shape_string(), "[3,10,5]");

  // test_slice_neg_steps: x[20:0:-1, 10:-1:-3, 5:0:-1]... with starts [20,10,4], ends [0,0,1], steps [-1,-3,-2].
  NodeTest n("Slice", 13);
  n.input(make_tensor<float>({20, 10, 5}, in))
      .constant_input(int64s({20, 10, 4}))
      .constant_input(int64s({0, 0, 1}))
      .constant_input(int64s({0, 1, 2}))
      .constant_input(int64s({-1, -3, -2}));
  auto neg = n.run();
  ASSERT_TRUE(neg.ok()) << neg.status().to_string();
  EXPECT_EQ(neg->at(0).shape(), (Shape{19, 3, 2}));
  EXPECT_EQ(n.graph().values[static_cast<size_t>(n.graph().outputs[0])].type.shape_string(), "[19,3,2]");
  const float* d = neg->at(0).data<float>();
  EXPECT_EQ(d[0], in[19 * 50 + 9 * 5 + 4]);
  EXPECT_EQ(d[1], in[19 * 50 + 9 * 5 + 2]);
  EXPECT_EQ(d[2], in[19 * 50 + 6 * 5 + 4]);

  // test_slice_start_out_of_bounds: start 1000 on axis 1 -> empty.
  auto empty = NodeTest("Slice", 13)
                   .input(make_tensor<float>({20, 10, 5}, in))
                   .input(int64s({1000}))
                   .input(int64s({1000}))
                   .input(int64s({1}))
                   .input(int64s({1}))
                   .run();
  ASSERT_TRUE(empty.ok()) << empty.status().to_string();
  EXPECT_EQ(empty->at(0).shape(), (Shape{20, 0, 5}));
}

TEST(SliceKernel, DefaultAxesNegativeAxesAndInt32) {
  auto out = NodeTest("Slice", 13)
                 .input(make_tensor<float>({3, 4}, iota_floats(12)))
                 .input(make_tensor<int32_t>({2}, {1, -3}))
                 .input(make_tensor<int32_t>({2}, {INT32_MAX, -1}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({2, 2}, {5, 6, 9, 10}));

  auto neg_axis = NodeTest("Slice", 13)
                      .input(make_tensor<float>({3, 4}, iota_floats(12)))
                      .input(int64s({-2}))
                      .input(int64s({INT64_MAX}))
                      .input(int64s({-1}))
                      .run();
  ASSERT_TRUE(neg_axis.ok()) << neg_axis.status().to_string();
  expect_tensor_eq(neg_axis->at(0), make_tensor<float>({3, 2}, {2, 3, 6, 7, 10, 11}));
}

TEST(SliceKernel, Opset1Attributes) {
  auto out = NodeTest("Slice", 9)
                 .input(make_tensor<float>({3, 4}, iota_floats(12)))
                 .attr("starts", std::vector<int64_t>{1})
                 .attr("ends", std::vector<int64_t>{-1})
                 .attr("axes", std::vector<int64_t>{0})
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({1, 4}, {4, 5, 6, 7}));
}

TEST(SliceKernel, ErrorsForZeroStepAndRepeatedAxis) {
  auto zero = NodeTest("Slice", 13)
                  .input(make_tensor<float>({4}, iota_floats(4)))
                  .input(int64s({0}))
                  .input(int64s({4}))
                  .input(int64s({0}))
                  .input(int64s({0}))
                  .run();
  EXPECT_FALSE(zero.ok());
  auto repeated = NodeTest("Slice", 13)
                      .input(make_tensor<float>({4, 4}, iota_floats(16)))
                      .input(int64s({0, 1}))
                      .input(int64s({4, 3}))
                      .input(int64s({1, -1}))
                      .run();
  ASSERT_FALSE(repeated.ok());
  EXPECT_NE(repeated.status().message().find("repeated"), std::string::npos) << repeated.status().message();
}

TEST(SliceKernel, StringsAndReverse) {
  auto out = NodeTest("Slice", 13)
                 .input(make_tensor<std::string>({4}, {"a", "b", "c", "a long string that is not inline at all"}))
                 .input(int64s({-1}))
                 .input(int64s({INT64_MIN}))
                 .input(int64s({0}))
                 .input(int64s({-1}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0),
                   make_tensor<std::string>({4}, {"a long string that is not inline at all", "c", "b", "a"}));
}

TEST(SliceKernel, BigSequenceSliceWithThreads) {
  // [B, S, H] activations, x[:, 1:-1, ::2].
  const int64_t b = 4, s = 130, h = 512;
  const std::vector<float> in = iota_floats(b * s * h);
  auto out = NodeTest("Slice", 13)
                 .input(make_tensor<float>({b, s, h}, in))
                 .input(int64s({1, 0}))
                 .input(int64s({-1, INT64_MAX}))
                 .input(int64s({1, 2}))
                 .input(int64s({1, 2}))
                 .threads(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->at(0).shape(), (Shape{b, s - 2, h / 2}));
  std::vector<float> expected;
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 1; j < s - 1; ++j)
      for (int64_t k = 0; k < h; k += 2) expected.push_back(in[static_cast<size_t>((i * s + j) * h + k)]);
  EXPECT_EQ(to_vector<float>(out->at(0)), expected);
}

// Starts, ends and steps at the int64 limits, against numpy (values printed
// by numpy 1.x for np.arange(7)[start:end:step] and np.arange(12).reshape(3,
// 4)[...]). Once the spec's clamping is done in int64, ceil((end - start) /
// step) used to overflow for steps near INT64_MAX and -INT64_MIN, giving a
// negative dimension or a wrong count.
TEST(SliceKernel, StepsAndBoundsAtTheInt64LimitsMatchNumpy) {
  const int64_t kMax = INT64_MAX;
  const int64_t kMin = INT64_MIN;
  struct Case {
    int64_t start, end, step;
    std::vector<float> expected;
  };
  const Case cases[] = {
      {0, kMax, kMax, {0}},
      {kMax, kMin, kMin, {6}},
      {-1, kMin, kMin, {6}},
      {kMin, kMax, kMax, {0}},
      {1, kMax, kMax, {1}},
      {5, kMin, kMin, {5}},
      {kMax, kMin, -kMax, {6}},
      {kMin + 1, kMax, -kMax, {}},
      {kMin, kMax, 1, {0, 1, 2, 3, 4, 5, 6}},
      {kMax, kMin, -1, {6, 5, 4, 3, 2, 1, 0}},
      {kMin, kMin, 1, {}},
      {kMax, kMax, -1, {}},
  };
  for (const Case& c : cases) {
    // Constant inputs, so shape inference computes the output shape too.
    NodeTest t("Slice", 13);
    t.input(make_tensor<float>({7}, iota_floats(7)))
        .constant_input(int64s({c.start}))
        .constant_input(int64s({c.end}))
        .constant_input(int64s({0}))
        .constant_input(int64s({c.step}));
    auto out = t.run();
    ASSERT_TRUE(out.ok()) << out.status().to_string() << " start " << c.start << " end " << c.end << " step "
                          << c.step;
    const std::string want = "[" + std::to_string(c.expected.size()) + "]";
    EXPECT_EQ(t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type.shape_string(), want)
        << "start " << c.start << " end " << c.end << " step " << c.step;
    EXPECT_EQ(to_vector<float>(out->at(0)), c.expected) << "start " << c.start << " end " << c.end << " step "
                                                        << c.step;
  }
}

TEST(SliceKernel, ExtremeStepsOn2DMatchNumpy) {
  const int64_t kMax = INT64_MAX;
  const int64_t kMin = INT64_MIN;
  auto run = [&](std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> steps) {
    return NodeTest("Slice", 13)
        .input(make_tensor<float>({3, 4}, iota_floats(12)))
        .input(int64s(starts))
        .input(int64s(ends))
        .input(int64s({0, 1}))
        .input(int64s(steps))
        .run();
  };
  // x[M:m:m, m:M:M] == [[8]]
  auto a = run({kMax, kMin}, {kMin, kMax}, {kMin, kMax});
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  expect_tensor_eq(a->at(0), make_tensor<float>({1, 1}, {8}));
  // x[m:M:M, M:m:m] == [[3]]
  auto b = run({kMin, kMax}, {kMax, kMin}, {kMax, kMin});
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  expect_tensor_eq(b->at(0), make_tensor<float>({1, 1}, {3}));
  // x[::-1, 1:M:2] == [[9,11],[5,7],[1,3]]
  auto c = run({kMax, 1}, {kMin, kMax}, {-1, 2});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  expect_tensor_eq(c->at(0), make_tensor<float>({3, 2}, {9, 11, 5, 7, 1, 3}));
}

}  // namespace
}  // namespace sy
