// GridSample against hand-worked values and a reference written here in
// another way: each output is a weighted sum over every pixel of the
// image, with the weight of a pixel the product over axes of a 1-D kernel
// (tent or Keys cubic) evaluated at its distance from the sample, after
// the padding rule has moved the tap.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

struct Case {
  std::string mode;     // opset 20 spelling
  std::string padding;  // zeros, border, reflection
  bool align = false;
};

// Folds x into [lo, hi] by mirror steps, one at a time.
double fold(double x, double lo, double hi) {
  if (hi <= lo) return lo;
  while (x < lo || x > hi) x = x < lo ? 2 * lo - x : 2 * hi - x;
  return x;
}

double keys(double d) {
  const double a = -0.75;
  d = std::fabs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

// 1-D: the weights that taps at integer positions get for coordinate x,
// with the padding rule applied to each tap: a list of (pixel, weight).
std::vector<std::pair<int64_t, double>> axis_weights(double g, int64_t size, const Case& c) {
  double x = c.align ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2;
  const double lo = c.align ? 0.0 : -0.5, hi = c.align ? size - 1.0 : size - 0.5;
  if (c.mode == "nearest") x = std::nearbyint(x);
  if (x < lo || x > hi) {
    if (c.padding == "border") x = std::min(std::max(x, 0.0), size - 1.0);
    if (c.padding == "reflection") x = fold(x, lo, hi);
  }
  std::vector<std::pair<int64_t, double>> taps;
  auto tap = [&](int64_t i, double w) {
    if (i < 0 || i >= size) {
      if (c.padding == "zeros") return;
      i = c.padding == "border" ? std::min<int64_t>(std::max<int64_t>(i, 0), size - 1)
                                : static_cast<int64_t>(fold(static_cast<double>(i), lo, hi));
    }
    taps.emplace_back(i, w);
  };
  if (c.mode == "nearest") {
    tap(static_cast<int64_t>(x), 1.0);
  } else {
    const auto base = static_cast<int64_t>(std::floor(x));
    const int reach = c.mode == "linear" ? 1 : 2;
    for (int64_t i = base - reach + 1; i <= base + reach; ++i) {
      const double d = std::fabs(x - static_cast<double>(i));
      tap(i, c.mode == "linear" ? std::max(0.0, 1 - d) : keys(d));
    }
  }
  return taps;
}

// x [N, C, spatial...], grid [N, points..., D]: Y [N, C, points].
std::vector<double> reference(const std::vector<float>& x, const std::vector<int64_t>& xs,
                              const std::vector<float>& grid, int64_t points, const Case& c) {
  const size_t dims = xs.size() - 2;
  int64_t plane = 1;
  for (size_t d = 2; d < xs.size(); ++d) plane *= xs[d];
  std::vector<double> y;
  for (int64_t n = 0; n < xs[0]; ++n) {
    for (int64_t ch = 0; ch < xs[1]; ++ch) {
      for (int64_t p = 0; p < points; ++p) {
        std::vector<std::vector<std::pair<int64_t, double>>> per_axis(dims);
        for (size_t a = 0; a < dims; ++a)
          per_axis[a] = axis_weights(grid[static_cast<size_t>((n * points + p) * static_cast<int64_t>(dims) +
                                                              static_cast<int64_t>(dims - 1 - a))],
                                     xs[a + 2], c);
        double sum = 0;
        std::function<void(size_t, int64_t, double)> walk = [&](size_t a, int64_t offset, double w) {
          if (a == dims) {
            sum += w * x[static_cast<size_t>((n * xs[1] + ch) * plane + offset)];
            return;
          }
          for (const auto& [i, wi] : per_axis[a]) walk(a + 1, offset * xs[a + 2] + i, w * wi);
        };
        walk(0, 0, 1.0);
        y.push_back(sum);
      }
    }
  }
  return y;
}

TEST(GridSample, HandWorkedBilinearAndNearest) {
  // 2x2 image [[1, 2], [3, 4]], align_corners: the corners are the pixels,
  // the centre their mean; without align_corners -1 is the outer edge, so
  // the corner samples are a quarter of a pixel (zeros padding) away.
  const Tensor x = make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor grid = make_tensor<float>({1, 1, 3, 2}, {-1, -1, 1, 1, 0, 0});
  auto out = NodeTest("GridSample", 20).input(x).input(grid).attr("align_corners", 1).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 1, 1, 3}, {1, 4, 2.5f}));
  out = NodeTest("GridSample", 20).input(x).input(grid).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 1, 1, 3}, {0.25f, 1.0f, 2.5f}));
  // Nearest rounds half to even: on a 4-wide row with align_corners,
  // g = -1/3 is x = 1.0, g = 0 is x = 1.5 (-> 2), g = -2/3 is x = 0.5 (-> 0).
  const Tensor row = make_tensor<float>({1, 1, 1, 4}, {10, 20, 30, 40});
  const Tensor at = make_tensor<float>({1, 1, 3, 2}, {-1.0f / 3, 0, 0, 0, -2.0f / 3, 0});
  out = NodeTest("GridSample", 20).input(row).input(at).attr("mode", "nearest").attr("align_corners", 1).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({1, 1, 1, 3}, {20, 30, 10}));
}

