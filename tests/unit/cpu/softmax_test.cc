// Softmax, LogSoftmax and Hardmax against naive double-precision references.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "providers/cpu/softmax_simd.h"
#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

enum class Kind { kSoftmax, kLogSoftmax };

// Softmax of x seen as [outer, n, inner] along n, in double.
std::vector<float> reference(const std::vector<float>& x, int64_t outer, int64_t n, int64_t inner, Kind kind) {
  std::vector<float> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t a) { return static_cast<size_t>((o * n + a) * inner + i); };
      double mx = -INFINITY;
      for (int64_t a = 0; a < n; ++a) mx = std::max(mx, static_cast<double>(x[at(a)]));
      double sum = 0;
      for (int64_t a = 0; a < n; ++a) sum += std::exp(x[at(a)] - mx);
      for (int64_t a = 0; a < n; ++a) {
        const double v = x[at(a)] - mx;
        y[at(a)] = static_cast<float>(kind == Kind::kSoftmax ? std::exp(v) / sum : v - std::log(sum));
      }
    }
  return y;
}

TEST(Softmax, Opset13AlongEachAxisOfA3DTensor) {
  const Shape shape{3, 5, 7};
  const std::vector<float> x = random_floats(105, -5, 5, 1);
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    const int64_t a = axis < 0 ? axis + 3 : axis;
    const int64_t outer = shape.size_to(static_cast<size_t>(a));
    const int64_t n = shape[static_cast<size_t>(a)];
    const int64_t inner = shape.size_from(static_cast<size_t>(a) + 1);
    for (Kind kind : {Kind::kSoftmax, Kind::kLogSoftmax}) {
      auto out = NodeTest(kind == Kind::kSoftmax ? "Softmax" : "LogSoftmax", 13)
                     .input(make_tensor<float>(shape, x))
                     .attr("axis", axis)
                     .run();
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      SCOPED_TRACE("axis " + std::to_string(axis));
      expect_tensor_near(out->at(0), make_tensor<float>(shape, reference(x, outer, n, inner, kind)), 1e-6, 1e-7);
    }
  }
}

TEST(Softmax, BeforeOpset13CoercesTo2D) {
  // axis 1 of [2, 3, 4]: rows of 12.
  const Shape shape{2, 3, 4};
  const std::vector<float> x = random_floats(24, -3, 3, 2);
  auto out = NodeTest("Softmax", 11).input(make_tensor<float>(shape, x)).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>(shape, reference(x, 2, 12, 1, Kind::kSoftmax)), 1e-6, 1e-7);
  auto log = NodeTest("LogSoftmax", 1).input(make_tensor<float>(shape, x)).attr("axis", int64_t{2}).run();
  ASSERT_TRUE(log.ok()) << log.status().to_string();
  expect_tensor_near(log->at(0), make_tensor<float>(shape, reference(x, 6, 4, 1, Kind::kLogSoftmax)), 1e-6, 1e-6);
}

TEST(Softmax, LargeInputsDoNotOverflowAndRowsSumToOne) {
  auto out = NodeTest("Softmax", 13).input(make_tensor<float>({1, 3}, {1000.0f, 1001.0f, 1002.0f})).run();
  ASSERT_TRUE(out.ok());
  expect_tensor_near(out->at(0), make_tensor<float>({1, 3}, reference({1000, 1001, 1002}, 1, 3, 1, Kind::kSoftmax)));
  auto log = NodeTest("LogSoftmax", 13).input(make_tensor<float>({2}, {-1000.0f, 0.0f})).run();
  ASSERT_TRUE(log.ok());
  expect_tensor_near(log->at(0), make_tensor<float>({2}, {-1000.0f, 0.0f}));
}

TEST(Softmax, MultiThreadedBigRowsAndColumns) {
  const std::vector<float> x = random_floats(64 * 1000, -10, 10, 3);
  auto rows = NodeTest("Softmax", 13).input(make_tensor<float>({64, 1000}, x)).threads(2).run();
  ASSERT_TRUE(rows.ok());
  expect_tensor_near(rows->at(0), make_tensor<float>({64, 1000}, reference(x, 64, 1000, 1, Kind::kSoftmax)), 1e-5,
                     1e-9);
  auto cols = NodeTest("Softmax", 13).input(make_tensor<float>({64, 1000}, x)).attr("axis", int64_t{0}).threads(2).run();
  ASSERT_TRUE(cols.ok());
  expect_tensor_near(cols->at(0), make_tensor<float>({64, 1000}, reference(x, 1, 64, 1000, Kind::kSoftmax)), 1e-5,
                     1e-9);
}

