// TopK against a reference that stable-sorts each row: stable sorting keeps
// equal values in index order, which is the tie rule the spec asks for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

struct TopKResult {
  std::vector<float> values;
  std::vector<int64_t> indices;
};

// Reference over a row-major [outer, dim, inner] view of `x`.
TopKResult reference_topk(const std::vector<float>& x, const std::vector<int64_t>& shape, int64_t axis, int64_t k,
                          bool largest) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= shape[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < shape.size(); ++i) inner *= shape[i];
  const int64_t dim = shape[static_cast<size_t>(axis)];
  TopKResult r;
  r.values.resize(static_cast<size_t>(outer * k * inner));
  r.indices.resize(r.values.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<std::pair<float, int64_t>> row;
      for (int64_t j = 0; j < dim; ++j) row.emplace_back(x[static_cast<size_t>((o * dim + j) * inner + i)], j);
      std::stable_sort(row.begin(), row.end(), [&](const auto& a, const auto& b) {
        return largest ? a.first > b.first : a.first < b.first;
      });
      for (int64_t j = 0; j < k; ++j) {
        const auto at = static_cast<size_t>((o * k + j) * inner + i);
        r.values[at] = row[static_cast<size_t>(j)].first;
        r.indices[at] = row[static_cast<size_t>(j)].second;
      }
    }
  return r;
}

std::vector<float> random_small_ints(size_t n, unsigned seed, int range) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-range, range);
  std::vector<float> v(n);
  for (float& f : v) f = static_cast<float>(d(gen));
  return v;
}

TEST(TopKKernel, MatchesStableSortOnEveryAxisWithTies) {
  const std::vector<int64_t> shape = {3, 7, 5};
  const std::vector<float> x = random_small_ints(3 * 7 * 5, 1, 3);  // few values: many ties
  for (int64_t axis = 0; axis < 3; ++axis)
    for (int largest = 0; largest <= 1; ++largest)
      for (int64_t k = 0; k <= shape[static_cast<size_t>(axis)]; ++k) {
        auto out = NodeTest("TopK", 11)
                       .input(make_tensor<float>(Shape(shape), x))
                       .input(make_tensor<int64_t>({1}, {k}))
                       .attr("axis", axis - 3)  // negative axes too
                       .attr("largest", largest)
                       .outputs(2)
                       .run();
        ASSERT_TRUE(out.ok()) << out.status().to_string();
        const TopKResult ref = reference_topk(x, shape, axis, k, largest != 0);
        EXPECT_EQ(to_vector<float>(out->at(0)), ref.values) << "axis " << axis << " k " << k << " largest " << largest;
        EXPECT_EQ(to_vector<int64_t>(out->at(1)), ref.indices)
            << "axis " << axis << " k " << k << " largest " << largest;
      }
}

TEST(TopKKernel, LongRowsOnManyThreadsUsePartialAndFullSelection) {
  const std::vector<int64_t> shape = {16, 3000};
  const std::vector<float> x = random_small_ints(16 * 3000, 2, 500);
  for (int64_t k : {int64_t{1}, int64_t{5}, int64_t{100}, int64_t{2999}, int64_t{3000}}) {
    auto out = NodeTest("TopK", 11)
                   .input(make_tensor<float>(Shape(shape), x))
                   .input(make_tensor<int64_t>({1}, {k}))
                   .threads(4)
                   .outputs(2)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    const TopKResult ref = reference_topk(x, shape, 1, k, true);
    EXPECT_EQ(to_vector<float>(out->at(0)), ref.values) << "k " << k;
    EXPECT_EQ(to_vector<int64_t>(out->at(1)), ref.indices) << "k " << k;
  }
}

TEST(TopKKernel, UnsortedReturnsTheSameSet) {
  const std::vector<int64_t> shape = {4, 200};
  const std::vector<float> x = random_small_ints(800, 3, 20);
  auto out = NodeTest("TopK", 11)
                 .input(make_tensor<float>(Shape(shape), x))
                 .input(make_tensor<int64_t>({1}, {37}))
                 .attr("sorted", 0)
                 .outputs(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const TopKResult ref = reference_topk(x, shape, 1, 37, true);
  const auto values = to_vector<float>(out->at(0));
  const auto indices = to_vector<int64_t>(out->at(1));
  for (size_t row = 0; row < 4; ++row) {
    std::vector<int64_t> got(indices.begin() + static_cast<long>(row * 37), indices.begin() + static_cast<long>(row * 37 + 37));
    std::vector<int64_t> want(ref.indices.begin() + static_cast<long>(row * 37),
                              ref.indices.begin() + static_cast<long>(row * 37 + 37));
    for (size_t j = 0; j < 37; ++j)
      EXPECT_EQ(values[row * 37 + j], x[row * 200 + static_cast<size_t>(got[j])]);
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want) << "row " << row;
  }
}

TEST(TopKKernel, Opset1TakesKFromTheAttribute) {
  auto out = NodeTest("TopK", 1)
                 .input(make_tensor<float>({2, 4}, {1, 4, 2, 3, 8, 5, 7, 6}))
                 .attr("k", int64_t{2})
                 .outputs(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({2, 2}, {4, 3, 8, 7}));
  expect_tensor_eq(out->at(1), make_tensor<int64_t>({2, 2}, {1, 3, 0, 2}));
}

