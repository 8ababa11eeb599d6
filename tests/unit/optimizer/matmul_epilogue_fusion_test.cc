// MatMul epilogue fusion (optimizer/matmul_epilogue_fusion.cc): which
// chains after a MatMul join it, sessions at "all" against "basic" (the
// separate Add / Relu / Gelu kernels), a hand-computed case, the cases left
// alone, the MatMul kernel's checks of the fused inputs, and a saved
// optimized model read back.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pass_test_util.h"
#include "unit/model/model_test_util.h"

namespace sy::testing {
namespace {

struct Chain {
  std::string name;
  bool bias = true;
  bool residual = false;
  std::string activation;  // "", "Relu", "Gelu", "GeluTanh"
};

// x [2, 5, 8] -> MatMul(w [8, 6]) [-> Add bias] [-> Add z] [-> activation] -> y
ModelBuilder chain_model(const Chain& c) {
  ModelBuilder b(20);
  b.input("x", DataType::kFloat, {2, 5, 8});
  b.input("z", DataType::kFloat, {2, 5, 6});
  b.initializer("w", sample_tensor({8, 6}, 1, 0.5f));
  b.initializer("bias", sample_tensor({6}, 2, 1.0f));
  std::string last = "m";
  bool last_is_output = false;
  b.node("MatMul", {"x", "w"}, {last}, {}, "matmul");
  if (c.bias) {
    b.node("Add", {"bias", last}, {"mb"}, {}, "bias_add");  // bias first, as PyTorch exports it
    last = "mb";
  }
  if (c.residual) {
    b.node("Add", {last, "z"}, {"mz"}, {}, "residual_add");
    last = "mz";
  }
  if (c.activation == "Relu") {
    b.node("Relu", {last}, {"y"}, {}, "act");
  } else if (c.activation == "Gelu") {
    b.node("Gelu", {last}, {"y"}, {}, "act");
  } else if (c.activation == "GeluTanh") {
    b.node("Gelu", {last}, {"y"}, {AttrSpec("approximate", "tanh")}, "act");
  } else {
    last_is_output = true;
  }
  b.output(last_is_output ? last : "y", DataType::kFloat, {2, 5, 6});
  return b;
}

std::vector<std::pair<std::string, Tensor>> chain_feeds() {
  return {{"x", sample_tensor({2, 5, 8}, 3, 2.0f)}, {"z", sample_tensor({2, 5, 6}, 4, 1.5f)}};
}

int epilogue_fusions(const ModelBuilder& b, Graph* out = nullptr) {
  return optimize_and_count(b, OptimizationLevel::kExtended, /*cpu_rewrites=*/true, &PassStats::matmul_epilogues_fused, out);
}

TEST(MatMulEpilogueFusionTest, ChainsJoinTheMatMulAndComputeTheSame) {
  const std::vector<Chain> chains = {
      {"bias", true, false, ""},
      {"bias + Gelu", true, false, "Gelu"},
      {"bias + tanh Gelu", true, false, "GeluTanh"},
      {"bias + residual + Relu", true, true, "Relu"},
      {"residual only", false, true, ""},
      {"Relu only", false, false, "Relu"},
  };
  for (const Chain& c : chains) {
    SCOPED_TRACE(c.name);
    const ModelBuilder b = chain_model(c);
    Graph g;
    EXPECT_EQ(epilogue_fusions(b, &g), 1);
    const Node* mm = only_node(g, "FusedMatMul");
    ASSERT_NE(mm, nullptr);
    EXPECT_EQ(mm->domain, "com.switchyard");
    EXPECT_EQ(mm->since_version, 1);
    EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"FusedMatMul"}));
    EXPECT_EQ(mm->attr_string("activation", ""), c.activation);
    EXPECT_FALSE(mm->has_attr("alpha"));
    EXPECT_EQ(mm->has_input(2), c.bias);
    EXPECT_EQ(mm->has_input(3), c.residual);
    expect_same_outputs(b, chain_feeds());
  }
}

TEST(MatMulEpilogueFusionTest, HandComputedBiasResidualRelu) {
  // [1, -2] x [[1, 2], [3, 4]] = [-5, -6]; + bias [10, 1] = [5, -5];
  // + z [-1, 2] = [4, -3]; Relu = [4, 0].
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1, 2});
  b.input("z", DataType::kFloat, {1, 2});
  b.initializer("w", make_tensor<float>({2, 2}, {1, 2, 3, 4}));
  b.initializer("bias", make_tensor<float>({2}, {10, 1}));
  b.node("MatMul", {"x", "w"}, {"m"}, {}, "matmul");
  b.node("Add", {"m", "bias"}, {"mb"}, {}, "bias_add");
  b.node("Add", {"z", "mb"}, {"mz"}, {}, "residual_add");
  b.node("Relu", {"mz"}, {"y"}, {}, "relu");
  b.output("y", DataType::kFloat, {1, 2});
  EXPECT_EQ(epilogue_fusions(b), 1);
  auto y = run_at(b, OptimizationLevel::kAll, {{"x", make_tensor<float>({1, 2}, {1, -2})},
                                               {"z", make_tensor<float>({1, 2}, {-1, 2})}});
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  EXPECT_EQ(to_vector<float>((*y)[0]), (std::vector<float>{4, 0}));
}

