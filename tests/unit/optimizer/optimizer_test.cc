// Graph passes, each alone on a loaded graph, and the whole optimizer
// through a Session compared with an unoptimized one.
#include "optimizer/optimizer.h"
#include "optimizer/provider_rewrites.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/loader.h"
#include "model/resolve.h"
#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"
#include "pass_test_util.h"

namespace sy::testing {
namespace {

const Tensor* constant_named(const Graph& g, const std::string& name) {
  const ValueId v = g.find_value(name);
  return v == kNoValue ? nullptr : g.constant(v);
}

// ---- constant folding --------------------------------------------------------

// c3 = Relu((w1 + w2) * w3); y = x + c3
ModelBuilder constant_chain_model() {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"n", 3});
  b.initializer("w1", make_tensor<float>({3}, {1, 2, 3}));
  b.initializer("w2", make_tensor<float>({3}, {-4, 1, 0.5f}));
  b.initializer("w3", make_tensor<float>({3}, {2, -1, 2}));
  b.node("Add", {"w1", "w2"}, {"c1"}, {}, "c_add");
  b.node("Mul", {"c1", "w3"}, {"c2"}, {}, "c_mul");
  b.node("Relu", {"c2"}, {"c3"}, {}, "c_relu");
  b.node("Add", {"x", "c3"}, {"y"}, {}, "add");
  b.output("y", DataType::kFloat, {"n", 3});
  return b;
}

TEST(OptimizerTest, ConstantChainFoldsToOneConstant) {
  Graph g = load_resolved(constant_chain_model());
  int folded = 0;
  ASSERT_TRUE(fold_constants(g, &folded).ok());
  EXPECT_EQ(folded, 3);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Add"}));
  const Tensor* c3 = constant_named(g, "c3");
  ASSERT_NE(c3, nullptr);
  // ((1-4)*2, (2+1)*-1, (3+0.5)*2) -> Relu
  EXPECT_EQ(to_vector<float>(*c3), (std::vector<float>{0, 0, 7}));
  const Value& v = g.values[static_cast<size_t>(g.find_value("c3"))];
  EXPECT_TRUE(v.is_initializer);
  EXPECT_EQ(v.type.type_string(), "tensor(float)");
  EXPECT_EQ(v.type.shape_string(), "[3]");
  // The remaining Add reads the folded value.
  for (const Node& n : g.nodes) {
    if (!n.removed) {
      EXPECT_EQ(n.inputs[1], g.find_value("c3"));
    }
  }
}

TEST(OptimizerTest, ConstantChainGivesTheSameOutput) {
  const ModelBuilder b = constant_chain_model();
  Tensor x = make_tensor<float>({2, 3}, {1, 1, 1, -2, 5, 0.25f});
  auto folded = run_at(b, OptimizationLevel::kAll, {{"x", x}});
  auto plain = run_at(b, OptimizationLevel::kDisableAll, {{"x", x}});
  ASSERT_TRUE(folded.ok()) << folded.status().to_string();
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  EXPECT_EQ(to_vector<float>((*folded)[0]), (std::vector<float>{1, 1, 8, -2, 5, 7.25f}));
  expect_tensor_eq((*folded)[0], (*plain)[0]);
}

TEST(OptimizerTest, ConstantNodeFolds) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2});
  b.node("Constant", {}, {"c"}, {AttrSpec("value", make_tensor<float>({2}, {3, 4}))}, "const");
  b.node("Mul", {"x", "c"}, {"y"}, {}, "mul");
  b.output("y", DataType::kFloat, {2});
  Graph g = load_resolved(b);
  int folded = 0;
  ASSERT_TRUE(fold_constants(g, &folded).ok());
  EXPECT_EQ(folded, 1);
  ASSERT_NE(constant_named(g, "c"), nullptr);
  EXPECT_EQ(to_vector<float>(*constant_named(g, "c")), (std::vector<float>{3, 4}));
}

TEST(OptimizerTest, NodeWithRuntimeInputDoesNotFold) {
  Graph g = load_resolved(constant_chain_model());
  int folded = 0;
  ASSERT_TRUE(fold_constants(g, &folded).ok());
  EXPECT_EQ(constant_named(g, "y"), nullptr);
}