TEST(TopKKernel, IntegerAndHalfTypes) {
  auto u = NodeTest("TopK", 11)
               .input(make_tensor<uint64_t>({5}, {3, ~uint64_t{0}, 0, 7, 7}))
               .input(make_tensor<int64_t>({1}, {3}))
               .outputs(2)
               .run();
  ASSERT_TRUE(u.ok()) << u.status().to_string();
  expect_tensor_eq(u->at(0), make_tensor<uint64_t>({3}, {~uint64_t{0}, 7, 7}));
  expect_tensor_eq(u->at(1), make_tensor<int64_t>({3}, {1, 3, 4}));

  auto i8 = NodeTest("TopK", 11)
                .input(make_tensor<int8_t>({4}, {-128, 127, 0, -1}))
                .input(make_tensor<int64_t>({1}, {2}))
                .attr("largest", 0)
                .outputs(2)
                .run();
  ASSERT_TRUE(i8.ok()) << i8.status().to_string();
  expect_tensor_eq(i8->at(0), make_tensor<int8_t>({2}, {-128, -1}));
  expect_tensor_eq(i8->at(1), make_tensor<int64_t>({2}, {0, 3}));

  std::vector<Float16> h;
  for (float f : {0.5f, -2.0f, 3.25f, 1.0f}) h.push_back(Float16{float_to_float16(f)});
  auto half = NodeTest("TopK", 11)
                  .input(make_tensor<Float16>({4}, h))
                  .input(make_tensor<int64_t>({1}, {2}))
                  .outputs(2)
                  .run();
  ASSERT_TRUE(half.ok()) << half.status().to_string();
  const Float16* hv = half->at(0).data<Float16>();
  EXPECT_EQ(float16_to_float(hv[0].bits), 3.25f);
  EXPECT_EQ(float16_to_float(hv[1].bits), 1.0f);
  expect_tensor_eq(half->at(1), make_tensor<int64_t>({2}, {2, 3}));

  std::vector<BFloat16> b;
  for (float f : {0.5f, -2.0f, 3.25f, 1.0f}) b.push_back(BFloat16{float_to_bfloat16(f)});
  auto bf = NodeTest("TopK", 24)
                .input(make_tensor<BFloat16>({4}, b))
                .input(make_tensor<int64_t>({1}, {1}))
                .attr("largest", 0)
                .outputs(2)
                .run();
  ASSERT_TRUE(bf.ok()) << bf.status().to_string();
  EXPECT_EQ(bfloat16_to_float(bf->at(0).data<BFloat16>()[0].bits), -2.0f);
  expect_tensor_eq(bf->at(1), make_tensor<int64_t>({1}, {1}));
}

TEST(TopKKernel, NaNRanksAboveEveryNumber) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto largest = NodeTest("TopK", 11)
                     .input(make_tensor<float>({4}, {1, nan, 5, -1}))
                     .input(make_tensor<int64_t>({1}, {2}))
                     .outputs(2)
                     .run();
  ASSERT_TRUE(largest.ok()) << largest.status().to_string();
  EXPECT_TRUE(std::isnan(largest->at(0).data<float>()[0]));
  EXPECT_EQ(largest->at(0).data<float>()[1], 5.0f);
  expect_tensor_eq(largest->at(1), make_tensor<int64_t>({2}, {1, 2}));
  auto smallest = NodeTest("TopK", 11)
                      .input(make_tensor<float>({4}, {1, nan, 5, -1}))
                      .input(make_tensor<int64_t>({1}, {3}))
                      .attr("largest", 0)
                      .outputs(2)
                      .run();
  ASSERT_TRUE(smallest.ok()) << smallest.status().to_string();
  expect_tensor_eq(smallest->at(0), make_tensor<float>({3}, {-1, 1, 5}));
  expect_tensor_eq(smallest->at(1), make_tensor<int64_t>({3}, {3, 0, 2}));
}

TEST(TopKKernel, InfersShapeFromConstantK) {
  NodeTest t("TopK", 11);
  t.input(make_tensor<float>({2, 6, 3}, std::vector<float>(36, 1.0f)))
      .constant_input(make_tensor<int64_t>({1}, {4}))
      .attr("axis", 1)
      .outputs(2);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const Graph& g = t.graph();
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].type.shape_string(), "[2,4,3]");
  const ValueType& idx = g.values[static_cast<size_t>(g.outputs[1])].type;
  EXPECT_EQ(idx.shape_string(), "[2,4,3]");
  EXPECT_EQ(idx.dtype, DataType::kInt64);
}

TEST(TopKKernel, RejectsKLargerThanTheAxis) {
  auto out = NodeTest("TopK", 11)
                 .dynamic_shapes()
                 .input(make_tensor<float>({3}, {1, 2, 3}))
                 .input(make_tensor<int64_t>({1}, {4}))
                 .outputs(2)
                 .run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("k is 4"), std::string::npos) << out.status().message();
  auto constant = NodeTest("TopK", 11)
                      .input(make_tensor<float>({3}, {1, 2, 3}))
                      .constant_input(make_tensor<int64_t>({1}, {4}))
                      .outputs(2)
                      .run();
  EXPECT_FALSE(constant.ok());
}

}  // namespace
}  // namespace sy
