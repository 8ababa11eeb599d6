// Conv + BatchNormalization folding and Conv + Relu / Clip fusion: each
// pass alone on a loaded graph, then the whole optimizer through a session
// against the basic level.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "pass_test_util.h"

namespace sy::testing {
namespace {

const std::vector<int64_t> kPads1 = {1, 1, 1, 1};

// x[1,3,6,6] -> Conv(3->4, 3x3, pad 1) -> BatchNormalization -> y
ModelBuilder conv_bn_model(bool conv_bias) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1, 3, 6, 6});
  b.initializer("w", sample_tensor({4, 3, 3, 3}, 1, 0.5f));
  std::vector<std::string> conv_inputs = {"x", "w"};
  if (conv_bias) {
    b.initializer("b", make_tensor<float>({4}, {0.1f, -0.2f, 0.3f, 0.0f}));
    conv_inputs.push_back("b");
  }
  b.initializer("scale", make_tensor<float>({4}, {1.5f, 0.5f, -1.0f, 2.0f}));
  b.initializer("shift", make_tensor<float>({4}, {0.1f, 0.2f, -0.3f, 0.0f}));
  b.initializer("mean", make_tensor<float>({4}, {0.05f, -0.1f, 0.2f, 0.3f}));
  b.initializer("var", make_tensor<float>({4}, {1.0f, 0.25f, 2.0f, 0.5f}));
  b.node("Conv", conv_inputs, {"c"}, {AttrSpec("pads", kPads1)}, "conv");
  b.node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"y"}, {AttrSpec("epsilon", 1e-3f)}, "bn");
  b.output("y", DataType::kFloat, {1, 4, 6, 6});
  return b;
}

TEST(ConvBatchNormFusionTest, FoldsIntoWeightsAndBias) {
  for (bool conv_bias : {true, false}) {
    SCOPED_TRACE(conv_bias ? "with Conv bias" : "without Conv bias");
    Graph g = load_resolved(conv_bn_model(conv_bias));
    int fused = 0;
    ASSERT_TRUE(fuse_conv_batchnorm(g, &fused).ok());
    EXPECT_EQ(fused, 1);
    EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Conv"}));
    const Node* conv = only_node(g, "Conv");
    ASSERT_NE(conv, nullptr);
    ASSERT_EQ(conv->inputs.size(), 3u);  // a bias is made when there was none
    ASSERT_NE(g.constant(conv->inputs[1]), nullptr);
    ASSERT_NE(g.constant(conv->inputs[2]), nullptr);
    EXPECT_NE(conv->inputs[1], g.find_value("w"));  // new weights; the shared original is untouched
    EXPECT_EQ(conv->outputs[0], g.find_value("y"));  // the graph output keeps its name

    // Channel 1: s = 0.5 / sqrt(0.25 + 1e-3); B' = (B - mean) * s + shift.
    const double s = 0.5 / std::sqrt(0.25 + 1e-3);
    const double b1 = conv_bias ? -0.2 : 0.0;
    EXPECT_NEAR(g.constant(conv->inputs[2])->data<float>()[1], (b1 + 0.1) * s + 0.2, 1e-6);
    const Tensor* w = g.constant(g.find_value("w"));
    EXPECT_NEAR(g.constant(conv->inputs[1])->data<float>()[27], w->data<float>()[27] * s, 1e-6);

    expect_same_outputs(conv_bn_model(conv_bias), {{"x", sample_tensor({1, 3, 6, 6}, 2)}});
  }
}

TEST(ConvBatchNormFusionTest, ConvOutputWithAnotherReaderIsNotFolded) {
  ModelBuilder b = conv_bn_model(true);
  b.node("Relu", {"c"}, {"r"}, {}, "relu");
  b.output("r", DataType::kFloat, {1, 4, 6, 6});
  Graph g = load_resolved(b);
  int fused = 0;
  ASSERT_TRUE(fuse_conv_batchnorm(g, &fused).ok());
  EXPECT_EQ(fused, 0);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Conv", "BatchNormalization", "Relu"}));
  expect_same_outputs(b, {{"x", sample_tensor({1, 3, 6, 6}, 3)}});
}

TEST(ConvBatchNormFusionTest, RuntimeWeightsAreNotFolded) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1, 2, 4, 4});
  b.input("w", DataType::kFloat, {2, 2, 1, 1});
  for (const char* name : {"scale", "shift", "mean", "var"}) b.initializer(name, make_tensor<float>({2}, {1, 1}));
  b.node("Conv", {"x", "w"}, {"c"}, {}, "conv");
  b.node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"y"}, {}, "bn");
  b.output("y", DataType::kFloat, {1, 2, 4, 4});
  Graph g = load_resolved(b);
  int fused = 0;
  ASSERT_TRUE(fuse_conv_batchnorm(g, &fused).ok());
  EXPECT_EQ(fused, 0);
}

