// Unique: the spec's examples (hand-checked), and random inputs against a
// reference built on std::map.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

Tensor int64s(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return make_tensor<int64_t>({n}, v);
}

void expect_outputs(const std::vector<Tensor>& out, const Tensor& y, std::vector<int64_t> indices,
                    std::vector<int64_t> inverse, std::vector<int64_t> counts) {
  ASSERT_EQ(out.size(), 4u);
  expect_tensor_eq(out[0], y);
  expect_tensor_eq(out[1], int64s(std::move(indices)));
  expect_tensor_eq(out[2], int64s(std::move(inverse)));
  expect_tensor_eq(out[3], int64s(std::move(counts)));
}

TEST(UniqueKernel, SortedAndUnsortedWithoutAxis) {
  const Tensor x = make_tensor<float>({6}, {2, 1, 1, 3, 4, 3});
  auto sorted = NodeTest("Unique", 11).input(x).outputs(4).run();
  ASSERT_TRUE(sorted.ok()) << sorted.status().to_string();
  expect_outputs(*sorted, make_tensor<float>({4}, {1, 2, 3, 4}), {1, 0, 3, 4}, {1, 0, 0, 2, 3, 2}, {2, 1, 2, 1});

  auto unsorted = NodeTest("Unique", 11).input(x).attr("sorted", 0).outputs(4).run();
  ASSERT_TRUE(unsorted.ok()) << unsorted.status().to_string();
  expect_outputs(*unsorted, make_tensor<float>({4}, {2, 1, 3, 4}), {0, 1, 3, 4}, {0, 1, 1, 2, 3, 2}, {1, 2, 2, 1});
}

TEST(UniqueKernel, FlattensAMatrixWithoutAxis) {
  auto out = NodeTest("Unique", 11).input(make_tensor<int32_t>({2, 3}, {5, -1, 5, 0, -1, 9})).outputs(4).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_outputs(*out, make_tensor<int32_t>({4}, {-1, 0, 5, 9}), {1, 3, 0, 5}, {2, 0, 2, 1, 0, 3}, {2, 1, 2, 1});
}

TEST(UniqueKernel, RowsAndColumnsAlongAnAxis) {
  // Spec example: unique rows.
  auto rows = NodeTest("Unique", 11)
                  .input(make_tensor<float>({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4}))
                  .attr("axis", 0)
                  .outputs(4)
                  .run();
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  expect_outputs(*rows, make_tensor<float>({2, 3}, {1, 0, 0, 2, 3, 4}), {0, 2}, {0, 0, 1}, {2, 1});

  // Spec example along axis 1 of a [2,4,2] tensor: slices compared in
  // (outer, inner) order.
  const std::vector<float> x = {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1};
  auto cols = NodeTest("Unique", 11).input(make_tensor<float>({2, 4, 2}, x)).attr("axis", 1).outputs(4).run();
  ASSERT_TRUE(cols.ok()) << cols.status().to_string();
  expect_outputs(*cols, make_tensor<float>({2, 3, 2}, {0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1}), {1, 0, 2}, {1, 0, 2, 0},
                 {2, 1, 1});

  // The same, unsorted: first-occurrence order.
  auto unsorted =
      NodeTest("Unique", 11).input(make_tensor<float>({2, 4, 2}, x)).attr("axis", -2).attr("sorted", 0).outputs(4).run();
  ASSERT_TRUE(unsorted.ok()) << unsorted.status().to_string();
  expect_outputs(*unsorted, make_tensor<float>({2, 3, 2}, {1, 1, 0, 1, 2, 1, 1, 1, 0, 1, 2, 1}), {0, 1, 2},
                 {0, 1, 2, 1}, {1, 2, 1});
}

TEST(UniqueKernel, NaNsAreOneValueAfterTheNumbers) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = NodeTest("Unique", 11).input(make_tensor<float>({5}, {nan, 1, nan, -0.0f, 0.0f})).outputs(4).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const auto y = to_vector<float>(out->at(0));
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_TRUE(std::signbit(y[0])) << "the first occurrence of the zeros is -0";
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_TRUE(std::isnan(y[2]));
  expect_tensor_eq(out->at(1), int64s({3, 1, 0}));
  expect_tensor_eq(out->at(2), int64s({2, 1, 2, 0, 0}));
  expect_tensor_eq(out->at(3), int64s({2, 1, 2}));
}

TEST(UniqueKernel, Strings) {
  auto out = NodeTest("Unique", 11)
                 .input(make_tensor<std::string>({5}, {"pear", "apple", "pear", "fig", "apple"}))
                 .attr("sorted", 0)
                 .outputs(4)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<std::string>(out->at(0)), (std::vector<std::string>{"pear", "apple", "fig"}));
  expect_tensor_eq(out->at(1), int64s({0, 1, 3}));
  expect_tensor_eq(out->at(2), int64s({0, 1, 0, 2, 1}));
  expect_tensor_eq(out->at(3), int64s({2, 2, 1}));
}

TEST(UniqueKernel, OnlyYRequested) {
  auto out = NodeTest("Unique", 11).input(make_tensor<int64_t>({4}, {3, 3, 3, 3})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int64_t>({1}, {3}));
}

TEST(UniqueKernel, RandomIntsMatchAMapReference) {
  std::mt19937 gen(7);
  std::uniform_int_distribution<int> d(0, 40);
  std::vector<int64_t> x(500);
  for (int64_t& v : x) v = d(gen);
  for (int sorted = 0; sorted <= 1; ++sorted) {
    std::map<int64_t, std::pair<int64_t, int64_t>> seen;  // value -> (first, count)
    for (size_t i = 0; i < x.size(); ++i) {
      auto [it, fresh] = seen.try_emplace(x[i], static_cast<int64_t>(i), 0);
      ++it->second.second;
    }
    std::vector<std::pair<int64_t, int64_t>> order;  // (key for output order, value)
    for (const auto& [v, fc] : seen) order.emplace_back(sorted ? v : fc.first, v);
    std::sort(order.begin(), order.end());
    std::vector<int64_t> y, first, counts, inverse(x.size());
    std::map<int64_t, int64_t> position;
    for (const auto& [key, v] : order) {
      position[v] = static_cast<int64_t>(y.size());
      y.push_back(v);
      first.push_back(seen[v].first);
      counts.push_back(seen[v].second);
    }
    for (size_t i = 0; i < x.size(); ++i) inverse[i] = position[x[i]];

    auto out = NodeTest("Unique", 11).input(make_tensor<int64_t>({500}, x)).attr("sorted", sorted).outputs(4).run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_outputs(*out, int64s(y), first, inverse, counts);
  }
}

TEST(UniqueKernel, InfersRanksAndTheInverseLength) {
  NodeTest t("Unique", 11);
  t.input(make_tensor<float>({2, 5}, std::vector<float>(10, 1.0f))).attr("axis", 1).outputs(4);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const Graph& g = t.graph();
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].type.shape_string(), "[2,?]");
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[2])].type.shape_string(), "[5]");
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[3])].type.dtype, DataType::kInt64);
  expect_tensor_eq(out->at(0), make_tensor<float>({2, 1}, {1, 1}));
}

}  // namespace
}  // namespace sy