TEST(OptimizerTest, ShapeOfStaticInputFolds) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3, 5});
  b.initializer("k", make_tensor<int64_t>({3}, {10, 10, 10}));
  b.node("Shape", {"x"}, {"s"}, {}, "shape");
  b.node("Mul", {"s", "k"}, {"y"}, {}, "mul");
  b.node("Shape", {"x"}, {"tail"}, {AttrSpec("start", 1)}, "shape_tail");
  b.node("Shape", {"x"}, {"mid"}, {AttrSpec("start", -2), AttrSpec("end", -1)}, "shape_mid");
  b.output("y", DataType::kInt64, {3});
  b.output("tail", DataType::kInt64, {2});
  b.output("mid", DataType::kInt64, {1});
  Graph g = load_resolved(b);
  int folded = 0;
  ASSERT_TRUE(fold_constants(g, &folded).ok());
  EXPECT_EQ(folded, 4);  // three Shapes, then the Mul on the folded shape
  EXPECT_TRUE(remaining_ops(g).empty());
  ASSERT_NE(constant_named(g, "y"), nullptr);
  EXPECT_EQ(to_vector<int64_t>(*constant_named(g, "y")), (std::vector<int64_t>{20, 30, 50}));
  EXPECT_EQ(to_vector<int64_t>(*constant_named(g, "tail")), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(to_vector<int64_t>(*constant_named(g, "mid")), (std::vector<int64_t>{3}));

  // And through a session: a model whose outputs are all constants.
  auto r = run_at(b, OptimizationLevel::kAll, {{"x", Tensor::allocate(DataType::kFloat, Shape{2, 3, 5}).value()}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<int64_t>((*r)[0]), (std::vector<int64_t>{20, 30, 50}));
  EXPECT_EQ(to_vector<int64_t>((*r)[1]), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(to_vector<int64_t>((*r)[2]), (std::vector<int64_t>{3}));
}

TEST(OptimizerTest, ShapeOfSymbolicInputDoesNotFold) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"n", 3});
  b.node("Shape", {"x"}, {"s"}, {}, "shape");
  b.output("s", DataType::kInt64, {2});
  Graph g = load_resolved(b);
  int folded = 0;
  ASSERT_TRUE(fold_constants(g, &folded).ok());
  EXPECT_EQ(folded, 0);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Shape"}));
  auto r = run_at(b, OptimizationLevel::kAll, {{"x", Tensor::allocate(DataType::kFloat, Shape{4, 3}).value()}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<int64_t>((*r)[0]), (std::vector<int64_t>{4, 3}));
}

TEST(OptimizerTest, DeclaredShapeContradictingInferenceIsNotFolded) {
  // The inferred shape wins (or the contradiction is an error naming the
  // value); folding must never bake in the wrong declared shape.
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {6});
  b.initializer("target", make_tensor<int64_t>({2}, {2, 3}));
  b.node("Reshape", {"x", "target"}, {"r"}, {}, "reshape");
  b.node("Shape", {"r"}, {"s"}, {}, "shape");
  b.output("r", DataType::kFloat, {});  // wrong: a scalar
  b.output("s", DataType::kInt64, {2});
  auto r = run_at(b, OptimizationLevel::kAll, {{"x", make_tensor<float>({6}, {1, 2, 3, 4, 5, 6})}});
  if (!r.ok()) {
    EXPECT_NE(r.status().message().find("'r'"), std::string::npos) << r.status().to_string();
    return;
  }
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(to_vector<int64_t>((*r)[1]), (std::vector<int64_t>{2, 3}));
}

// ---- identity elimination ------------------------------------------------------