// x -> Conv -> act -> y, where `act` is added by the caller.
ModelBuilder conv_model(int64_t opset, int64_t group = 1) {
  ModelBuilder b(opset);
  const int64_t c = group == 1 ? 3 : group;
  const int64_t m = group == 1 ? 4 : group;
  b.input("x", DataType::kFloat, {1, c, 6, 6});
  b.initializer("w", sample_tensor({m, c / group, 3, 3}, 4, 0.5f));
  b.initializer("b", sample_tensor({m}, 5, 0.5f));
  b.node("Conv", {"x", "w", "b"}, {"c"}, {AttrSpec("pads", kPads1), AttrSpec("group", group)}, "conv");
  return b;
}

TEST(ConvActivationFusionTest, ReluMovesIntoTheConv) {
  ModelBuilder b = conv_model(17);
  b.node("Relu", {"c"}, {"y"}, {}, "relu");
  b.output("y", DataType::kFloat, {1, 4, 6, 6});
  Graph g = load_resolved(b);
  int fused = 0;
  ASSERT_TRUE(fuse_conv_activation(g, &fused).ok());
  EXPECT_EQ(fused, 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"FusedConv"}));
  const Node* conv = only_node(g, "FusedConv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->domain, "com.switchyard");
  EXPECT_EQ(conv->since_version, 1);
  EXPECT_EQ(g.opsets.at("com.switchyard"), 1);
  EXPECT_EQ(conv->attr_string("activation", ""), "Relu");
  EXPECT_EQ(conv->attr_ints("pads"), kPads1);  // Conv's attributes carry over
  EXPECT_EQ(conv->inputs.size(), 3u);
  EXPECT_EQ(conv->outputs[0], g.find_value("y"));
  expect_same_outputs(b, {{"x", sample_tensor({1, 3, 6, 6}, 6)}});
}

TEST(ConvActivationFusionTest, ClipWithConstantBoundsMovesIntoTheConv) {
  // ReLU6 as MobileNet exports it: bounds from Constant nodes (folded
  // first by the optimizer; here as initializers), on a depthwise Conv too.
  for (int64_t group : {int64_t{1}, int64_t{4}}) {
    SCOPED_TRACE("group " + std::to_string(group));
    ModelBuilder b = conv_model(17, group);
    b.initializer("lo", make_tensor<float>({}, {0.0f}));
    b.initializer("hi", make_tensor<float>({}, {0.25f}));
    b.node("Clip", {"c", "lo", "hi"}, {"y"}, {}, "clip");
    b.output("y", DataType::kFloat, {1, 4, 6, 6});
    Graph g = load_resolved(b);
    int fused = 0;
    ASSERT_TRUE(fuse_conv_activation(g, &fused).ok());
    EXPECT_EQ(fused, 1);
    const Node* conv = only_node(g, "FusedConv");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->attr_string("activation", ""), "Clip");
    EXPECT_EQ(conv->attr_floats("activation_params"), (std::vector<float>{0.0f, 0.25f}));
    expect_same_outputs(b, {{"x", sample_tensor({1, group == 1 ? 3 : group, 6, 6}, 7)}});
  }
}

TEST(ConvActivationFusionTest, ClipWithOnlyAMinimum) {
  ModelBuilder b = conv_model(17);
  b.initializer("lo", make_tensor<float>({}, {-0.1f}));
  b.node("Clip", {"c", "lo"}, {"y"}, {}, "clip");
  b.output("y", DataType::kFloat, {1, 4, 6, 6});
  Graph g = load_resolved(b);
  int fused = 0;
  ASSERT_TRUE(fuse_conv_activation(g, &fused).ok());
  ASSERT_EQ(fused, 1);
  const std::vector<float> params = only_node(g, "FusedConv")->attr_floats("activation_params");
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0], -0.1f);
  EXPECT_TRUE(std::isinf(params[1]) && params[1] > 0);
  expect_same_outputs(b, {{"x", sample_tensor({1, 3, 6, 6}, 8)}});
}