TEST(MatMulEpilogueFusionTest, LeavesAloneWhatItCannotApply) {
  // A bias per row ([5, 1], broadcast over the columns), not per column.
  {
    ModelBuilder b(17);
    b.input("x", DataType::kFloat, {5, 8});
    b.initializer("w", sample_tensor({8, 6}, 5));
    b.initializer("bias", sample_tensor({5, 1}, 6));
    b.node("MatMul", {"x", "w"}, {"m"}, {}, "matmul");
    b.node("Add", {"m", "bias"}, {"y"}, {}, "add");
    b.output("y", DataType::kFloat, {5, 6});
    EXPECT_EQ(epilogue_fusions(b), 0);
  }
  // A bias of rank above the product's: the Add would add a dimension.
  {
    ModelBuilder b(17);
    b.input("x", DataType::kFloat, {5, 8});
    b.initializer("w", sample_tensor({8, 6}, 7));
    b.initializer("bias", sample_tensor({1, 1, 6}, 8));
    b.node("MatMul", {"x", "w"}, {"m"}, {}, "matmul");
    b.node("Add", {"m", "bias"}, {"y"}, {}, "add");
    b.output("y", DataType::kFloat, {1, 5, 6});
    EXPECT_EQ(epilogue_fusions(b), 0);
  }
  // The product is also read by another node.
  {
    ModelBuilder b(17);
    b.input("x", DataType::kFloat, {5, 8});
    b.initializer("w", sample_tensor({8, 6}, 9));
    b.node("MatMul", {"x", "w"}, {"m"}, {}, "matmul");
    b.node("Relu", {"m"}, {"y"}, {}, "relu");
    b.node("Neg", {"m"}, {"n"}, {}, "neg");
    b.output("y", DataType::kFloat, {5, 6});
    b.output("n", DataType::kFloat, {5, 6});
    EXPECT_EQ(epilogue_fusions(b), 0);
  }
  // A residual that broadcasts.
  {
    ModelBuilder b(17);
    b.input("x", DataType::kFloat, {5, 8});
    b.input("z", DataType::kFloat, {1, 6});
    b.initializer("w", sample_tensor({8, 6}, 10));
    b.node("MatMul", {"x", "w"}, {"m"}, {}, "matmul");
    b.node("Add", {"m", "z"}, {"y"}, {}, "add");
    b.output("y", DataType::kFloat, {5, 6});
    EXPECT_EQ(epilogue_fusions(b), 0);
  }
  // A batched B (attention's scores): not [K, N].
  {
    ModelBuilder b(17);
    b.input("q", DataType::kFloat, {2, 4, 8});
    b.input("k", DataType::kFloat, {2, 8, 4});
    b.node("MatMul", {"q", "k"}, {"s"}, {}, "matmul");
    b.node("Relu", {"s"}, {"y"}, {}, "relu");
    b.output("y", DataType::kFloat, {2, 4, 4});
    EXPECT_EQ(epilogue_fusions(b), 0);
  }
}

// q [2, 4, 8] x k [2, 8, 4] (batched, as attention's scores), then `op`
// with the scalar 8 on the side `scalar_first` says, then Softmax.
ModelBuilder scaled_scores(const char* op, bool scalar_first) {
  ModelBuilder b(17);
  b.input("q", DataType::kFloat, {2, 4, 8});
  b.input("k", DataType::kFloat, {2, 8, 4});
  b.initializer("c", make_tensor<float>({}, {8.0f}));
  b.node("MatMul", {"q", "k"}, {"s"}, {}, "matmul");
  b.node(op, scalar_first ? std::vector<std::string>{"c", "s"} : std::vector<std::string>{"s", "c"}, {"t"}, {},
         "scale");
  b.node("Softmax", {"t"}, {"y"}, {AttrSpec("axis", int64_t{-1})}, "softmax");
  b.output("y", DataType::kFloat, {2, 4, 4});
  return b;
}

TEST(MatMulEpilogueFusionTest, ScalarDivOrMulBecomesAlpha) {
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"q", sample_tensor({2, 4, 8}, 17, 3.0f)},
                                                             {"k", sample_tensor({2, 8, 4}, 18, 3.0f)}};
  struct Case {
    const char* op;
    bool scalar_first;
    float alpha;  // 0: not fused
  };
  for (const Case& c : {Case{"Div", false, 0.125f}, Case{"Mul", false, 8.0f}, Case{"Mul", true, 8.0f},
                        Case{"Div", true, 0.0f}}) {  // 8 / s is no scale
    SCOPED_TRACE(std::string(c.op) + (c.scalar_first ? " (scalar first)" : ""));
    const ModelBuilder b = scaled_scores(c.op, c.scalar_first);
    Graph g;
    EXPECT_EQ(epilogue_fusions(b, &g), c.alpha != 0.0f ? 1 : 0);
    const Node* mm = only_node(g, c.alpha != 0.0f ? "FusedMatMul" : "MatMul");
    ASSERT_NE(mm, nullptr);
    EXPECT_EQ(mm->attr_float("alpha", 0.0f), c.alpha);
    expect_same_outputs(b, feeds);
  }
}

