// CumSum and CumProd against a reference loop along the axis.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy {
namespace {

using testing::random_uniform;

using testing::expect_tensor_eq;
using testing::expect_tensor_near;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

template <typename T>
std::vector<T> reference_scan(const std::vector<T>& x, const std::vector<int64_t>& shape, int64_t axis,
                              bool exclusive, bool reverse, bool product) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= shape[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < shape.size(); ++i) inner *= shape[i];
  const int64_t dim = shape[static_cast<size_t>(axis)];
  std::vector<T> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double acc = product ? 1.0 : 0.0;
      for (int64_t step = 0; step < dim; ++step) {
        const int64_t j = reverse ? dim - 1 - step : step;
        const auto at = static_cast<size_t>((o * dim + j) * inner + i);
        if (exclusive) y[at] = static_cast<T>(acc);
        acc = product ? acc * static_cast<double>(x[at]) : acc + static_cast<double>(x[at]);
        if (!exclusive) y[at] = static_cast<T>(acc);
      }
    }
  return y;
}

TEST(CumSumKernel, EveryAxisAndModeMatchesTheReference) {
  const std::vector<int64_t> shape = {3, 4, 300};  // inner 300: one full column block and a partial one
  const std::vector<double> x = random_uniform<double>(3 * 4 * 300, -2.0, 2.0, 1);
  for (int64_t axis = -3; axis < 3; ++axis)
    for (int exclusive = 0; exclusive <= 1; ++exclusive)
      for (int reverse = 0; reverse <= 1; ++reverse) {
        auto out = NodeTest("CumSum", 14)
                       .input(make_tensor<double>(Shape(shape), x))
                       .input(make_tensor<int32_t>({}, {static_cast<int32_t>(axis)}))
                       .attr("exclusive", exclusive)
                       .attr("reverse", reverse)
                       .threads(3)
                       .run();
        ASSERT_TRUE(out.ok()) << out.status().to_string();
        const int64_t a = axis < 0 ? axis + 3 : axis;
        expect_tensor_near(out->at(0),
                           make_tensor<double>(Shape(shape), reference_scan(x, shape, a, exclusive != 0, reverse != 0,
                                                                            false)),
                           1e-12, 1e-12);
      }
}

TEST(CumSumKernel, IntegersAndAnInt64Axis) {
  auto out = NodeTest("CumSum", 11)
                 .input(make_tensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}))
                 .input(make_tensor<int64_t>({}, {1}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int32_t>({2, 3}, {1, 3, 6, 4, 9, 15}));

  auto rev = NodeTest("CumSum", 14)
                 .input(make_tensor<uint64_t>({4}, {1, 2, 3, 4}))
                 .input(make_tensor<int64_t>({}, {0}))
                 .attr("reverse", 1)
                 .attr("exclusive", 1)
                 .run();
  ASSERT_TRUE(rev.ok()) << rev.status().to_string();
  expect_tensor_eq(rev->at(0), make_tensor<uint64_t>({4}, {9, 7, 4, 0}));

  // Overflow wraps, as in numpy.
  auto wrap = NodeTest("CumSum", 14)
                  .input(make_tensor<int32_t>({2}, {INT32_MAX, 1}))
                  .input(make_tensor<int32_t>({}, {0}))
                  .run();
  ASSERT_TRUE(wrap.ok()) << wrap.status().to_string();
  expect_tensor_eq(wrap->at(0), make_tensor<int32_t>({2}, {INT32_MAX, INT32_MIN}));
}

TEST(CumSumKernel, HalfAccumulatesInFloat) {
  // In float16 2048 + 1 rounds back to 2048: a float16 accumulator would
  // stall there.
  std::vector<Float16> x(4096, Float16{float_to_float16(1.0f)});
  auto out = NodeTest("CumSum", 14).input(make_tensor<Float16>({4096}, x)).input(make_tensor<int32_t>({}, {0})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const Float16* y = out->at(0).data<Float16>();
  EXPECT_EQ(float16_to_float(y[99].bits), 100.0f);
  EXPECT_EQ(float16_to_float(y[4095].bits), 4096.0f);
}

TEST(CumProdKernel, EveryAxisAndModeMatchesTheReference) {
  const std::vector<int64_t> shape = {2, 5, 3};
  const std::vector<double> x = random_uniform<double>(30, 0.5, 1.5, 2);
  for (int64_t axis = 0; axis < 3; ++axis)
    for (int exclusive = 0; exclusive <= 1; ++exclusive)
      for (int reverse = 0; reverse <= 1; ++reverse) {
        auto out = NodeTest("CumProd", 26)
                       .input(make_tensor<double>(Shape(shape), x))
                       .input(make_tensor<int64_t>({}, {axis}))
                       .attr("exclusive", exclusive)
                       .attr("reverse", reverse)
                       .run();
        ASSERT_TRUE(out.ok()) << out.status().to_string();
        expect_tensor_near(out->at(0),
                           make_tensor<double>(Shape(shape), reference_scan(x, shape, axis, exclusive != 0,
                                                                            reverse != 0, true)),
                           1e-12, 1e-12);
      }
}

TEST(CumProdKernel, Int64AndFloat) {
  auto i = NodeTest("CumProd", 26)
               .input(make_tensor<int64_t>({5}, {1, 2, 3, 4, 5}))
               .input(make_tensor<int32_t>({}, {0}))
               .attr("exclusive", 1)
               .run();
  ASSERT_TRUE(i.ok()) << i.status().to_string();
  expect_tensor_eq(i->at(0), make_tensor<int64_t>({5}, {1, 1, 2, 6, 24}));
  auto f = NodeTest("CumProd", 26)
               .input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
               .input(make_tensor<int32_t>({}, {-1}))
               .attr("reverse", 1)
               .run();
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  expect_tensor_eq(f->at(0), make_tensor<float>({2, 3}, {6, 6, 3, 120, 30, 6}));
}

TEST(CumSumKernel, RejectsAnAxisOutOfRange) {
  auto out = NodeTest("CumSum", 14)
                 .input(make_tensor<float>({2, 2}, {1, 2, 3, 4}))
                 .input(make_tensor<int32_t>({}, {2}))
                 .run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("axis 2"), std::string::npos) << out.status().message();
}

}  // namespace
}  // namespace sy