TEST(ConvActivationFusionTest, ClipBoundsAsAttributesBeforeOpset11) {
  ModelBuilder b = conv_model(6);
  b.node("Clip", {"c"}, {"y"}, {AttrSpec("min", -0.2f), AttrSpec("max", 0.3f)}, "clip");
  b.output("y", DataType::kFloat, {1, 4, 6, 6});
  Graph g = load_resolved(b);
  int fused = 0;
  ASSERT_TRUE(fuse_conv_activation(g, &fused).ok());
  ASSERT_EQ(fused, 1);
  EXPECT_EQ(only_node(g, "FusedConv")->attr_floats("activation_params"), (std::vector<float>{-0.2f, 0.3f}));
  expect_same_outputs(b, {{"x", sample_tensor({1, 3, 6, 6}, 9)}});
}

TEST(ConvActivationFusionTest, NotFusedWhenItWouldChangeWhatIsVisible) {
  {
    // The Conv output is a graph output too.
    ModelBuilder b = conv_model(17);
    b.node("Relu", {"c"}, {"y"}, {}, "relu");
    b.output("y", DataType::kFloat, {1, 4, 6, 6});
    b.output("c", DataType::kFloat, {1, 4, 6, 6});
    Graph g = load_resolved(b);
    int fused = 0;
    ASSERT_TRUE(fuse_conv_activation(g, &fused).ok());
    EXPECT_EQ(fused, 0);
    expect_same_outputs(b, {{"x", sample_tensor({1, 3, 6, 6}, 10)}});
  }
  {
    // Clip bounds known only at run time.
    ModelBuilder b = conv_model(17);
    b.input("hi", DataType::kFloat, {});
    b.node("Clip", {"c", "", "hi"}, {"y"}, {}, "clip");
    b.output("y", DataType::kFloat, {1, 4, 6, 6});
    Graph g = load_resolved(b);
    int fused = 0;
    ASSERT_TRUE(fuse_conv_activation(g, &fused).ok());
    EXPECT_EQ(fused, 0);
    expect_same_outputs(b, {{"x", sample_tensor({1, 3, 6, 6}, 11)}, {"hi", make_tensor<float>({}, {0.1f})}});
  }
  {
    // Two readers of the Conv output.
    ModelBuilder b = conv_model(17);
    b.node("Relu", {"c"}, {"y"}, {}, "relu");
    b.node("Neg", {"c"}, {"z"}, {}, "neg");
    b.output("y", DataType::kFloat, {1, 4, 6, 6});
    b.output("z", DataType::kFloat, {1, 4, 6, 6});
    Graph g = load_resolved(b);
    int fused = 0;
    ASSERT_TRUE(fuse_conv_activation(g, &fused).ok());
    EXPECT_EQ(fused, 0);
  }
}

TEST(ConvFusionTest, ConvBatchNormReluBecomesOneConv) {
  ModelBuilder chain(17);
  chain.input("x", DataType::kFloat, {1, 3, 6, 6});
  chain.initializer("w", sample_tensor({4, 3, 3, 3}, 1, 0.5f));
  chain.initializer("scale", make_tensor<float>({4}, {1.5f, 0.5f, -1.0f, 2.0f}));
  chain.initializer("shift", make_tensor<float>({4}, {0.1f, 0.2f, -0.3f, 0.0f}));
  chain.initializer("mean", make_tensor<float>({4}, {0.05f, -0.1f, 0.2f, 0.3f}));
  chain.initializer("var", make_tensor<float>({4}, {1.0f, 0.25f, 2.0f, 0.5f}));
  chain.node("Conv", {"x", "w"}, {"c"}, {AttrSpec("pads", kPads1)}, "conv");
  chain.node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"n"}, {}, "bn");
  chain.node("Relu", {"n"}, {"y"}, {}, "relu");
  chain.output("y", DataType::kFloat, {1, 4, 6, 6});
  Graph g = load_resolved(chain);
  PassStats stats;
  ASSERT_TRUE(optimize_for_cpu(g, OptimizationLevel::kExtended, &stats).ok());
  EXPECT_EQ(stats.conv_bn_fused, 1);
  EXPECT_EQ(stats.conv_activations_fused, 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"FusedConv"}));
  // The original BN statistics and weights are no longer held.
  EXPECT_EQ(g.constant(g.find_value("w")), nullptr);
  EXPECT_EQ(g.constant(g.find_value("var")), nullptr);
  EXPECT_GE(stats.constants_dropped, 5);
  expect_same_outputs(chain, {{"x", sample_tensor({1, 3, 6, 6}, 12)}});

  // Basic leaves both fusions alone.
  Graph basic = load_resolved(chain);
  ASSERT_TRUE(optimize(basic, OptimizationLevel::kBasic).ok());
  EXPECT_EQ(remaining_ops(basic), (std::vector<std::string>{"Conv", "BatchNormalization", "Relu"}));
}

}  // namespace
}  // namespace sy::testing
