// LpNormalization against a double-precision reference that sums |x| or
// x^2 along the axis for each position of the other dims.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

std::vector<float> lp_norm_ref(const std::vector<float>& x, const std::vector<int64_t>& shape, int64_t axis, int p) {
  if (axis < 0) axis += static_cast<int64_t>(shape.size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t len = shape[static_cast<size_t>(axis)];
  std::vector<float> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return static_cast<size_t>((o * len + k) * inner + i); };
      double sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += p == 1 ? std::fabs(x[at(k)]) : std::pow(x[at(k)], 2);
      const double norm = p == 1 ? sum : std::sqrt(sum);
      for (int64_t k = 0; k < len; ++k) y[at(k)] = norm == 0 ? 0.0f : static_cast<float>(x[at(k)] / norm);
    }
  return y;
}

void check(const std::vector<int64_t>& shape, int64_t axis, int p, int threads = 1) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> x = random_floats(static_cast<size_t>(n), -3, 3, 4);
  // Zero the first slice along the axis's neighbours: its norm is zero, so its output is.
  for (size_t i = 0; i < x.size(); i += 11) x[i] = 0;
  auto out = NodeTest("LpNormalization", 22)
                 .input(make_tensor<float>(Shape(shape), x))
                 .attr("axis", axis)
                 .attr("p", static_cast<int64_t>(p))
                 .threads(threads)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>(Shape(shape), lp_norm_ref(x, shape, axis, p)), 1e-5, 1e-6);
}

TEST(LpNormalization, EveryAxisBothNorms) {
  for (int p : {1, 2})
    for (int64_t axis = -3; axis < 3; ++axis) check({3, 4, 5}, axis, p);
  check({7}, 0, 1);
}

TEST(LpNormalization, WideInnerDimsAndThreads) {
  check({3, 5, 300}, 1, 2);  // more than one block of norms per slice
  check({64, 9, 40}, 1, 1, 3);
  check({200, 300}, -1, 2, 2);
}

TEST(LpNormalization, HandComputedWithAZeroRow) {
  // Rows {3, -4} (L1 7, L2 5) and {0, 0} (norm 0: output 0).
  auto l1 = NodeTest("LpNormalization", 1).input(make_tensor<float>({2, 2}, {3, -4, 0, 0})).attr("p", 1).run();
  ASSERT_TRUE(l1.ok()) << l1.status().to_string();
  expect_tensor_near(l1->at(0), make_tensor<float>({2, 2}, {3.0f / 7, -4.0f / 7, 0, 0}));
  auto l2 = NodeTest("LpNormalization", 22).input(make_tensor<double>({2, 2}, {3, -4, 0, 0})).run();
  ASSERT_TRUE(l2.ok()) << l2.status().to_string();
  expect_tensor_near(l2->at(0), make_tensor<double>({2, 2}, {0.6, -0.8, 0, 0}), 1e-15, 0);
}

TEST(LpNormalization, BFloat16ComputesInFloat) {
  Tensor x = Tensor::allocate(DataType::kBfloat16, Shape{2}).value();
  x.data<uint16_t>()[0] = float_to_bfloat16(6.0f);
  x.data<uint16_t>()[1] = float_to_bfloat16(8.0f);
  auto out = NodeTest("LpNormalization", 22).input(x).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->at(0).dtype(), DataType::kBfloat16);
  EXPECT_FLOAT_EQ(bfloat16_to_float(out->at(0).data<uint16_t>()[0]), bfloat16_to_float(float_to_bfloat16(0.6f)));
  EXPECT_FLOAT_EQ(bfloat16_to_float(out->at(0).data<uint16_t>()[1]), bfloat16_to_float(float_to_bfloat16(0.8f)));
}

TEST(LpNormalization, BadAttributesAreErrors) {
  auto p3 = NodeTest("LpNormalization", 22).input(make_tensor<float>({2}, {1, 2})).attr("p", 3).run();
  ASSERT_FALSE(p3.ok());
  EXPECT_NE(p3.status().message().find("p must be 1 or 2"), std::string::npos) << p3.status().to_string();
  EXPECT_FALSE(NodeTest("LpNormalization", 22).input(make_tensor<float>({2}, {1, 2})).attr("axis", 1).run().ok());
  EXPECT_FALSE(NodeTest("LpNormalization", 22).input(make_tensor<float>({}, {1})).run().ok());
}

}  // namespace
}  // namespace sy::testing