TEST(GridSample, EveryModeAndPaddingMatchesTheReference2D) {
  const std::vector<int64_t> xs = {2, 3, 5, 7};
  const std::vector<float> x = random_uniform<float>(2 * 3 * 5 * 7, -2, 2, 1);
  const int64_t points = 6 * 4;
  // Well outside [-1, 1], so every padding rule is exercised.
  const std::vector<float> grid = random_uniform<float>(static_cast<size_t>(2 * points * 2), -1.8f, 1.8f, 2);
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (bool align : {false, true}) {
        const Case c{mode, padding, align};
        auto out = NodeTest("GridSample", 22)
                       .input(make_tensor<float>({2, 3, 5, 7}, x))
                       .input(make_tensor<float>({2, 6, 4, 2}, grid))
                       .attr("mode", mode)
                       .attr("padding_mode", padding)
                       .attr("align_corners", align ? 1 : 0)
                       .run();
        ASSERT_TRUE(out.ok()) << out.status().to_string();
        ASSERT_EQ(out->at(0).shape(), Shape({2, 3, 6, 4}));
        const std::vector<double> want = reference(x, xs, grid, points, c);
        const std::vector<float> got = to_vector<float>(out->at(0));
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_NEAR(got[i], want[i], 1e-4) << mode << " " << padding << " align " << align << " at " << i;
      }
}

TEST(GridSample, VolumetricMatchesTheReferenceWithThreads) {
  const std::vector<int64_t> xs = {1, 2, 4, 5, 6};
  const std::vector<float> x = random_uniform<float>(2 * 4 * 5 * 6, -2, 2, 3);
  const int64_t points = 3 * 4 * 5;
  const std::vector<float> grid = random_uniform<float>(static_cast<size_t>(points * 3), -1.5f, 1.5f, 4);
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (bool align : {false, true}) {
        auto out = NodeTest("GridSample", 20)
                       .input(make_tensor<float>({1, 2, 4, 5, 6}, x))
                       .input(make_tensor<float>({1, 3, 4, 5, 3}, grid))
                       .attr("mode", mode)
                       .attr("padding_mode", padding)
                       .attr("align_corners", align ? 1 : 0)
                       .threads(2)
                       .run();
        ASSERT_TRUE(out.ok()) << out.status().to_string();
        const std::vector<double> want = reference(x, xs, grid, points, Case{mode, padding, align});
        const std::vector<float> got = to_vector<float>(out->at(0));
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_NEAR(got[i], want[i], 1e-4) << mode << " " << padding << " align " << align << " at " << i;
      }
}

