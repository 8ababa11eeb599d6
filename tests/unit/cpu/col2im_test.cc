// Col2Im against hand-worked coverage counts and, for random geometry, its
// defining property: it is the adjoint of im2col (written here as a plain
// gather), so <col2im(c), x> = <c, im2col(x)> for every c and x.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "testing/node_test.h"

namespace sy::testing {
namespace {

TEST(Col2Im, OnesCountHowManyBlocksCoverEachPixel) {
  // 3x3 image, 2x2 blocks, stride 1: four blocks.
  auto out = NodeTest("Col2Im", 18)
                 .input(make_tensor<int32_t>({1, 4, 4}, std::vector<int32_t>(16, 1)))
                 .input(make_tensor<int64_t>({2}, {3, 3}))
                 .input(make_tensor<int64_t>({2}, {2, 2}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int32_t>({1, 1, 3, 3}, {1, 2, 1, 2, 4, 2, 1, 2, 1}));
  // The same with pads 1 all round: 4x4 blocks positions, the padding taps dropped.
  out = NodeTest("Col2Im", 18)
            .input(make_tensor<float>({1, 4, 16}, std::vector<float>(64, 1.0f)))
            .input(make_tensor<int64_t>({2}, {3, 3}))
            .input(make_tensor<int64_t>({2}, {2, 2}))
            .attr("pads", std::vector<int64_t>{1, 1, 1, 1})
            .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({1, 1, 3, 3}, std::vector<float>(9, 4.0f)));
}

struct Geometry {
  std::vector<int64_t> image, block, dilations, strides, pads;
};

// im2col of x [N, C, image...] into [N, C * prod(block), L].
std::vector<double> im2col(const std::vector<double>& x, int64_t n, int64_t c, const Geometry& g,
                           std::vector<int64_t>& blocks, int64_t& kernel, int64_t& count) {
  const size_t r = g.image.size();
  blocks.assign(r, 0);
  kernel = count = 1;
  int64_t image = 1;
  for (size_t d = 0; d < r; ++d) {
    blocks[d] = (g.image[d] + g.pads[d] + g.pads[d + r] - g.dilations[d] * (g.block[d] - 1) - 1) / g.strides[d] + 1;
    kernel *= g.block[d];
    count *= blocks[d];
    image *= g.image[d];
  }
  std::vector<double> cols(static_cast<size_t>(n * c * kernel * count), 0.0);
  for (int64_t b = 0; b < n * c; ++b)
    for (int64_t k = 0; k < kernel; ++k)
      for (int64_t l = 0; l < count; ++l) {
        int64_t kr = k, lr = l, index = 0, scale = 1;
        bool inside = true;
        for (size_t d = r; d-- > 0;) {
          const int64_t pos = (lr % blocks[d]) * g.strides[d] - g.pads[d] + (kr % g.block[d]) * g.dilations[d];
          kr /= g.block[d];
          lr /= blocks[d];
          inside = inside && pos >= 0 && pos < g.image[d];
          index += pos * scale;
          scale *= g.image[d];
        }
        if (inside) cols[static_cast<size_t>((b * kernel + k) * count + l)] = x[static_cast<size_t>(b * image + index)];
      }
  return cols;
}

TEST(Col2Im, IsTheAdjointOfIm2col) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> dist(-1, 1);
  const Geometry cases[] = {
      {{5, 6}, {2, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
      {{7, 5}, {3, 2}, {2, 1}, {2, 3}, {1, 0, 2, 1}},
      {{3, 4, 5}, {1, 2, 2}, {1, 2, 1}, {1, 1, 2}, {0, 1, 1, 0, 0, 1}},
      {{9}, {3}, {3}, {2}, {2, 1}},
  };
  for (const Geometry& g : cases) {
    const int64_t n = 2, c = 3;
    int64_t image = 1;
    for (int64_t d : g.image) image *= d;
    std::vector<double> x(static_cast<size_t>(n * c * image));
    for (double& v : x) v = dist(gen);
    std::vector<int64_t> blocks;
    int64_t kernel = 0, count = 0;
    const std::vector<double> xc = im2col(x, n, c, g, blocks, kernel, count);
    std::vector<double> cols(xc.size());
    for (double& v : cols) v = dist(gen);
    std::vector<int64_t> out_shape = {n, c};
    out_shape.insert(out_shape.end(), g.image.begin(), g.image.end());
    auto out = NodeTest("Col2Im", 18)
                   .input(make_tensor<double>({n, c * kernel, count}, cols))
                   .input(make_tensor<int64_t>({static_cast<int64_t>(g.image.size())}, g.image))
                   .input(make_tensor<int64_t>({static_cast<int64_t>(g.block.size())}, g.block))
                   .attr("dilations", g.dilations)
                   .attr("strides", g.strides)
                   .attr("pads", g.pads)
                   .threads(2)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ASSERT_EQ(out->at(0).shape(), Shape(out_shape));
    const std::vector<double> folded = to_vector<double>(out->at(0));
    double lhs = 0, rhs = 0;
    for (size_t i = 0; i < x.size(); ++i) lhs += folded[i] * x[i];
    for (size_t i = 0; i < cols.size(); ++i) rhs += cols[i] * xc[i];
    EXPECT_NEAR(lhs, rhs, 1e-9) << "image rank " << g.image.size();
    // And unit columns land on single pixels: col2im of e_j is the
    // pixel im2col reads at j (or nothing, in the padding).
    for (size_t j = 0; j < cols.size(); j += 7) {
      std::vector<double> unit(cols.size(), 0.0);
      unit[j] = 1.0;
      auto one = NodeTest("Col2Im", 18)
                     .input(make_tensor<double>({n, c * kernel, count}, unit))
                     .input(make_tensor<int64_t>({static_cast<int64_t>(g.image.size())}, g.image))
                     .input(make_tensor<int64_t>({static_cast<int64_t>(g.block.size())}, g.block))
                     .attr("dilations", g.dilations)
                     .attr("strides", g.strides)
                     .attr("pads", g.pads)
                     .run();
      ASSERT_TRUE(one.ok());
      const std::vector<double> f = to_vector<double>(one->at(0));
      double dot = 0, total = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        dot += f[i] * x[i];
        total += f[i];
      }
      EXPECT_EQ(dot, xc[j]) << j;
      EXPECT_TRUE(total == 0.0 || total == 1.0);
    }
  }
}

TEST(Col2Im, BadShapesAreErrors) {
  auto run = [](std::vector<int64_t> in, std::vector<int64_t> image, std::vector<int64_t> block) {
    std::vector<float> v(static_cast<size_t>(in[0] * in[1] * in[2]), 1.0f);
    return NodeTest("Col2Im", 18)
        .input(make_tensor<float>({in[0], in[1], in[2]}, v))
        .input(make_tensor<int64_t>({static_cast<int64_t>(image.size())}, image))
        .input(make_tensor<int64_t>({static_cast<int64_t>(block.size())}, block))
        .dynamic_shapes()
        .run();
  };
  EXPECT_TRUE(run({1, 4, 4}, {3, 3}, {2, 2}).ok());
  EXPECT_FALSE(run({1, 4, 5}, {3, 3}, {2, 2}).ok());   // L is not the block count
  EXPECT_FALSE(run({1, 5, 4}, {3, 3}, {2, 2}).ok());   // channels not a multiple of the block
  EXPECT_FALSE(run({1, 4, 4}, {3, 3}, {2}).ok());      // lengths differ
  EXPECT_FALSE(run({1, 4, 4}, {1, 1}, {2, 2}).ok());   // block larger than the image
  EXPECT_FALSE(run({1, 4, 4}, {3, 3}, {0, 2}).ok());   // empty block
  EXPECT_FALSE(run({1, 4, 4}, {3, -3}, {2, 2}).ok());  // negative image size
}

}  // namespace
}  // namespace sy::testing
