// Conv + residual Add fusion (optimizer/conv_residual_fusion.cc): the pass
// alone, then sessions at "all" against "basic" for every Conv path the
// CPU kernel has (Winograd, depthwise, transposed small-map product, plain
// GEMM, im2col GEMM), and a saved optimized model read back.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pass_test_util.h"
#include "unit/model/model_test_util.h"

namespace sy::testing {
namespace {

struct ResidualCase {
  std::string name;
  std::vector<int64_t> x;  // N, C, H, W
  int64_t m = 0;
  int64_t k = 1;  // square kernel
  int64_t stride = 1;
  int64_t group = 1;
  bool bias = false;
  bool relu = true;
};

std::vector<DimSpec> dims(const std::vector<int64_t>& v) { return std::vector<DimSpec>(v.begin(), v.end()); }

// x -> Conv -> Add(., z) [-> Relu] -> y, with z a graph input.
ModelBuilder residual_model(const ResidualCase& c, std::vector<int64_t>* y_shape) {
  const int64_t pad = c.k / 2;
  const int64_t oh = (c.x[2] + 2 * pad - c.k) / c.stride + 1, ow = (c.x[3] + 2 * pad - c.k) / c.stride + 1;
  *y_shape = {c.x[0], c.m, oh, ow};
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, dims(c.x));
  b.input("z", DataType::kFloat, dims(*y_shape));
  b.initializer("w", sample_tensor({c.m, c.x[1] / c.group, c.k, c.k}, 1, 0.3f));
  std::vector<std::string> conv_in = {"x", "w"};
  if (c.bias) {
    b.initializer("b", sample_tensor({c.m}, 2, 0.5f));
    conv_in.push_back("b");
  }
  b.node("Conv", conv_in, {"c"},
         {AttrSpec("pads", std::vector<int64_t>{pad, pad, pad, pad}),
          AttrSpec("strides", std::vector<int64_t>{c.stride, c.stride}), AttrSpec("group", c.group)},
         "conv");
  b.node("Add", {"c", "z"}, {c.relu ? "s" : "y"}, {}, "add");
  if (c.relu) b.node("Relu", {"s"}, {"y"}, {}, "relu");
  b.output("y", DataType::kFloat, dims(*y_shape));
  return b;
}

const std::vector<ResidualCase> kCases = {
    {"winograd 3x3", {1, 16, 12, 12}, 16, 3, 1, 1, true, true},
    {"depthwise 3x3", {1, 8, 9, 9}, 8, 3, 1, 8, true, true},
    {"transposed 1x1 on 7x7", {1, 24, 7, 7}, 32, 1, 1, 1, true, true},
    {"pointwise GEMM 1x1 on 12x12", {2, 16, 12, 12}, 24, 1, 1, 1, false, true},
    {"im2col GEMM 3x3 stride 2", {1, 8, 24, 24}, 12, 3, 2, 1, true, false},
};

TEST(ConvResidualFusionTest, AddAndReluJoinTheConvOnEveryPath) {
  for (const ResidualCase& c : kCases) {
    SCOPED_TRACE(c.name);
    std::vector<int64_t> ys;
    const ModelBuilder b = residual_model(c, &ys);
    Graph g = load_resolved(b);
    PassStats stats;
    ASSERT_TRUE(optimize_for_cpu(g, OptimizationLevel::kExtended, &stats).ok());
    EXPECT_EQ(stats.conv_residuals_fused, 1);
    EXPECT_EQ(stats.conv_activations_fused, c.relu ? 1 : 0);
    EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"FusedConv"}));
    const Node* conv = only_node(g, "FusedConv");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->domain, "com.switchyard");
    EXPECT_EQ(conv->since_version, 1);
    EXPECT_EQ(g.opsets.at("com.switchyard"), 1);
    ASSERT_EQ(conv->inputs.size(), 4u);
    EXPECT_EQ(conv->inputs[3], g.find_value("z"));
    EXPECT_EQ(conv->has_input(2), c.bias);
    EXPECT_EQ(conv->attr_string("activation", ""), c.relu ? "Relu" : "");
    // Conv's own attributes carry over.
    EXPECT_EQ(conv->attr_int("group", 0), c.group);
    expect_same_outputs(b, {{"x", sample_tensor(Shape(c.x), 3)}, {"z", sample_tensor(Shape(ys), 4, 2.0f)}});
  }
}

// How many Conv + Add pairs the pass fuses in b's graph (-1 if it fails).
int residual_fusions(const ModelBuilder& b) {
  Graph g = load_resolved(b);
  int fused = 0;
  const Status status = fuse_conv_residual(g, &fused);
  EXPECT_TRUE(status.ok()) << status.to_string();
  return status.ok() ? fused : -1;
}

TEST(ConvResidualFusionTest, BroadcastOrSharedOutputsAreNotFused) {
  // z broadcast over the map: the Add is not an elementwise residual.
  {
    ModelBuilder b(17);
    b.input("x", DataType::kFloat, {1, 4, 6, 6});
    b.input("z", DataType::kFloat, {1, 4, 1, 1});
    b.initializer("w", sample_tensor({4, 4, 1, 1}, 5));
    b.node("Conv", {"x", "w"}, {"c"}, {}, "conv");
    b.node("Add", {"c", "z"}, {"y"}, {}, "add");
    b.output("y", DataType::kFloat, {1, 4, 6, 6});
    EXPECT_EQ(residual_fusions(b), 0);
  }
  // The Conv output is read by another node too.
  {
    ModelBuilder b(17);
    b.input("x", DataType::kFloat, {1, 4, 6, 6});
    b.input("z", DataType::kFloat, {1, 4, 6, 6});
    b.initializer("w", sample_tensor({4, 4, 1, 1}, 6));
    b.node("Conv", {"x", "w"}, {"c"}, {}, "conv");
    b.node("Add", {"c", "z"}, {"y"}, {}, "add");
    b.node("Neg", {"c"}, {"n"}, {}, "neg");
    b.output("y", DataType::kFloat, {1, 4, 6, 6});
    b.output("n", DataType::kFloat, {1, 4, 6, 6});
    EXPECT_EQ(residual_fusions(b), 0);
  }
  // Add(c, c): no second operand to fold.
  {
    ModelBuilder b(17);
    b.input("x", DataType::kFloat, {1, 4, 6, 6});
    b.initializer("w", sample_tensor({4, 4, 1, 1}, 7));
    b.node("Conv", {"x", "w"}, {"c"}, {}, "conv");
    b.node("Add", {"c", "c"}, {"y"}, {}, "add");
    b.output("y", DataType::kFloat, {1, 4, 6, 6});
    EXPECT_EQ(residual_fusions(b), 0);
  }
}

TEST(ConvResidualFusionTest, SavedOptimizedModelReadsBackWithFourInputs) {
  TempDir dir;
  const std::string path = dir.file("residual.onnx");
  std::vector<int64_t> ys;
  const ModelBuilder b = residual_model(kCases[3], &ys);
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", sample_tensor(Shape(kCases[3].x), 8)},
                                                             {"z", sample_tensor(Shape(ys), 9)}};
  auto optimized = run_at(b, OptimizationLevel::kAll, feeds, path);
  ASSERT_TRUE(optimized.ok()) << optimized.status().to_string();
  expect_saved_model_matches_unoptimized(path, b, feeds);
}

}  // namespace
}  // namespace sy::testing