TEST(GridSample, Opset16SpellingDoubleAndFloat16) {
  const std::vector<float> x = random_uniform<float>(1 * 2 * 4 * 4, -1, 1, 5);
  const std::vector<float> grid = random_uniform<float>(1 * 3 * 3 * 2, -1.2f, 1.2f, 6);
  const std::vector<double> want = reference(x, {1, 2, 4, 4}, grid, 9, Case{"cubic", "border", false});
  auto out = NodeTest("GridSample", 16)
                 .input(make_tensor<float>({1, 2, 4, 4}, x))
                 .input(make_tensor<float>({1, 3, 3, 2}, grid))
                 .attr("mode", "bicubic")
                 .attr("padding_mode", "border")
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 2, 3, 3}, std::vector<float>(want.begin(), want.end())), 1e-4,
                     1e-4);
  // double X with a double grid.
  out = NodeTest("GridSample", 22)
            .input(make_tensor<double>({1, 2, 4, 4}, std::vector<double>(x.begin(), x.end())))
            .input(make_tensor<double>({1, 3, 3, 2}, std::vector<double>(grid.begin(), grid.end())))
            .attr("mode", "cubic")
            .attr("padding_mode", "border")
            .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<double>({1, 2, 3, 3}, want), 1e-9, 1e-9);
  // float16 X and grid: within half precision of the float result.
  Tensor hx = Tensor::allocate(DataType::kFloat16, Shape({1, 2, 4, 4})).value();
  Tensor hg = Tensor::allocate(DataType::kFloat16, Shape({1, 3, 3, 2})).value();
  std::vector<float> xr(x.size()), gr(grid.size());
  for (size_t i = 0; i < x.size(); ++i) {
    hx.data<uint16_t>()[i] = float_to_float16(x[i]);
    xr[i] = float16_to_float(hx.data<uint16_t>()[i]);
  }
  for (size_t i = 0; i < grid.size(); ++i) {
    hg.data<uint16_t>()[i] = float_to_float16(grid[i]);
    gr[i] = float16_to_float(hg.data<uint16_t>()[i]);
  }
  out = NodeTest("GridSample", 22).input(hx).input(hg).attr("mode", "cubic").attr("padding_mode", "border").run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const std::vector<double> want16 = reference(xr, {1, 2, 4, 4}, gr, 9, Case{"cubic", "border", false});
  for (size_t i = 0; i < want16.size(); ++i)
    EXPECT_NEAR(float16_to_float(out->at(0).data<uint16_t>()[i]), want16[i], 4e-3) << i;
}

TEST(GridSample, FarAndNonFiniteCoordinatesStayInBounds) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor grid = make_tensor<float>({1, 1, 4, 2}, {1e30f, -1e30f, inf, 0, nan, nan, -inf, inf});
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* padding : {"zeros", "border", "reflection"}) {
      auto out = NodeTest("GridSample", 20).input(x).input(grid).attr("mode", mode).attr("padding_mode", padding).run();
      ASSERT_TRUE(out.ok()) << mode << " " << padding << ": " << out.status().to_string();
    }
  // Far outside with zeros padding reads nothing.
  auto out = NodeTest("GridSample", 20).input(x).input(make_tensor<float>({1, 1, 1, 2}, {1e30f, 0})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({1, 1, 1, 1}, {0}));
}

TEST(GridSample, BadAttributesAndShapesAreErrors) {
  const Tensor x = make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor grid = make_tensor<float>({1, 1, 1, 2}, {0, 0});
  // Opset 16 spells it bilinear; 20 spells it linear.
  EXPECT_FALSE(NodeTest("GridSample", 16).input(x).input(grid).attr("mode", "linear").run().ok());
  EXPECT_FALSE(NodeTest("GridSample", 20).input(x).input(grid).attr("mode", "bilinear").run().ok());
  EXPECT_FALSE(NodeTest("GridSample", 20).input(x).input(grid).attr("padding_mode", "wrap").run().ok());
  EXPECT_FALSE(NodeTest("GridSample", 20).input(x).input(grid).attr("align_corners", 2).run().ok());
  // The grid's last dim must be the number of spatial dims; batches must agree.
  EXPECT_FALSE(NodeTest("GridSample", 20).input(x).input(make_tensor<float>({1, 1, 1, 3}, {0, 0, 0})).run().ok());
  EXPECT_FALSE(NodeTest("GridSample", 20).input(x).input(make_tensor<float>({2, 1, 1, 2}, {0, 0, 0, 0})).run().ok());
  // The same, found only at run time.
  EXPECT_FALSE(NodeTest("GridSample", 20)
                   .input(x)
                   .input(make_tensor<float>({2, 1, 1, 2}, {0, 0, 0, 0}))
                   .dynamic_shapes()
                   .run()
                   .ok());
  // 4 spatial dims are not supported.
  EXPECT_FALSE(NodeTest("GridSample", 20)
                   .input(make_tensor<float>({1, 1, 1, 1, 1, 1}, {1}))
                   .input(make_tensor<float>({1, 1, 1, 1, 1, 4}, {0, 0, 0, 0}))
                   .run()
                   .ok());
}

}  // namespace
}  // namespace sy::testing
