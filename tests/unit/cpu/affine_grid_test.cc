// AffineGrid against hand-worked base grids and theta applied by a
// reference loop written here.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "testing/node_test.h"

namespace sy::testing {
namespace {

TEST(AffineGrid, IdentityGivesTheBaseGrid2D) {
  // 2 rows, 3 columns. Without align_corners the pixel centres are
  // -1 + (2i + 1) / n: rows -0.5, 0.5; columns -2/3, 0, 2/3. With it,
  // the corners: rows -1, 1; columns -1, 0, 1.
  const Tensor theta = make_tensor<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  const Tensor size = make_tensor<int64_t>({4}, {1, 5, 2, 3});
  auto out = NodeTest("AffineGrid", 20).input(theta).input(size).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const float t = 2.0f / 3;
  expect_tensor_near(out->at(0), make_tensor<float>({1, 2, 3, 2}, {-t, -0.5f, 0, -0.5f, t, -0.5f,  //
                                                                   -t, 0.5f, 0, 0.5f, t, 0.5f}));
  out = NodeTest("AffineGrid", 20).input(theta).input(size).attr("align_corners", 1).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 2, 3, 2}, {-1, -1, 0, -1, 1, -1,  //
                                                                   -1, 1, 0, 1, 1, 1}));
}

TEST(AffineGrid, ThetaAppliedPerBatch2DAnd3D) {
  // 2-D: batch 0 swaps x and y and shifts; batch 1 scales.
  const std::vector<float> th2 = {0, 1, 0.5f, 1, 0, -0.25f, 2, 0, 0, 0, 3, 0};
  auto out = NodeTest("AffineGrid", 20)
                 .input(make_tensor<float>({2, 2, 3}, th2))
                 .input(make_tensor<int64_t>({4}, {2, 1, 3, 4}))
                 .attr("align_corners", 1)
                 .threads(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  std::vector<float> want;
  for (int n = 0; n < 2; ++n)
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 4; ++w) {
        const float x = -1 + 2.0f * static_cast<float>(w) / 3, y = -1 + 2.0f * static_cast<float>(h) / 2;
        const float* t = th2.data() + n * 6;
        want.push_back(t[0] * x + t[1] * y + t[2]);
        want.push_back(t[3] * x + t[4] * y + t[5]);
      }
  expect_tensor_near(out->at(0), make_tensor<float>({2, 3, 4, 2}, want));

  // 3-D, with a one-pixel depth (its position is 0).
  const std::vector<double> th3 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  auto out3 = NodeTest("AffineGrid", 20)
                  .input(make_tensor<double>({1, 3, 4}, th3))
                  .input(make_tensor<int64_t>({5}, {1, 1, 1, 2, 3}))
                  .run();
  ASSERT_TRUE(out3.ok()) << out3.status().to_string();
  std::vector<double> want3;
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < 3; ++w) {
      const double x = -1 + (2.0 * w + 1) / 3, y = -1 + (2.0 * h + 1) / 2, z = 0;
      for (int r = 0; r < 3; ++r)
        want3.push_back(th3[r * 4] * x + th3[r * 4 + 1] * y + th3[r * 4 + 2] * z + th3[r * 4 + 3]);
    }
  expect_tensor_near(out3->at(0), make_tensor<double>({1, 1, 2, 3, 3}, want3), 1e-12, 1e-12);
  // The output shape is inferred from a constant size.
  NodeTest t("AffineGrid", 20);
  t.input(make_tensor<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0})).constant_input(make_tensor<int64_t>({4}, {1, 3, 5, 7}));
  ASSERT_TRUE(t.run().ok());
  EXPECT_EQ(t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type.shape_string(), "[1,5,7,2]");
}

TEST(AffineGrid, BadInputsAreErrors) {
  // theta [N, 2, 3] with a 3-D size, N disagreeing, negative sizes.
  EXPECT_FALSE(NodeTest("AffineGrid", 20)
                   .input(make_tensor<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0}))
                   .input(make_tensor<int64_t>({5}, {1, 1, 2, 2, 2}))
                   .run()
                   .ok());
  EXPECT_FALSE(NodeTest("AffineGrid", 20)
                   .input(make_tensor<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0}))
                   .input(make_tensor<int64_t>({4}, {2, 1, 2, 2}))
                   .run()
                   .ok());
  EXPECT_FALSE(NodeTest("AffineGrid", 20)
                   .input(make_tensor<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0}))
                   .input(make_tensor<int64_t>({4}, {1, 1, -2, 2}))
                   .run()
                   .ok());
  EXPECT_FALSE(NodeTest("AffineGrid", 20)
                   .input(make_tensor<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0}))
                   .input(make_tensor<int64_t>({4}, {1, 1, 2, 2}))
                   .attr("align_corners", 3)
                   .run()
                   .ok());
}

}  // namespace
}  // namespace sy::testing
