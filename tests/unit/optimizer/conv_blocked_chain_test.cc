// Channel-blocked chains of Convs with residuals (optimizer/
// conv_blocked_layout.cc), on a small ResNet-like body: a 1x1 entry, a
// stride-1 bottleneck (1x1, 3x3 Winograd, 1x1 + residual), a stride-2 one
// with a downsample (im2col reading blocked X), and a last 3x3 Winograd
// Conv + residual whose output is a graph output (the region's exit: NCHW
// Y, blocked residual). Which tensors go blocked, what each Conv is told,
// and that the blocked model computes what the unblocked one does.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pass_test_util.h"
#include "unit/model/model_test_util.h"

namespace sy::testing {
namespace {

struct ChainBuilder {
  ModelBuilder b{17};
  int seed = 20;

  // Conv `name`: x -> y with a fresh W [m, c, k, k] and bias.
  void conv(const std::string& name, const std::string& x, const std::string& y, int64_t c, int64_t m, int64_t k,
            int64_t stride = 1) {
    const int64_t pad = k / 2;
    b.initializer("w_" + name, sample_tensor({m, c, k, k}, seed++, 1.0f / static_cast<float>(c * k * k)));
    b.initializer("b_" + name, sample_tensor({m}, seed++, 0.2f));
    b.node("Conv", {x, "w_" + name, "b_" + name}, {y},
           {AttrSpec("pads", std::vector<int64_t>{pad, pad, pad, pad}),
            AttrSpec("strides", std::vector<int64_t>{stride, stride})},
           name);
  }
  void relu(const std::string& x, const std::string& y) { b.node("Relu", {x}, {y}, {}, "relu_" + y); }
  // y = Relu(x + z)
  void add_relu(const std::string& x, const std::string& z, const std::string& y) {
    b.node("Add", {x, z}, {y + "_sum"}, {}, "add_" + y);
    relu(y + "_sum", y);
  }
};

// x [1, 16, 15, 15] -> ... -> y [1, 32, 8, 8].
ModelBuilder chain_model() {
  ChainBuilder c;
  c.b.input("x", DataType::kFloat, {1, 16, 15, 15});
  c.conv("entry", "x", "e", 16, 32, 1);
  c.relu("e", "a");
  // Stride-1 bottleneck, residual a.
  c.conv("b1_c1", "a", "b1_1", 32, 16, 1);
  c.relu("b1_1", "b1_1r");
  c.conv("b1_c2", "b1_1r", "b1_2", 16, 16, 3);
  c.relu("b1_2", "b1_2r");
  c.conv("b1_c3", "b1_2r", "b1_3", 16, 32, 1);
  c.add_relu("b1_3", "a", "b");
  // Stride-2 bottleneck with a downsample, 15x15 -> 8x8.
  c.conv("b2_c1", "b", "b2_1", 32, 16, 1);
  c.relu("b2_1", "b2_1r");
  c.conv("b2_c2", "b2_1r", "b2_2", 16, 16, 3, 2);
  c.relu("b2_2", "b2_2r");
  c.conv("b2_c3", "b2_2r", "b2_3", 16, 32, 1);
  c.conv("b2_ds", "b", "ds", 32, 32, 1, 2);
  c.add_relu("b2_3", "ds", "c8");
  // The exit: a Winograd 3x3 + residual into a graph output.
  c.conv("exit", "c8", "x3", 32, 32, 3);
  c.add_relu("x3", "c8", "y");
  c.b.output("y", DataType::kFloat, {1, 32, 8, 8});
  return c.b;
}

const Node* find_node(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (!n.removed && n.name == name) return &n;
  return nullptr;
}

TEST(ConvBlockedChainTest, ResNetLikeBodyRunsBlockedAndAgrees) {
  Graph g;
  // a, b1_1, b1_2, b, b2_1, b2_2, ds, c8; not x (a graph input) nor y.
  EXPECT_EQ(optimize_and_count(chain_model(), OptimizationLevel::kAll, true, &PassStats::conv_layouts_blocked, &g), 8);
  const Node* entry = find_node(g, "entry");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->op_type, "FusedConv");
  EXPECT_EQ(entry->attr_string("output_layout", ""), "NCHW16c");
  EXPECT_FALSE(entry->has_attr("input_layout"));
  for (const char* name : {"b1_c1", "b1_c2", "b1_c3", "b2_c1", "b2_c2", "b2_c3", "b2_ds"}) {
    SCOPED_TRACE(name);
    const Node* n = find_node(g, name);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->attr_string("input_layout", ""), "NCHW16c");
    EXPECT_EQ(n->attr_string("output_layout", ""), "NCHW16c");
  }
  for (const char* name : {"b1_c3", "b2_c3", "exit"}) {
    SCOPED_TRACE(name);
    const Node* n = find_node(g, name);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->has_input(3), true);
    EXPECT_EQ(n->attr_string("residual_layout", ""), "NCHW16c");
  }
  const Node* exit = find_node(g, "exit");
  ASSERT_NE(exit, nullptr);
  EXPECT_EQ(exit->attr_string("input_layout", ""), "NCHW16c");
  EXPECT_FALSE(exit->has_attr("output_layout"));
  expect_same_outputs(chain_model(), {{"x", sample_tensor({1, 16, 15, 15}, 3, 2.0f)}});
}

TEST(ConvBlockedChainTest, AnNchwResidualKeepsItsConvOutputNchw) {
  // x itself as the first block's residual: x is a graph input, NCHW, so
  // that block's output (which would need a blocked residual) stays NCHW.
  ChainBuilder c;
  c.b.input("x", DataType::kFloat, {1, 32, 9, 9});
  c.conv("c1", "x", "h", 32, 16, 1);
  c.relu("h", "hr");
  c.conv("c3", "hr", "p", 16, 32, 1);
  c.add_relu("p", "x", "r");
  c.conv("after", "r", "y", 32, 16, 1);
  c.b.output("y", DataType::kFloat, {1, 16, 9, 9});
  Graph g;
  EXPECT_EQ(optimize_and_count(c.b, OptimizationLevel::kAll, true, &PassStats::conv_layouts_blocked, &g), 1);  // h
  const Node* c3 = find_node(g, "c3");
  ASSERT_NE(c3, nullptr);
  EXPECT_FALSE(c3->has_attr("output_layout"));
  EXPECT_FALSE(c3->has_attr("residual_layout"));
  expect_same_outputs(c.b, {{"x", sample_tensor({1, 32, 9, 9}, 4, 2.0f)}});
}

}  // namespace
}  // namespace sy::testing
