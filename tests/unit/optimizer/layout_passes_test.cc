// The level-all layout passes: Transpose pairs and Reshape chains.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pass_test_util.h"

namespace sy::testing {
namespace {

using Perm = std::vector<int64_t>;

// x[2,3,4] -> Transpose(p1) -> Transpose(p2) -> Relu -> y
ModelBuilder transpose_pair(const Perm& p1, const Perm& p2, const std::vector<DimSpec>& out_dims) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3, 4});
  b.node("Transpose", {"x"}, {"t1"}, {AttrSpec("perm", p1)}, "t1");
  b.node("Transpose", {"t1"}, {"t2"}, {AttrSpec("perm", p2)}, "t2");
  b.node("Relu", {"t2"}, {"y"}, {}, "relu");
  b.output("y", DataType::kFloat, out_dims);
  return b;
}

TEST(TransposeCancellationTest, InversePermutationsCancel) {
  // NCHW -> NHWC -> NCHW, as around a layout-sensitive op.
  ModelBuilder b = transpose_pair({0, 2, 1}, {0, 2, 1}, {2, 3, 4});
  Graph g = load_resolved(b);
  int removed = 0;
  ASSERT_TRUE(cancel_transposes(g, &removed).ok());
  EXPECT_EQ(removed, 2);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Relu"}));
  EXPECT_EQ(only_node(g, "Relu")->inputs[0], g.find_value("x"));
  expect_same_outputs(b, {{"x", sample_tensor({2, 3, 4}, 31)}});
}

TEST(TransposeCancellationTest, OtherPermutationsCompose) {
  // [2,3,4] -(1,2,0)-> [3,4,2] -(2,0,1)-> ... composed c[i] = p1[p2[i]].
  ModelBuilder b = transpose_pair({1, 2, 0}, {1, 0, 2}, {4, 3, 2});
  Graph g = load_resolved(b);
  int removed = 0;
  ASSERT_TRUE(cancel_transposes(g, &removed).ok());
  EXPECT_EQ(removed, 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Transpose", "Relu"}));
  const Node* t = only_node(g, "Transpose");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->inputs[0], g.find_value("x"));
  EXPECT_EQ(t->attr_ints("perm"), (Perm{2, 1, 0}));
  expect_same_outputs(b, {{"x", sample_tensor({2, 3, 4}, 32)}});
}

TEST(TransposeCancellationTest, AbsentPermReversesTheAxes) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3, 4});
  b.node("Transpose", {"x"}, {"t1"}, {}, "t1");
  b.node("Transpose", {"t1"}, {"y"}, {}, "t2");
  b.output("y", DataType::kFloat, {2, 3, 4});
  Graph g = load_resolved(b);
  int removed = 0;
  ASSERT_TRUE(cancel_transposes(g, &removed).ok());
  // y is a graph output: its producer stays (identity permutation), reading x.
  EXPECT_EQ(removed, 1);
  const Node* t = only_node(g, "Transpose");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->attr_ints("perm"), (Perm{0, 1, 2}));
  EXPECT_EQ(t->outputs[0], g.find_value("y"));
  expect_same_outputs(b, {{"x", sample_tensor({2, 3, 4}, 33)}});
}

TEST(TransposeCancellationTest, SharedMiddleValueIsKept) {
  ModelBuilder b = transpose_pair({0, 2, 1}, {0, 2, 1}, {2, 3, 4});
  b.output("t1", DataType::kFloat, {2, 4, 3});
  Graph g = load_resolved(b);
  int removed = 0;
  ASSERT_TRUE(cancel_transposes(g, &removed).ok());
  EXPECT_EQ(removed, 0);
  expect_same_outputs(b, {{"x", sample_tensor({2, 3, 4}, 34)}});
}

TEST(TransposeCancellationTest, ChainOfThreeFolds) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3, 4});
  b.node("Transpose", {"x"}, {"t1"}, {AttrSpec("perm", Perm{1, 0, 2})}, "t1");
  b.node("Transpose", {"t1"}, {"t2"}, {AttrSpec("perm", Perm{0, 2, 1})}, "t2");
  b.node("Transpose", {"t2"}, {"t3"}, {AttrSpec("perm", Perm{2, 1, 0})}, "t3");
  b.node("Neg", {"t3"}, {"y"}, {}, "neg");
  b.output("y", DataType::kFloat, {2, 4, 3});
  Graph g = load_resolved(b);
  int removed = 0;
  ASSERT_TRUE(cancel_transposes(g, &removed).ok());
  // Composed: (1,0,2) then (0,2,1) then (2,1,0) is (0,2,1), one Transpose.
  EXPECT_EQ(removed, 2);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Transpose", "Neg"}));
  EXPECT_EQ(only_node(g, "Transpose")->attr_ints("perm"), (Perm{0, 2, 1}));
  expect_same_outputs(b, {{"x", sample_tensor({2, 3, 4}, 35)}});
}