TEST(MatMulEpilogueFusionTest, ShapesInferredThroughConstantNodesLetItFuse) {
  // Exporters give Unsqueeze its axes through a Constant node; inference
  // must read it (before folding) for the product to have a known rank.
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {5, 8});
  b.initializer("w", sample_tensor({8, 6}, 14));
  b.initializer("bias", sample_tensor({6}, 15));
  b.node("Constant", {}, {"axes"}, {AttrSpec("value", make_tensor<int64_t>({1}, {0}))}, "axes_const");
  b.node("Unsqueeze", {"x", "axes"}, {"xu"}, {}, "unsqueeze");
  b.node("MatMul", {"xu", "w"}, {"m"}, {}, "matmul");
  b.node("Add", {"m", "bias"}, {"y"}, {}, "add");
  b.output("y", DataType::kFloat, {1, 5, 6});
  const Graph resolved = load_resolved(b);
  const ValueType& xu = resolved.values[static_cast<size_t>(resolved.find_value("xu"))].type;
  ASSERT_TRUE(xu.has_shape);
  EXPECT_EQ(xu.shape_string(), "[1,5,8]");
  EXPECT_EQ(epilogue_fusions(b), 1);
  expect_same_outputs(b, {{"x", sample_tensor({5, 8}, 16)}});
}

TEST(MatMulEpilogueFusionTest, NotAGenericPass) {
  // A provider rewrite: the generic passes before placement leave it alone.
  Graph g = load_resolved(chain_model({"bias + Gelu", true, false, "Gelu"}));
  PassStats stats;
  ASSERT_TRUE(optimize(g, OptimizationLevel::kAll, &stats).ok());
  EXPECT_EQ(stats.matmul_epilogues_fused, 0);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"MatMul", "Add", "Gelu"}));
}

TEST(MatMulEpilogueFusionTest, KernelNamesAFusedInputOfTheWrongShape) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3});
  b.input("bias", DataType::kFloat, {4});
  b.initializer("w", sample_tensor({3, 5}, 11));
  b.domain_node("com.switchyard", "FusedMatMul", {"x", "w", "bias"}, {"y"}, {}, "fused_matmul");
  b.opset_import("com.switchyard", 1);
  b.output("y", DataType::kFloat, {2, 5});
  SessionOptions o;
  o.optimization_level = OptimizationLevel::kDisableAll;
  const std::string bytes = b.build();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  const Status st =
      s.ok() ? (*s)->run({{"x", sample_tensor({2, 3}, 12)}, {"bias", sample_tensor({4}, 13)}}).status() : s.status();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("fused_matmul"), std::string::npos) << st.to_string();
  EXPECT_NE(st.message().find("must be 5 floats"), std::string::npos) << st.to_string();
}

TEST(MatMulEpilogueFusionTest, SavedOptimizedModelReadsBack) {
  TempDir dir;
  const std::string path = dir.file("fused_matmul.onnx");
  const ModelBuilder b = chain_model({"bias + residual + Relu", true, true, "Relu"});
  const auto feeds = chain_feeds();
  auto optimized = run_at(b, OptimizationLevel::kAll, feeds, path);
  ASSERT_TRUE(optimized.ok()) << optimized.status().to_string();
  expect_saved_model_matches_unoptimized(path, b, feeds);
}

TEST(MatMulEpilogueFusionTest, ResidualWhoseDimsAreEqualOnlySymbolically) {
  // xr = Reshape(x, [0, -1, 8]) has an unknown middle dim; the residual is
  // xr itself and the MatMul reads LayerNormalization(xr), whose dims are
  // xr's: equal, though inference knows neither as a number or symbol.
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"batch", "seq", 8});
  b.initializer("shape", make_tensor<int64_t>({3}, {0, -1, 8}));
  b.initializer("gamma", sample_tensor({8}, 20));
  b.initializer("w", sample_tensor({8, 8}, 21));
  b.initializer("bias", sample_tensor({8}, 22));
  b.node("Reshape", {"x", "shape"}, {"xr"}, {}, "reshape");
  b.node("LayerNormalization", {"xr", "gamma"}, {"ln"}, {AttrSpec("axis", int64_t{-1})}, "ln");
  b.node("MatMul", {"ln", "w"}, {"m"}, {}, "matmul");
  b.node("Add", {"bias", "m"}, {"mb"}, {}, "bias_add");
  b.node("Add", {"xr", "mb"}, {"y"}, {}, "residual_add");
  b.output("y", DataType::kFloat, {"batch", "seq", 8});
  Graph g;
  EXPECT_EQ(epilogue_fusions(b, &g), 1);
  const Node* mm = only_node(g, "FusedMatMul");
  ASSERT_NE(mm, nullptr);
  EXPECT_TRUE(mm->has_input(3));
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"Reshape", "LayerNormalization", "FusedMatMul"}));
  expect_same_outputs(b, {{"x", sample_tensor({2, 3, 8}, 23)}});
}

}  // namespace
}  // namespace sy::testing
