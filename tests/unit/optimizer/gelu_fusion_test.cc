// GELU fusion: the erf and tanh chains, in the operand orders exporters
// write, become one Gelu; chains with another reader or other constants
// stay. Outputs are compared with the basic level through sessions.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pass_test_util.h"

namespace sy::testing {
namespace {

// Where the fused chain starts and ends: y = gelu(x), x = a + bias so that x
// is produced by a node (as after a MatMul + bias in BERT).
ModelBuilder start(int64_t opset = 17) {
  ModelBuilder b(opset);
  b.input("a", DataType::kFloat, {"n", 16});
  b.initializer("bias", sample_tensor({16}, 21, 0.5f));
  b.node("Add", {"a", "bias"}, {"x"}, {}, "bias_add");
  b.initializer("half", make_tensor<float>({}, {0.5f}));
  b.initializer("one", make_tensor<float>({}, {1.0f}));
  return b;
}

void finish(ModelBuilder& b) { b.output("y", DataType::kFloat, {"n", 16}); }

// As BERT exports it: (x * (Erf(x / sqrt 2) + 1)) * 0.5, the constants of
// shape [1] as PyTorch writes them.
ModelBuilder erf_bert_order() {
  ModelBuilder b = start();
  b.initializer("sqrt2", make_tensor<float>({1}, {1.4142135f}));
  b.node("Div", {"x", "sqrt2"}, {"d"}, {}, "div");
  b.node("Erf", {"d"}, {"e"}, {}, "erf");
  b.node("Add", {"e", "one"}, {"p"}, {}, "add1");
  b.node("Mul", {"x", "p"}, {"m"}, {}, "mul_x");
  b.node("Mul", {"m", "half"}, {"y"}, {}, "mul_half");
  finish(b);
  return b;
}

// 0.5 * x first, and x * (1 / sqrt 2) rather than a Div.
ModelBuilder erf_half_first() {
  ModelBuilder b = start();
  b.initializer("inv_sqrt2", make_tensor<float>({}, {0.70710678f}));
  b.node("Mul", {"half", "x"}, {"h"}, {}, "mul_half");
  b.node("Mul", {"x", "inv_sqrt2"}, {"d"}, {}, "scale");
  b.node("Erf", {"d"}, {"e"}, {}, "erf");
  b.node("Add", {"one", "e"}, {"p"}, {}, "add1");
  b.node("Mul", {"h", "p"}, {"y"}, {}, "mul");
  finish(b);
  return b;
}

// x * (0.5 * (1 + erf)).
ModelBuilder erf_half_times_p() {
  ModelBuilder b = start();
  b.initializer("sqrt2", make_tensor<float>({}, {1.41421356f}));
  b.node("Div", {"x", "sqrt2"}, {"d"}, {}, "div");
  b.node("Erf", {"d"}, {"e"}, {}, "erf");
  b.node("Add", {"e", "one"}, {"p"}, {}, "add1");
  b.node("Mul", {"p", "half"}, {"q"}, {}, "mul_half");
  b.node("Mul", {"x", "q"}, {"y"}, {}, "mul_x");
  finish(b);
  return b;
}

// As GPT-2 exports it: 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))),
// the cube as Pow(x, 3) or as x * (x * x).
ModelBuilder tanh_gpt2(bool cube_by_mul) {
  ModelBuilder b = start();
  b.initializer("k", make_tensor<float>({}, {0.7978846f}));
  b.initializer("c", make_tensor<float>({}, {0.044715f}));
  b.initializer("three", make_tensor<float>({}, {3.0f}));
  b.node("Mul", {"x", "half"}, {"h"}, {}, "mul_half");
  if (cube_by_mul) {
    b.node("Mul", {"x", "x"}, {"sq"}, {}, "square");
    b.node("Mul", {"x", "sq"}, {"cube"}, {}, "cube");
  } else {
    b.node("Pow", {"x", "three"}, {"cube"}, {}, "pow");
  }
  b.node("Mul", {"cube", "c"}, {"t"}, {}, "mul_c");
  b.node("Add", {"x", "t"}, {"s"}, {}, "add_x");
  b.node("Mul", {"s", "k"}, {"u"}, {}, "mul_k");
  b.node("Tanh", {"u"}, {"th"}, {}, "tanh");
  b.node("Add", {"th", "one"}, {"p"}, {}, "add1");
  b.node("Mul", {"h", "p"}, {"y"}, {}, "mul");
  finish(b);
  return b;
}

std::vector<std::pair<std::string, Tensor>> feeds() { return {{"a", sample_tensor({3, 16}, 22, 4.0f)}}; }

void expect_fused(const ModelBuilder& b, const std::string& approximate) {
  Graph g = load_resolved(b);
  int fused = 0;
  ASSERT_TRUE(fuse_gelu(g, &fused).ok());
  EXPECT_EQ(fused, 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Add", "Gelu"}));
  const Node* gelu = only_node(g, "Gelu");
  ASSERT_NE(gelu, nullptr);
  EXPECT_EQ(gelu->inputs, (std::vector<ValueId>{g.find_value("x")}));
  EXPECT_EQ(gelu->outputs, (std::vector<ValueId>{g.find_value("y")}));
  EXPECT_EQ(gelu->attr_string("approximate", "none"), approximate);
  // Gelu first appears in opset 20; the opset-17 model's node says so.
  EXPECT_EQ(gelu->since_version, 20);
  expect_same_outputs(b, feeds());
}

TEST(GeluFusionTest, ErfAsBertExportsIt) { expect_fused(erf_bert_order(), "none"); }
TEST(GeluFusionTest, ErfWithHalfTimesXFirst) { expect_fused(erf_half_first(), "none"); }
TEST(GeluFusionTest, ErfWithHalfTimesTheSum) { expect_fused(erf_half_times_p(), "none"); }
TEST(GeluFusionTest, TanhAsGpt2ExportsIt) { expect_fused(tanh_gpt2(false), "tanh"); }
TEST(GeluFusionTest, TanhWithTheCubeAsProducts) { expect_fused(tanh_gpt2(true), "tanh"); }

TEST(GeluFusionTest, ConstantNodesFoldFirstThroughTheOptimizer) {
  // PyTorch writes the scalars as Constant nodes; the extended level folds
  // them before matching.
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"n", 16});
  b.node("Constant", {}, {"sqrt2"}, {AttrSpec("value", make_tensor<float>({}, {1.4142135f}))}, "c_sqrt2");
  b.node("Constant", {}, {"one"}, {AttrSpec("value", make_tensor<float>({}, {1.0f}))}, "c_one");
  b.node("Constant", {}, {"half"}, {AttrSpec("value", make_tensor<float>({}, {0.5f}))}, "c_half");
  b.node("Div", {"x", "sqrt2"}, {"d"}, {}, "div");
  b.node("Erf", {"d"}, {"e"}, {}, "erf");
  b.node("Add", {"e", "one"}, {"p"}, {}, "add1");
  b.node("Mul", {"x", "p"}, {"m"}, {}, "mul_x");
  b.node("Mul", {"m", "half"}, {"y"}, {}, "mul_half");
  b.output("y", DataType::kFloat, {"n", 16});
  Graph g = load_resolved(b);
  PassStats stats;
  ASSERT_TRUE(optimize(g, OptimizationLevel::kExtended, &stats).ok());
  EXPECT_EQ(stats.gelus_fused, 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Gelu"}));
  expect_same_outputs(b, {{"x", sample_tensor({2, 16}, 23, 5.0f)}});
}

TEST(GeluFusionTest, XOfUnknownRankWithScalarConstants) {
  // In BERT x comes after a Reshape to a run-time shape, so inference does
  // not know its rank; rank-0 constants cannot change its shape.
  ModelBuilder b(17);
  b.input("a", DataType::kFloat, {3, 16});
  b.input("shape", DataType::kInt64, {"k"});  // its length, and so x's rank, known at run time
  b.initializer("sqrt2", make_tensor<float>({}, {1.4142135f}));
  b.initializer("one", make_tensor<float>({}, {1.0f}));
  b.initializer("half", make_tensor<float>({}, {0.5f}));
  b.node("Reshape", {"a", "shape"}, {"x"}, {}, "reshape");
  b.node("Div", {"x", "sqrt2"}, {"d"}, {}, "div");
  b.node("Erf", {"d"}, {"e"}, {}, "erf");
  b.node("Add", {"e", "one"}, {"p"}, {}, "add1");
  b.node("Mul", {"x", "p"}, {"m"}, {}, "mul_x");
  b.node("Mul", {"m", "half"}, {"y"}, {}, "mul_half");
  b.output_without_shape("y", DataType::kFloat);
  Graph g = load_resolved(b);
  ASSERT_FALSE(g.values[static_cast<size_t>(g.find_value("x"))].type.has_shape);
  int fused = 0;
  ASSERT_TRUE(fuse_gelu(g, &fused).ok());
  EXPECT_EQ(fused, 1);
  expect_same_outputs(b, {{"a", sample_tensor({3, 16}, 24, 4.0f)}, {"shape", make_tensor<int64_t>({2}, {6, 8})}});
}

TEST(GeluFusionTest, ChainWithAnotherReaderIsKept) {
  ModelBuilder b = erf_bert_order();
  b.output("e", DataType::kFloat, {"n", 16});  // the Erf output is visible
  Graph g = load_resolved(b);
  int fused = 0;
  ASSERT_TRUE(fuse_gelu(g, &fused).ok());
  EXPECT_EQ(fused, 0);
  EXPECT_EQ(only_node(g, "Gelu"), nullptr);
  expect_same_outputs(b, feeds());
}

TEST(GeluFusionTest, OtherConstantsAreNotGelu) {
  ModelBuilder b = start();
  b.initializer("sqrt2", make_tensor<float>({}, {1.4142135f}));
  b.initializer("not_half", make_tensor<float>({}, {0.6f}));
  b.node("Div", {"x", "sqrt2"}, {"d"}, {}, "div");
  b.node("Erf", {"d"}, {"e"}, {}, "erf");
  b.node("Add", {"e", "one"}, {"p"}, {}, "add1");
  b.node("Mul", {"x", "p"}, {"m"}, {}, "mul_x");
  b.node("Mul", {"m", "not_half"}, {"y"}, {}, "mul_half");
  finish(b);
  Graph g = load_resolved(b);
  int fused = 0;
  ASSERT_TRUE(fuse_gelu(g, &fused).ok());
  EXPECT_EQ(fused, 0);
  expect_same_outputs(b, feeds());
}

TEST(GeluFusionTest, ConstantThatBroadcastsXIsNotFused) {
  // 0.5 of shape [1,1,1] makes the [n,16] chain's output [1,n,16]; a Gelu
  // of x would lose the leading dim.
  ModelBuilder b = start();
  b.initializer("sqrt2", make_tensor<float>({}, {1.4142135f}));
  b.initializer("half3", make_tensor<float>({1, 1, 1}, {0.5f}));
  b.node("Div", {"x", "sqrt2"}, {"d"}, {}, "div");
  b.node("Erf", {"d"}, {"e"}, {}, "erf");
  b.node("Add", {"e", "one"}, {"p"}, {}, "add1");
  b.node("Mul", {"x", "p"}, {"m"}, {}, "mul_x");
  b.node("Mul", {"m", "half3"}, {"y"}, {}, "mul_half");
  b.output("y", DataType::kFloat, {1, "n", 16});
  Graph g = load_resolved(b);
  int fused = 0;
  ASSERT_TRUE(fuse_gelu(g, &fused).ok());
  EXPECT_EQ(fused, 0);
  expect_same_outputs(b, feeds());
}

TEST(GeluFusionTest, ErfOfAnotherValueIsNotGelu) {
  // x * 0.5 * (1 + erf(z / sqrt 2)) with z != x.
  ModelBuilder b = start();
  b.input("z", DataType::kFloat, {"n", 16});
  b.initializer("sqrt2", make_tensor<float>({}, {1.4142135f}));
  b.node("Div", {"z", "sqrt2"}, {"d"}, {}, "div");
  b.node("Erf", {"d"}, {"e"}, {}, "erf");
  b.node("Add", {"e", "one"}, {"p"}, {}, "add1");
  b.node("Mul", {"x", "p"}, {"m"}, {}, "mul_x");
  b.node("Mul", {"m", "half"}, {"y"}, {}, "mul_half");
  finish(b);
  Graph g = load_resolved(b);
  int fused = 0;
  ASSERT_TRUE(fuse_gelu(g, &fused).ok());
  EXPECT_EQ(fused, 0);
}

}  // namespace
}  // namespace sy::testing