TEST(OptimizerTest, IdentityEliminationKeepsOutputNames) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {3});
  b.node("Identity", {"x"}, {"xi"}, {}, "id_in");
  b.node("Relu", {"xi"}, {"r"}, {}, "relu");
  b.node("Identity", {"r"}, {"y"}, {}, "id_out");
  b.node("Identity", {"x"}, {"x_copy"}, {}, "id_pass");
  b.output("y", DataType::kFloat, {3});
  b.output("x_copy", DataType::kFloat, {3});
  Graph g = load_resolved(b);
  int removed = 0;
  ASSERT_TRUE(eliminate_identities(g, &removed).ok());
  EXPECT_EQ(removed, 1);  // only the one whose output is not a graph output
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Relu", "Identity", "Identity"}));
  for (const Node& n : g.nodes) {
    if (!n.removed && n.op_type == "Relu") {
      EXPECT_EQ(n.inputs[0], g.find_value("x"));
    }
  }
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].name, "y");
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[1])].name, "x_copy");

  auto r = run_at(b, OptimizationLevel::kAll, {{"x", make_tensor<float>({3}, {-1, 0, 2})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<float>((*r)[0]), (std::vector<float>{0, 0, 2}));
  EXPECT_EQ(to_vector<float>((*r)[1]), (std::vector<float>{-1, 0, 2}));
}

TEST(OptimizerTest, InferenceDropoutIsRemoved) {
  ModelBuilder b(13);
  b.input("x", DataType::kFloat, {4});
  b.node("Dropout", {"x"}, {"d"}, {}, "dropout");
  b.node("Relu", {"d"}, {"y"}, {}, "relu");
  b.output("y", DataType::kFloat, {4});
  Graph g = load_resolved(b);
  int removed = 0;
  ASSERT_TRUE(eliminate_identities(g, &removed).ok());
  EXPECT_EQ(removed, 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Relu"}));
}

// True when every value a live node reads, explicitly or from inside its
// subgraphs, is produced by a live node or is an input or a constant.
::testing::AssertionResult every_read_is_defined(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (n.removed) continue;
    for (const auto* list : {&n.inputs, &n.implicit_inputs})
      for (ValueId v : *list) {
        if (v == kNoValue) continue;
        const Value& value = g.values[static_cast<size_t>(v)];
        const bool produced = value.producer != kNoNode && !g.nodes[static_cast<size_t>(value.producer)].removed;
        if (!produced && !value.is_graph_input && g.constant(v) == nullptr)
          return ::testing::AssertionFailure() << n.describe() << " reads '" << value.name << "', which nothing defines";
      }
  }
  return ::testing::AssertionSuccess();
}

TEST(OptimizerTest, IdentityReadFromASubgraphIsKeptOrRenamed) {
  Graph g = load_resolved(identity_feeding_if_branches());
  ASSERT_TRUE(every_read_is_defined(g));
  int removed = 0;
  ASSERT_TRUE(eliminate_identities(g, &removed).ok());
  EXPECT_TRUE(every_read_is_defined(g));
}

TEST(OptimizerTest, ValueReadOnlyFromASubgraphIsNotDead) {
  ModelBuilder then_branch(17);
  then_branch.node("Identity", {"r"}, {"t_out"}, {}, "then_id");
  then_branch.output("t_out", DataType::kFloat, {3});
  ModelBuilder else_branch(17);
  else_branch.node("Identity", {"x"}, {"e_out"}, {}, "else_id");
  else_branch.output("e_out", DataType::kFloat, {3});
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {3});
  b.input("cond", DataType::kBool, {});
  // Listed before the Relu whose output its branch reads.
  b.node("If", {"cond"}, {"y"}, {AttrSpec("then_branch", then_branch), AttrSpec("else_branch", else_branch)}, "if");
  b.node("Relu", {"x"}, {"r"}, {}, "relu");
  b.output("y", DataType::kFloat, {3});
  Graph g = load_resolved(b);
  int removed = 0;
  ASSERT_TRUE(eliminate_dead_nodes(g, &removed).ok());
  EXPECT_EQ(removed, 0);
  EXPECT_TRUE(every_read_is_defined(g));
  // The If runs after the Relu it reads from inside.
  auto order = g.topological_order();
  ASSERT_TRUE(order.ok());
  ASSERT_EQ(order->size(), 2u);
  EXPECT_EQ(g.nodes[static_cast<size_t>((*order)[0])].op_type, "Relu");
}