TEST(Softmax, DoubleAndFloat16) {
  auto d = NodeTest("Softmax", 13).input(make_tensor<double>({3}, {1.0, 2.0, 3.0})).run();
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  const double s = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_NEAR(d->at(0).data<double>()[0], std::exp(1.0) / s, 1e-15);
  EXPECT_NEAR(d->at(0).data<double>()[2], std::exp(3.0) / s, 1e-15);
  Tensor h = Tensor::allocate(DataType::kFloat16, Shape{2}).value();
  h.data<uint16_t>()[0] = 0x0000;  // 0
  h.data<uint16_t>()[1] = 0x0000;
  auto hout = NodeTest("Softmax", 13).input(h).run();
  ASSERT_TRUE(hout.ok()) << hout.status().to_string();
  EXPECT_EQ(hout->at(0).data<uint16_t>()[0], 0x3800);  // 0.5
  EXPECT_EQ(hout->at(0).data<uint16_t>()[1], 0x3800);
}

// The row kernel of each ISA this CPU runs, at every length around the
// 16-float vector (a partial tail, and rows shorter than one vector), with
// -inf scores, a bias row, and y on x.
TEST(Softmax, SimdRowEveryLengthWithBiasAndMaskedKeys) {
  using Fn = void (*)(const float*, const float*, float*, int64_t);
  std::vector<std::pair<const char*, Fn>> isas = {{"portable", &cpu::softmax_detail::softmax_row_f32_portable}};
  if (cpu_supports(CpuIsa::kAvx2)) isas.emplace_back("avx2", &cpu::softmax_detail::softmax_row_f32_avx2);
  if (cpu_supports(CpuIsa::kAvx512)) isas.emplace_back("avx512", &cpu::softmax_detail::softmax_row_f32_avx512);
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 50; ++n) lengths.push_back(n);
  for (int64_t n : {63, 64, 65, 128, 1000}) lengths.push_back(n);
  for (const auto& [name, fn] : isas) {
    for (const int64_t n : lengths) {
      std::vector<float> x = random_floats(n, -20, 20, static_cast<uint32_t>(n));
      const std::vector<float> bias = random_floats(n, -3, 3, static_cast<uint32_t>(n + 7));
      if (n > 2) x[static_cast<size_t>(n / 3)] = -std::numeric_limits<float>::infinity();  // a masked key
      for (const bool biased : {false, true}) {
        std::vector<float> s = x;
        if (biased)
          for (int64_t j = 0; j < n; ++j) s[static_cast<size_t>(j)] += bias[static_cast<size_t>(j)];
        const std::vector<float> want = reference(s, 1, n, 1, Kind::kSoftmax);
        std::vector<float> y(static_cast<size_t>(n), -1.0f);
        fn(x.data(), biased ? bias.data() : nullptr, y.data(), n);
        std::vector<float> in_place = x;
        fn(in_place.data(), biased ? bias.data() : nullptr, in_place.data(), n);
        for (int64_t j = 0; j < n; ++j) {
          const auto k = static_cast<size_t>(j);
          SCOPED_TRACE(std::string(name) + " n=" + std::to_string(n) + " j=" + std::to_string(j) +
                       (biased ? " biased" : ""));
          EXPECT_NEAR(y[k], want[k], 2e-6 * want[k] + 1e-9);  // s - max rounds: tiny values lose bits
          EXPECT_EQ(in_place[k], y[k]);
        }
        if (n > 2) {
          EXPECT_EQ(y[static_cast<size_t>(n / 3)], 0.0f);
        }
      }
    }
  }
}

TEST(Hardmax, OneHotOfTheFirstMaximum) {
  const Tensor x = make_tensor<float>({2, 4}, {3, 10, 1, 10, -1, -2, -3, -4});
  auto out = NodeTest("Hardmax", 13).input(x).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({2, 4}, {0, 1, 0, 0, 1, 0, 0, 0}));
  auto cols = NodeTest("Hardmax", 13).input(x).attr("axis", int64_t{0}).run();
  ASSERT_TRUE(cols.ok());
  expect_tensor_eq(cols->at(0), make_tensor<float>({2, 4}, {1, 1, 1, 1, 0, 0, 0, 0}));
  auto legacy = NodeTest("Hardmax", 11).input(x).attr("axis", int64_t{0}).run();  // one row of 8
  ASSERT_TRUE(legacy.ok());
  expect_tensor_eq(legacy->at(0), make_tensor<float>({2, 4}, {0, 1, 0, 0, 0, 0, 0, 0}));
}

TEST(Softmax, BadAxisIsAnError) {
  auto out = NodeTest("Softmax", 13).input(make_tensor<float>({2, 2}, {1, 2, 3, 4})).attr("axis", int64_t{2}).run();
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace sy::testing
