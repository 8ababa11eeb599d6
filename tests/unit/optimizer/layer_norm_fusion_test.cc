// LayerNormalization fusion: the decomposed chain older exporters write,
// with and without the affine step, axes as attribute or input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pass_test_util.h"

namespace sy::testing {
namespace {

// x[2,3,8] -> the decomposed layer norm over `axes` -> y. Opset 13 takes
// the axes as an attribute, opset 18 as an input.
ModelBuilder decomposed(int64_t opset, const std::vector<int64_t>& axes, bool affine, bool square_by_mul = false) {
  ModelBuilder b(opset);
  b.input("x", DataType::kFloat, {2, 3, 8});
  b.initializer("two", make_tensor<float>({}, {2.0f}));
  b.initializer("eps", make_tensor<float>({}, {1e-5f}));
  std::vector<std::string> mean_in = {"x"};
  std::vector<std::string> var_in = {"sq"};
  std::vector<AttrSpec> attrs;
  if (opset < 18) {
    attrs.push_back(AttrSpec("axes", axes));
  } else {
    b.initializer("axes", make_tensor<int64_t>({static_cast<int64_t>(axes.size())}, axes));
    mean_in.push_back("axes");
    var_in.push_back("axes");
  }
  b.node("ReduceMean", mean_in, {"mean"}, attrs, "mean");
  b.node("Sub", {"x", "mean"}, {"d"}, {}, "sub");
  if (square_by_mul) b.node("Mul", {"d", "d"}, {"sq"}, {}, "square");
  else b.node("Pow", {"d", "two"}, {"sq"}, {}, "square");
  b.node("ReduceMean", var_in, {"var"}, attrs, "var");
  b.node("Add", {"var", "eps"}, {"ve"}, {}, "add_eps");
  b.node("Sqrt", {"ve"}, {"sd"}, {}, "sqrt");
  if (affine) {
    b.initializer("gamma", sample_tensor({8}, 61, 2.0f));
    b.initializer("beta", sample_tensor({8}, 62, 1.0f));
    b.node("Div", {"d", "sd"}, {"n"}, {}, "div");
    b.node("Mul", {"n", "gamma"}, {"m"}, {}, "scale");
    b.node("Add", {"m", "beta"}, {"y"}, {}, "shift");
  } else {
    b.node("Div", {"d", "sd"}, {"y"}, {}, "div");
  }
  b.output("y", DataType::kFloat, {2, 3, 8});
  return b;
}

std::vector<std::pair<std::string, Tensor>> feeds() { return {{"x", sample_tensor({2, 3, 8}, 63, 3.0f)}}; }

TEST(LayerNormFusionTest, AffineChainWithAxesAttribute) {
  const ModelBuilder b = decomposed(13, {-1}, true);
  Graph g = load_resolved(b);
  int fused = 0;
  ASSERT_TRUE(fuse_layer_norm(g, &fused).ok());
  EXPECT_EQ(fused, 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"LayerNormalization"}));
  const Node* ln = only_node(g, "LayerNormalization");
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(ln->since_version, 17);
  EXPECT_EQ(ln->inputs, (std::vector<ValueId>{g.find_value("x"), g.find_value("gamma"), g.find_value("beta")}));
  EXPECT_EQ(ln->outputs[0], g.find_value("y"));
  EXPECT_EQ(ln->attr_int("axis", 0), -1);
  EXPECT_FLOAT_EQ(ln->attr_float("epsilon", 0), 1e-5f);
  expect_same_outputs(b, feeds());
}

TEST(LayerNormFusionTest, PlainChainOverTwoAxesWithAxesInput) {
  // Positive axes {1, 2} of a rank-3 tensor are the last two; no gamma or
  // beta, and the square as d * d.
  const ModelBuilder b = decomposed(18, {1, 2}, false, true);
  Graph g = load_resolved(b);
  int fused = 0;
  ASSERT_TRUE(fuse_layer_norm(g, &fused).ok());
  EXPECT_EQ(fused, 1);
  const Node* ln = only_node(g, "LayerNormalization");
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(ln->attr_int("axis", 0), -2);
  ASSERT_EQ(ln->inputs.size(), 2u);  // Scale made as ones
  const Tensor* scale = g.constant(ln->inputs[1]);
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->num_elements(), 24);
  EXPECT_EQ(scale->data<float>()[23], 1.0f);
  expect_same_outputs(b, feeds());
}

TEST(LayerNormFusionTest, LeadingAxesAreNotLayerNorm) {
  const ModelBuilder b = decomposed(13, {1}, true);
  Graph g = load_resolved(b);
  int fused = 0;
  ASSERT_TRUE(fuse_layer_norm(g, &fused).ok());
  EXPECT_EQ(fused, 0);
}

TEST(LayerNormFusionTest, VisibleIntermediateKeepsTheChain) {
  ModelBuilder b = decomposed(13, {-1}, true);
  b.output("d", DataType::kFloat, {2, 3, 8});
  Graph g = load_resolved(b);
  int fused = 0;
  ASSERT_TRUE(fuse_layer_norm(g, &fused).ok());
  EXPECT_EQ(fused, 0);
  expect_same_outputs(b, feeds());
}

TEST(LayerNormFusionTest, ExtendedLevelFusesIt) {
  Graph g = load_resolved(decomposed(13, {-1}, true));
  PassStats stats;
  ASSERT_TRUE(optimize(g, OptimizationLevel::kExtended, &stats).ok());
  EXPECT_EQ(stats.layer_norms_fused, 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"LayerNormalization"}));
}

}  // namespace
}  // namespace sy::testing