// ---- dead nodes -----------------------------------------------------------------------

TEST(OptimizerTest, DeadNodesAreRemovedTransitively) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {3});
  b.node("Relu", {"x"}, {"y"}, {}, "live");
  b.node("Neg", {"x"}, {"d1"}, {}, "dead1");
  b.node("Abs", {"d1"}, {"d2"}, {}, "dead2");
  b.node("Add", {"d2", "x"}, {"d3"}, {}, "dead3");
  b.output("y", DataType::kFloat, {3});
  Graph g = load_resolved(b);
  int removed = 0;
  ASSERT_TRUE(eliminate_dead_nodes(g, &removed).ok());
  EXPECT_EQ(removed, 3);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Relu"}));
  EXPECT_TRUE(g.values[static_cast<size_t>(g.find_value("x"))].consumers.size() == 1u);
}

TEST(OptimizerTest, NodeWithOneUsedOutputIsKept) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {4});
  b.initializer("split", make_tensor<int64_t>({2}, {2, 2}));
  b.node("Split", {"x", "split"}, {"a", "unused"}, {AttrSpec("axis", 0)}, "split");
  b.output("a", DataType::kFloat, {2});
  Graph g = load_resolved(b);
  int removed = 0;
  ASSERT_TRUE(eliminate_dead_nodes(g, &removed).ok());
  EXPECT_EQ(removed, 0);
}

// ---- the whole optimizer ----------------------------------------------------------------

TEST(OptimizerTest, OptimizeCountsAndCompacts) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 2});
  b.initializer("w", make_tensor<float>({2}, {1, 2}));
  b.initializer("v", make_tensor<float>({2}, {3, 4}));
  b.node("Add", {"w", "v"}, {"wv"}, {}, "fold");
  b.node("Identity", {"x"}, {"xi"}, {}, "identity");
  b.node("Mul", {"xi", "wv"}, {"y"}, {}, "mul");
  b.node("Neg", {"xi"}, {"dead"}, {}, "dead");
  b.output("y", DataType::kFloat, {2, 2});
  Graph g = load_resolved(b);
  PassStats stats;
  ASSERT_TRUE(optimize_for_cpu(g, OptimizationLevel::kAll, &stats).ok());
  EXPECT_EQ(stats.folded, 1);
  EXPECT_EQ(stats.identities_removed, 1);
  EXPECT_EQ(stats.dead_removed, 1);
  ASSERT_EQ(g.nodes.size(), 1u);  // compacted
  EXPECT_EQ(g.nodes[0].op_type, "Mul");
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].producer, 0);

  Graph untouched = load_resolved(b);
  ASSERT_TRUE(optimize(untouched, OptimizationLevel::kDisableAll).ok());
  EXPECT_EQ(untouched.num_live_nodes(), 4u);
}

