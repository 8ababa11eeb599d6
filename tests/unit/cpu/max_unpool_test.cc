// MaxUnpool against hand-worked outputs, and as the inverse of MaxPool on
// its own maxima (MaxPool run through the same kernel registry).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "testing/node_test.h"

namespace sy::testing {
namespace {

TEST(MaxUnpool, SpecExamples) {
  // 2x2 values into a 4x4 unpooled plane (kernel 2, stride 2).
  const Tensor x = make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor i = make_tensor<int64_t>({1, 1, 2, 2}, {5, 7, 13, 15});
  auto out = NodeTest("MaxUnpool", 11)
                 .input(x)
                 .input(i)
                 .attr("kernel_shape", std::vector<int64_t>{2, 2})
                 .attr("strides", std::vector<int64_t>{2, 2})
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({1, 1, 4, 4}, {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}));
  // With output_shape [1, 1, 5, 5]: the 4x4 result in the top-left corner.
  out = NodeTest("MaxUnpool", 22)
            .input(x)
            .input(i)
            .input(make_tensor<int64_t>({4}, {1, 1, 5, 5}))
            .attr("kernel_shape", std::vector<int64_t>{2, 2})
            .attr("strides", std::vector<int64_t>{2, 2})
            .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({1, 1, 5, 5}, {0, 0, 0, 0, 0,  //
                                                                 0, 1, 0, 2, 0,  //
                                                                 0, 0, 0, 0, 0,  //
                                                                 0, 3, 0, 4, 0,  //
                                                                 0, 0, 0, 0, 0}));
}

TEST(MaxUnpool, UndoesMaxPoolOnItsMaxima) {
  // Distinct values, so the maxima are unique; batch and channels > 1 so
  // the flat indices span planes. 3-D pooling with pads.
  const std::vector<int64_t> shape = {2, 3, 4, 6, 5};
  std::vector<double> v(2 * 3 * 4 * 6 * 5);
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>((k * 37) % v.size()) - 100.0;
  const std::vector<int64_t> kernel = {2, 3, 2}, strides = {2, 2, 2}, pads = {0, 1, 0, 0, 0, 1};
  auto pooled = NodeTest("MaxPool", 12)
                    .input(make_tensor<double>(Shape(shape), v))
                    .attr("kernel_shape", kernel)
                    .attr("strides", strides)
                    .attr("pads", pads)
                    .outputs(2)
                    .run();
  ASSERT_TRUE(pooled.ok()) << pooled.status().to_string();
  auto out = NodeTest("MaxUnpool", 11)
                 .input(pooled->at(0))
                 .input(pooled->at(1))
                 .input(make_tensor<int64_t>({5}, shape))
                 .attr("kernel_shape", kernel)
                 .attr("strides", strides)
                 .attr("pads", pads)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->at(0).shape(), Shape(shape));
  // Every kept value is at its original place; everything else is zero.
  const std::vector<double> got = to_vector<double>(out->at(0));
  const std::vector<int64_t> idx = to_vector<int64_t>(pooled->at(1));
  std::vector<double> want(v.size(), 0.0);
  for (int64_t k : idx) want[static_cast<size_t>(k)] = v[static_cast<size_t>(k)];
  EXPECT_EQ(got, want);
}

TEST(MaxUnpool, DuplicateIndicesKeepTheLastAndBadInputsAreErrors) {
  auto run = [](std::vector<int64_t> idx, std::vector<int64_t> output_shape) {
    NodeTest t("MaxUnpool", 11);
    t.input(make_tensor<float>({1, 1, 1, 2}, {7, 8}))
        .input(make_tensor<int64_t>({1, 1, 1, 2}, idx))
        .attr("kernel_shape", std::vector<int64_t>{1, 2})
        .attr("strides", std::vector<int64_t>{1, 2});
    if (!output_shape.empty()) t.input(make_tensor<int64_t>({static_cast<int64_t>(output_shape.size())}, output_shape));
    return t.run();
  };
  auto out = run({1, 1}, {});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({1, 1, 1, 4}, {0, 8, 0, 0}));
  EXPECT_FALSE(run({0, 4}, {}).ok());            // past the unpooled size
  EXPECT_FALSE(run({-1, 0}, {}).ok());           // negative
  EXPECT_FALSE(run({0, 1}, {1, 1, 1, 3}).ok());  // output_shape smaller than unpooled
  EXPECT_FALSE(run({0, 1}, {1, 1, 4}).ok());     // wrong rank
  EXPECT_FALSE(NodeTest("MaxUnpool", 11)         // kernel_shape is required
                   .input(make_tensor<float>({1, 1, 1, 2}, {7, 8}))
                   .input(make_tensor<int64_t>({1, 1, 1, 2}, {0, 1}))
                   .run()
                   .ok());
}

}  // namespace
}  // namespace sy::testing
