// Det against a cofactor expansion.
#include <gtest/gtest.h>

#include <cmath>
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

uint32_t next(uint32_t& seed) {
  seed = seed * 1664525u + 1013904223u;
  return seed >> 8;
}

// ---- Det ------------------------------------------------------------------------

double cofactor_det(const std::vector<double>& m, int64_t n) {
  if (n == 0) return 1.0;
  if (n == 1) return m[0];
  double det = 0;
  for (int64_t c = 0; c < n; ++c) {
    std::vector<double> minor;
    for (int64_t i = 1; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (j != c) minor.push_back(m[static_cast<size_t>(i * n + j)]);
    det += (c % 2 == 0 ? 1.0 : -1.0) * m[static_cast<size_t>(c)] * cofactor_det(minor, n - 1);
  }
  return det;
}

TEST(DetKernel, HandComputed) {
  auto out = NodeTest("Det", 22).input(make_tensor<float>({2, 2}, {0, 1, 2, 3})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({}, {-2}));

  // A zero first pivot needs a row swap. By the first row:
  // [[0,2,1],[3,1,0],[1,1,1]] = 0*(1-0) - 2*(3-0) + 1*(3-1) = -4.
  auto swap = NodeTest("Det", 11).input(make_tensor<double>({3, 3}, {0, 2, 1, 3, 1, 0, 1, 1, 1})).run();
  ASSERT_TRUE(swap.ok()) << swap.status().to_string();
  expect_tensor_near(swap->at(0), make_tensor<double>({}, {-4}));

  // Singular: 0.
  auto singular = NodeTest("Det", 11).input(make_tensor<float>({2, 2}, {1, 2, 2, 4})).run();
  ASSERT_TRUE(singular.ok()) << singular.status().to_string();
  expect_tensor_eq(singular->at(0), make_tensor<float>({}, {0}));
}

TEST(DetKernel, BatchedAgainstCofactorExpansion) {
  uint32_t seed = 11;
  for (int64_t n = 1; n <= 6; ++n) {
    const Shape shape{2, 3, n, n};
    std::vector<double> values(static_cast<size_t>(shape.num_elements()));
    for (double& v : values) v = static_cast<double>(next(seed) % 1000) / 250.0 - 2.0;
    std::vector<double> expected;
    for (int64_t b = 0; b < 6; ++b)
      expected.push_back(cofactor_det(
          std::vector<double>(values.begin() + b * n * n, values.begin() + (b + 1) * n * n), n));
    auto d = NodeTest("Det", 22).input(make_tensor<double>(shape, values)).threads(2).run();
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    expect_tensor_near(d->at(0), make_tensor<double>({2, 3}, expected), 1e-10, 1e-10);

    auto f = NodeTest("Det", 11)
                 .input(make_tensor<float>(shape, std::vector<float>(values.begin(), values.end())))
                 .run();
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    expect_tensor_near(f->at(0), make_tensor<float>({2, 3}, std::vector<float>(expected.begin(), expected.end())), 1e-4,
                       1e-4);
  }
}

TEST(DetKernel, HalfTypesAndEmptyBatch) {
  std::vector<Float16> m;
  for (float v : {2.0f, 1.0f, 1.0f, 3.0f}) m.push_back(Float16{float_to_float16(v)});
  auto h = NodeTest("Det", 11).input(make_tensor<Float16>({1, 2, 2}, m)).run();
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_EQ(float16_to_float(h->at(0).data<Float16>()[0].bits), 5.0f);

  std::vector<BFloat16> bm;
  for (float v : {2.0f, 1.0f, 1.0f, 3.0f}) bm.push_back(BFloat16{float_to_bfloat16(v)});
  auto b = NodeTest("Det", 22).input(make_tensor<BFloat16>({2, 2}, bm)).run();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(bfloat16_to_float(b->at(0).data<BFloat16>()[0].bits), 5.0f);

  auto empty = NodeTest("Det", 11).input(make_tensor<float>({0, 3, 3}, {})).run();
  ASSERT_TRUE(empty.ok()) << empty.status().to_string();
  EXPECT_EQ(empty->at(0).shape(), (Shape{0}));
}

TEST(DetKernel, Errors) {
  EXPECT_FALSE(NodeTest("Det", 11).input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})).run().ok());
  EXPECT_FALSE(NodeTest("Det", 11).input(make_tensor<float>({3}, {1, 2, 3})).run().ok());
}

}  // namespace
}  // namespace sy