TEST(OptimizerTest, ResultsMatchWithAndWithoutOptimization) {
  // A small mixed model: folded weight arithmetic, identities, a dead
  // branch, a static Shape feeding a Reshape.
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 6});
  b.initializer("w", make_tensor<float>({6, 4}, {1,  0, 2, -1, 0.5f, 1, 0,  2, -1, 1, 1, 0,
                                                 2,  2, 0, 1,  1,    0, 1, -2, 0,  1, 3, 1}));
  b.initializer("scale", make_tensor<float>({4}, {0.5f, 2, 1, -1}));
  b.initializer("shift", make_tensor<float>({4}, {1, 1, -1, 0}));
  b.node("Mul", {"scale", "shift"}, {"ss"}, {}, "fold_mul");
  b.node("Identity", {"x"}, {"xi"}, {}, "id");
  b.node("MatMul", {"xi", "w"}, {"m"}, {}, "matmul");
  b.node("Add", {"m", "ss"}, {"a"}, {}, "add");
  b.node("Relu", {"a"}, {"r"}, {}, "relu");
  b.node("Shape", {"r"}, {"r_shape"}, {}, "shape");
  b.node("Reshape", {"r", "r_shape"}, {"y"}, {}, "reshape");
  b.node("Neg", {"m"}, {"unused"}, {}, "dead");
  b.output("y", DataType::kFloat, {2, 4});
  Tensor x = make_tensor<float>({2, 6}, {1, 2, 3, 4, 5, 6, -1, 0.5f, 0, 2, -3, 1});
  // Reference: relu(x @ w + scale*shift)
  const std::vector<float> wv = {1, 0, 2, -1, 0.5f, 1, 0, 2, -1, 1, 1, 0, 2, 2, 0, 1, 1, 0, 1, -2, 0, 1, 3, 1};
  const std::vector<float> ss = {0.5f, 2, -1, 0};
  std::vector<float> expected(8);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      float acc = 0;
      for (int k = 0; k < 6; ++k) acc += x.data<float>()[i * 6 + k] * wv[static_cast<size_t>(k * 4 + j)];
      acc += ss[static_cast<size_t>(j)];
      expected[static_cast<size_t>(i * 4 + j)] = acc > 0 ? acc : 0;
    }
  std::vector<Tensor> results;
  for (OptimizationLevel level : {OptimizationLevel::kDisableAll, OptimizationLevel::kBasic, OptimizationLevel::kAll}) {
    auto r = run_at(b, level, {{"x", x}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    expect_tensor_near((*r)[0], make_tensor<float>({2, 4}, expected), 1e-5, 1e-5);
    results.push_back((*r)[0]);
  }
  expect_tensor_eq(results[0], results[1]);
  expect_tensor_eq(results[0], results[2]);
}

// x -> Conv -> Relu -> y, for the provider rewrites' scope.
ModelBuilder conv_then_relu() {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1, 1, 3, 3});
  b.initializer("w", make_tensor<float>({2, 1, 1, 1}, {1.0f, -1.0f}));
  b.node("Conv", {"x", "w"}, {"c"}, {}, "conv");
  b.node("Relu", {"c"}, {"y"}, {}, "relu");
  b.output("y", DataType::kFloat, {2, 1, 3, 3});
  return b;
}

TEST(ProviderRewrites, MatchOnlyNodesPlacedOnTheProviderBeingRewritten) {
  struct Case {
    int conv_on, relu_on, rewritten;
    int fused;
  };
  // Both on provider 0 and rewriting 0: fused. Split across providers, or
  // rewriting the provider that holds neither: untouched.
  for (const Case c : {Case{0, 0, 0, 1}, Case{0, 1, 0, 0}, Case{0, 1, 1, 0}, Case{1, 1, 0, 0}}) {
    Graph g = load_resolved(conv_then_relu());
    for (Node& n : g.nodes) n.placed_on = n.op_type == "Conv" ? c.conv_on : c.relu_on;
    PassStats stats;
    ASSERT_TRUE(run_provider_rewrites(g, c.rewritten, {"conv_activation"}, OptimizationLevel::kAll, &stats).ok());
    EXPECT_EQ(stats.conv_activations_fused, c.fused) << c.conv_on << c.relu_on << c.rewritten;
    EXPECT_EQ(g.rewrite_scope, -1);  // restored
  }
}

TEST(ProviderRewrites, AnUnknownNameIsAnErrorListingTheKnownOnes) {
  Graph g = load_resolved(conv_then_relu());
  const Status st = run_provider_rewrites(g, -1, {"conv_activaton"}, OptimizationLevel::kAll);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("unknown provider rewrite 'conv_activaton'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("conv_activation"), std::string::npos) << st.message();
}

TEST(ProviderRewrites, NewNodesArePlacedWhereTheRewriteRuns) {
  Graph g;
  g.rewrite_scope = 2;
  Node n;
  n.op_type = "Relu";
  EXPECT_EQ(g.nodes[static_cast<size_t>(g.add_node(n))].placed_on, 2);
  g.rewrite_scope = -1;
  EXPECT_EQ(g.nodes[static_cast<size_t>(g.add_node(n))].placed_on, -1);
}

}  // namespace
}  // namespace sy::testing