// x[2,3,4] -> Reshape(s1) -> Reshape(s2) -> Neg -> y
ModelBuilder reshape_pair(const std::vector<int64_t>& s1, const std::vector<int64_t>& s2,
                          const std::vector<DimSpec>& out_dims) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3, 4});
  b.initializer("s1", make_tensor<int64_t>({static_cast<int64_t>(s1.size())}, s1));
  b.initializer("s2", make_tensor<int64_t>({static_cast<int64_t>(s2.size())}, s2));
  b.node("Reshape", {"x", "s1"}, {"r1"}, {}, "r1");
  b.node("Reshape", {"r1", "s2"}, {"r2"}, {}, "r2");
  b.node("Neg", {"r2"}, {"y"}, {}, "neg");
  b.output("y", DataType::kFloat, out_dims);
  return b;
}

TEST(ReshapeCollapseTest, TheLastReshapeReadsTheFirstInput) {
  ModelBuilder b = reshape_pair({6, 4}, {4, -1}, {4, 6});
  Graph g = load_resolved(b);
  int removed = 0;
  ASSERT_TRUE(collapse_reshapes(g, &removed).ok());
  EXPECT_EQ(removed, 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Reshape", "Neg"}));
  const Node* r = only_node(g, "Reshape");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->inputs[0], g.find_value("x"));
  EXPECT_EQ(r->inputs[1], g.find_value("s2"));
  expect_same_outputs(b, {{"x", sample_tensor({2, 3, 4}, 41)}});
}

TEST(ReshapeCollapseTest, ZeroInTheSecondShapeKeepsBoth) {
  // 0 copies the first Reshape's dim (6), not x's (2).
  ModelBuilder b = reshape_pair({6, 4}, {0, 2, 2}, {6, 2, 2});
  Graph g = load_resolved(b);
  int removed = 0;
  ASSERT_TRUE(collapse_reshapes(g, &removed).ok());
  EXPECT_EQ(removed, 0);
  expect_same_outputs(b, {{"x", sample_tensor({2, 3, 4}, 42)}});
}

TEST(ReshapeCollapseTest, FlattenThenReshape) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3, 4});
  b.initializer("s", make_tensor<int64_t>({2}, {3, 8}));
  b.node("Flatten", {"x"}, {"f"}, {AttrSpec("axis", 1)}, "flatten");
  b.node("Reshape", {"f", "s"}, {"y"}, {}, "reshape");
  b.output("y", DataType::kFloat, {3, 8});
  Graph g = load_resolved(b);
  int removed = 0;
  ASSERT_TRUE(collapse_reshapes(g, &removed).ok());
  EXPECT_EQ(removed, 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Reshape"}));
  expect_same_outputs(b, {{"x", sample_tensor({2, 3, 4}, 43)}});
}

TEST(ReshapeCollapseTest, RuntimeShapeKeepsBoth) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3, 4});
  b.input("s", DataType::kInt64, {2});
  b.initializer("s1", make_tensor<int64_t>({2}, {6, 4}));
  b.node("Reshape", {"x", "s1"}, {"r1"}, {}, "r1");
  b.node("Reshape", {"r1", "s"}, {"y"}, {}, "r2");
  b.output_without_shape("y", DataType::kFloat);
  Graph g = load_resolved(b);
  int removed = 0;
  ASSERT_TRUE(collapse_reshapes(g, &removed).ok());
  EXPECT_EQ(removed, 0);
}

TEST(LayoutPassesTest, OnlyLevelAllRunsThem) {
  ModelBuilder b = transpose_pair({0, 2, 1}, {0, 2, 1}, {2, 3, 4});
  Graph extended = load_resolved(b);
  ASSERT_TRUE(optimize_for_cpu(extended, OptimizationLevel::kExtended).ok());
  EXPECT_EQ(extended.num_live_nodes(), 3u);
  Graph all = load_resolved(b);
  PassStats stats;
  ASSERT_TRUE(optimize_for_cpu(all, OptimizationLevel::kAll, &stats).ok());
  EXPECT_EQ(stats.transposes_removed, 2);
  EXPECT_EQ(all.num_live_nodes(), 1u);
}

}  // namespace
}  // namespace sy::testing
