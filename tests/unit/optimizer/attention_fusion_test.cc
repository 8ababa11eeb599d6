// Attention fusion (optimizer/attention_fusion.cc): the BERT-style chain
// (scale, additive mask) and the GPT-2-style one (Where causal mask) become
// one Attention node and compute what the separate nodes did; the chains
// it must leave alone; only CPU-only sessions; a saved optimized model
// read back.
#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "pass_test_util.h"
#include "unit/model/model_test_util.h"

namespace sy::testing {
namespace {

constexpr int kHidden = 8;  // 2 heads of 4
constexpr int kSeq = 5;

struct Chain {
  std::string name;
  std::string scale_op = "Div";   // "Div", "Mul", "MulFirst" (scalar first) or "" (none)
  std::string mask = "add";       // "add", "add_first", "where", "where_neginf", "none"
  std::vector<int64_t> k_perm = {0, 2, 3, 1};  // K^T from K's [B, L, H, D]
  float where_fill = std::numeric_limits<float>::lowest();
  // The head split's target: "zeros" [0, 0, 2, 4]; "computed" from
  // Shape/Gather/Unsqueeze/Concat of x, as exporters write it; "flat"
  // [1, -1, 2, 4], which folds the batch into the sequence.
  std::string heads_shape = "zeros";
  // mask "causal": the condition built in the graph as PyTorch exports
  // GPT-2's, Cast(Equal(Trilu(ConstantOfShape([S, S], 1), 0, upper = 0),
  // 0), bool). The variants that are not that: "upper" (Trilu's upper
  // triangle), "k1" (its diagonal moved), "zero_fill" (ConstantOfShape
  // of 0: every key masked), "other_len" (the second length read from the
  // mask input, which is not provably the sequence's).
  std::string causal = "gpt2";
};

// x [batch, seq, 8] -> Q, K, V projections -> Reshape [0, 0, 2, 4] ->
// Transpose to heads -> scores -> scale -> mask -> Softmax -> context ->
// back to [batch, seq, 8]. K^T is Transpose(k_perm) of K's [B, L, H, D]
// or, for {0, 1, 3, 2}, of K already in [B, H, L, D].
ModelBuilder attention_model(const Chain& c) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"batch", "seq", kHidden});
  b.input("mask", DataType::kFloat, {"batch", 1, 1, "seq"});
  b.input("cond", DataType::kBool, {"seq", "seq"});
  for (int i = 0; i < 3; ++i) {
    const std::string w = std::string("w") + "qkv"[i];
    b.initializer(w, sample_tensor({kHidden, kHidden}, 30 + static_cast<uint32_t>(i), 0.8f));
  }
  if (c.heads_shape == "computed") {
    b.initializer("axis0", make_tensor<int64_t>({}, {0}));
    b.initializer("axis1", make_tensor<int64_t>({}, {1}));
    b.initializer("axes", make_tensor<int64_t>({1}, {0}));
    b.initializer("heads_and_size", make_tensor<int64_t>({2}, {2, 4}));
    b.node("Shape", {"x"}, {"x_shape"}, {}, "x_shape");
    b.node("Gather", {"x_shape", "axis0"}, {"batch"}, {AttrSpec("axis", int64_t{0})}, "batch");
    b.node("Gather", {"x_shape", "axis1"}, {"seq"}, {AttrSpec("axis", int64_t{0})}, "seq");
    b.node("Unsqueeze", {"batch", "axes"}, {"batch_1d"}, {}, "batch_1d");
    b.node("Unsqueeze", {"seq", "axes"}, {"seq_1d"}, {}, "seq_1d");
    b.node("Concat", {"batch_1d", "seq_1d", "heads_and_size"}, {"heads_shape"}, {AttrSpec("axis", int64_t{0})},
           "heads_shape");
  } else {
    b.initializer("heads_shape", make_tensor<int64_t>(
                                     {4}, c.heads_shape == "flat" ? std::vector<int64_t>{1, -1, 2, 4}
                                                                  : std::vector<int64_t>{0, 0, 2, 4}));
  }
  b.initializer("out_shape", make_tensor<int64_t>({3}, {0, 0, kHidden}));
  b.initializer("c", make_tensor<float>({}, {c.scale_op == "Div" ? 2.0f : 0.5f}));
  b.initializer("fill", make_tensor<float>({}, {c.where_fill}));
  const std::vector<int64_t> to_heads = {0, 2, 1, 3};
  for (const char* n : {"q", "k", "v"}) {
    const std::string s(n);
    b.node("MatMul", {"x", "w" + s}, {s + "_proj"}, {}, s + "_matmul");
    b.node("Reshape", {s + "_proj", "heads_shape"}, {s + "_bshd"}, {}, s + "_reshape");
  }
  b.node("Transpose", {"q_bshd"}, {"q_heads"}, {AttrSpec("perm", to_heads)}, "q_transpose");
  b.node("Transpose", {"v_bshd"}, {"v_heads"}, {AttrSpec("perm", to_heads)}, "v_transpose");
  if (c.k_perm == std::vector<int64_t>{0, 1, 3, 2}) {
    b.node("Transpose", {"k_bshd"}, {"k_heads"}, {AttrSpec("perm", to_heads)}, "k_transpose");
    b.node("Transpose", {"k_heads"}, {"k_t"}, {AttrSpec("perm", c.k_perm)}, "kt_transpose");
  } else {
    b.node("Transpose", {"k_bshd"}, {"k_t"}, {AttrSpec("perm", c.k_perm)}, "kt_transpose");
  }
  b.node("MatMul", {"q_heads", "k_t"}, {"scores"}, {}, "scores");
  std::string s = "scores";
  if (c.scale_op == "Div" || c.scale_op == "Mul") {
    b.node(c.scale_op, {s, "c"}, {"scaled"}, {}, "scale");
    s = "scaled";
  } else if (c.scale_op == "MulFirst") {
    b.node("Mul", {"c", s}, {"scaled"}, {}, "scale");
    s = "scaled";
  }
  if (c.mask == "add") {
    b.node("Add", {s, "mask"}, {"masked"}, {}, "mask_add");
    s = "masked";
  } else if (c.mask == "add_first") {
    b.node("Add", {"mask", s}, {"masked"}, {}, "mask_add");
    s = "masked";
  } else if (c.mask == "where") {
    b.node("Where", {"cond", "fill", s}, {"masked"}, {}, "mask_where");
    s = "masked";
  } else if (c.mask == "causal") {
    b.initializer("cm_axis1", make_tensor<int64_t>({}, {1}));
    b.initializer("cm_axis3", make_tensor<int64_t>({}, {3}));
    b.initializer("cm_axes", make_tensor<int64_t>({1}, {0}));
    b.initializer("cm_k", make_tensor<int64_t>({}, {c.causal == "k1" ? 1 : 0}));
    b.initializer("cm_zero", make_tensor<float>({}, {0.0f}));
    b.node("Shape", {"x"}, {"cm_x_shape"}, {}, "cm_x_shape");
    b.node("Gather", {"cm_x_shape", "cm_axis1"}, {"cm_seq"}, {AttrSpec("axis", int64_t{0})}, "cm_seq");
    b.node("Unsqueeze", {"cm_seq", "cm_axes"}, {"cm_seq_1d"}, {}, "cm_seq_1d");
    std::string second = "cm_seq_1d";
    if (c.causal == "other_len") {
      b.node("Shape", {"mask"}, {"cm_mask_shape"}, {}, "cm_mask_shape");
      b.node("Gather", {"cm_mask_shape", "cm_axis3"}, {"cm_len"}, {AttrSpec("axis", int64_t{0})}, "cm_len");
      b.node("Unsqueeze", {"cm_len", "cm_axes"}, {"cm_len_1d"}, {}, "cm_len_1d");
      second = "cm_len_1d";
    }
    b.node("Concat", {"cm_seq_1d", second}, {"cm_dims"}, {AttrSpec("axis", int64_t{0})}, "cm_dims");
    b.node("ConstantOfShape", {"cm_dims"}, {"cm_ones"},
           {AttrSpec("value", make_tensor<float>({1}, {c.causal == "zero_fill" ? 0.0f : 1.0f}))}, "cm_ones");
    b.node("Trilu", {"cm_ones", "cm_k"}, {"cm_tril"}, {AttrSpec("upper", int64_t{c.causal == "upper" ? 1 : 0})},
           "cm_tril");
    b.node("Equal", {"cm_tril", "cm_zero"}, {"cm_eq"}, {}, "cm_eq");
    b.node("Cast", {"cm_eq"}, {"cm_cond"}, {AttrSpec("to", static_cast<int64_t>(DataType::kBool))}, "cm_cond");
    b.node("Where", {"cm_cond", "fill", s}, {"masked"}, {}, "mask_where");
    s = "masked";
  }
  b.node("Softmax", {s}, {"probs"}, {AttrSpec("axis", int64_t{-1})}, "softmax");
  b.node("MatMul", {"probs", "v_heads"}, {"context"}, {}, "context");
  b.node("Transpose", {"context"}, {"context_bshd"}, {AttrSpec("perm", to_heads)}, "out_transpose");
  b.node("Reshape", {"context_bshd", "out_shape"}, {"y"}, {}, "out_reshape");
  b.output("y", DataType::kFloat, {"batch", "seq", kHidden});
  return b;
}

// Batch 2; the second sequence's last two keys masked out (-10000, as BERT
// writes padding); cond true above the diagonal (a causal mask).
std::vector<std::pair<std::string, Tensor>> attention_feeds() {
  std::vector<float> mask(2 * kSeq, 0.0f);
  mask[kSeq + 3] = mask[kSeq + 4] = -10000.0f;
  std::vector<uint8_t> cond(kSeq * kSeq, 0);
  for (int i = 0; i < kSeq; ++i)
    for (int j = i + 1; j < kSeq; ++j) cond[static_cast<size_t>(i * kSeq + j)] = 1;
  Tensor cond_t = Tensor::allocate(DataType::kBool, {kSeq, kSeq}).value();
  std::copy(cond.begin(), cond.end(), static_cast<uint8_t*>(cond_t.raw_data()));
  return {{"x", sample_tensor({2, kSeq, kHidden}, 41, 2.0f)},
          {"mask", make_tensor<float>({2, 1, 1, kSeq}, mask)},
          {"cond", cond_t}};
}

int attention_fusions(const ModelBuilder& b, Graph* out = nullptr, bool cpu_rewrites = true) {
  return optimize_and_count(b, OptimizationLevel::kAll, cpu_rewrites, &PassStats::attentions_fused, out);
}

int count_ops(const Graph& g, const std::string& op_type) {
  int n = 0;
  for (const Node& node : g.nodes) n += !node.removed && node.op_type == op_type;
  return n;
}

TEST(AttentionFusionTest, ChainsBecomeOneAttentionAndComputeTheSame) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const std::vector<Chain> chains = {
      {"BERT: Div, Add mask", "Div", "add"},
      {"mask first", "Div", "add_first"},
      {"Mul scale", "Mul", "add"},
      {"scalar-first Mul", "MulFirst", "add"},
      {"no scale, no mask", "", "none"},
      {"GPT-2: Where with float's lowest", "Div", "where"},
      {"Where with -inf", "Div", "where", {0, 2, 3, 1}, neg_inf},
      {"K already in heads", "Div", "add", {0, 1, 3, 2}},
      {"head split computed from Shape", "Div", "add", {0, 2, 3, 1}, std::numeric_limits<float>::lowest(),
       "computed"},
      {"GPT-2 with computed split", "Div", "where", {0, 2, 3, 1}, std::numeric_limits<float>::lowest(),
       "computed"},
      {"split that folds the batch", "Div", "none", {0, 2, 3, 1}, std::numeric_limits<float>::lowest(), "flat"},
  };
  for (const Chain& c : chains) {
    SCOPED_TRACE(c.name);
    const ModelBuilder b = attention_model(c);
    Graph g;
    EXPECT_EQ(attention_fusions(b, &g), 1);
    const Node* attention = only_node(g, "FusedAttention");
    ASSERT_NE(attention, nullptr);
    EXPECT_EQ(count_ops(g, "Softmax"), 0);
    EXPECT_EQ(count_ops(g, "Add"), 0);
    EXPECT_EQ(count_ops(g, "Div") + count_ops(g, "Mul"), 0);
    // The 3D form, where the heads are split as [B, S, 2, 4] with B and S
    // kept and K^T comes from K's [B, L, H, D], takes the projections
    // directly: no Reshape or Transpose is left. Otherwise Q, K and V (and
    // the output) keep one Transpose each: K's now gives [B, H, L, D].
    const bool three_d = c.k_perm == std::vector<int64_t>{0, 2, 3, 1} && c.heads_shape != "flat";
    EXPECT_EQ(count_ops(g, "Transpose"), three_d ? 0 : 4);
    EXPECT_EQ(count_ops(g, "Reshape"), three_d ? 0 : 4);
    EXPECT_EQ(count_ops(g, "Shape") + count_ops(g, "Concat"), 0);  // the split's arithmetic went too
    EXPECT_EQ(attention->attr_int("q_num_heads", 0), three_d ? 2 : 0);
    EXPECT_EQ(attention->attr_int("kv_num_heads", 0), three_d ? 2 : 0);
    EXPECT_EQ(attention->since_version, 1);  // com.switchyard FusedAttention-1
    EXPECT_EQ(attention->inputs.size(), c.mask == "none" ? 3u : 4u);
    const float expected_scale = c.scale_op.empty() ? 1.0f : 0.5f;
    EXPECT_EQ(attention->attr_float("scale", 0.0f), expected_scale);
    EXPECT_EQ(count_ops(g, "Where"), c.mask == "where" ? 1 : 0);
    expect_same_outputs(b, attention_feeds());
  }
}

// GPT-2's causal condition becomes is_causal with no mask input, and the
// nodes that built it go; conditions that only look like it stay masks.
// Either way the outputs are the separate nodes' (the feeds' "mask" input
// has batch 2 and seq 5, as x, so "other_len" masks causally too, but the
// pass cannot prove it).
TEST(AttentionFusionTest, CausalConditionBecomesIsCausal) {
  struct Case {
    std::string causal;
    std::string heads_shape;
    bool is_causal;
  };
  const std::vector<Case> cases = {
      {"gpt2", "zeros", true},   {"gpt2", "computed", true}, {"upper", "zeros", false},
      {"k1", "zeros", false},    {"zero_fill", "zeros", false}, {"other_len", "zeros", false},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.causal + " / " + k.heads_shape);
    Chain c{"causal", "Div", "causal"};
    c.heads_shape = k.heads_shape;
    c.causal = k.causal;
    const ModelBuilder b = attention_model(c);
    Graph g;
    EXPECT_EQ(attention_fusions(b, &g), 1);
    const Node* attention = only_node(g, "FusedAttention");
    ASSERT_NE(attention, nullptr);
    EXPECT_EQ(attention->attr_int("is_causal", 0), k.is_causal ? 1 : 0);
    EXPECT_EQ(attention->inputs.size(), k.is_causal ? 3u : 4u);
    for (const char* op : {"Where", "Trilu", "Equal", "ConstantOfShape"}) EXPECT_EQ(count_ops(g, op), k.is_causal ? 0 : 1) << op;
    EXPECT_EQ(count_ops(g, "Transpose") + count_ops(g, "Reshape"), 0);  // the 3D form still
    expect_same_outputs(b, attention_feeds());
  }
}

TEST(AttentionFusionTest, HandComputedOneHead) {
  // One head, two positions, D = 1: q = [1, 2], k = [1, 0], v = [10, 20].
  // Scores q_i * k_j: row 0 [1, 0], row 1 [2, 0]; the mask hides key 1 from
  // query 0, so row 0 attends key 0 only (10); row 1 softmax([2, 0]) gives
  // 10 * e^2 / (e^2 + 1) + 20 / (e^2 + 1).
  ModelBuilder b(17);
  b.input("q", DataType::kFloat, {1, 1, 2, 1});
  b.input("k", DataType::kFloat, {1, 1, 2, 1});
  b.input("v", DataType::kFloat, {1, 1, 2, 1});
  b.initializer("mask", make_tensor<float>({2, 2}, {0.0f, -std::numeric_limits<float>::infinity(), 0.0f, 0.0f}));
  b.node("Transpose", {"k"}, {"kt"}, {AttrSpec("perm", std::vector<int64_t>{0, 1, 3, 2})}, "kt");
  b.node("MatMul", {"q", "kt"}, {"s"}, {}, "scores");
  b.node("Add", {"s", "mask"}, {"m"}, {}, "mask_add");
  b.node("Softmax", {"m"}, {"p"}, {AttrSpec("axis", int64_t{-1})}, "softmax");
  b.node("MatMul", {"p", "v"}, {"y"}, {}, "context");
  b.output("y", DataType::kFloat, {1, 1, 2, 1});
  Graph g;
  EXPECT_EQ(attention_fusions(b, &g), 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"FusedAttention"}));  // K's Transpose went
  auto y = run_at(b, OptimizationLevel::kAll, {{"q", make_tensor<float>({1, 1, 2, 1}, {1, 2})},
                                               {"k", make_tensor<float>({1, 1, 2, 1}, {1, 0})},
                                               {"v", make_tensor<float>({1, 1, 2, 1}, {10, 20})}});
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  const double e2 = std::exp(2.0);
  const std::vector<float> got = to_vector<float>((*y)[0]);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NEAR(got[0], 10.0, 1e-5);
  EXPECT_NEAR(got[1], (10.0 * e2 + 20.0) / (e2 + 1.0), 1e-5);
}

TEST(AttentionFusionTest, LeavesAloneWhatIsNotThatAttention) {
  // The probabilities are also a graph output.
  {
    ModelBuilder b = attention_model({"probs read twice"});
    b.output("probs", DataType::kFloat, {"batch", 2, "seq", "seq"});
    EXPECT_EQ(attention_fusions(b), 0);
  }
  // A Where fill that does not swamp the score (-1 replaces; it does not add).
  EXPECT_EQ(attention_fusions(attention_model({"small fill", "Div", "where", {0, 2, 3, 1}, -1.0f})), 0);
  // Softmax over another axis.
  {
    ModelBuilder b(17);
    b.input("q", DataType::kFloat, {1, 2, 3, 4});
    b.input("k", DataType::kFloat, {1, 2, 3, 4});
    b.input("v", DataType::kFloat, {1, 2, 3, 4});
    b.node("Transpose", {"k"}, {"kt"}, {AttrSpec("perm", std::vector<int64_t>{0, 1, 3, 2})}, "kt");
    b.node("MatMul", {"q", "kt"}, {"s"}, {}, "scores");
    b.node("Softmax", {"s"}, {"p"}, {AttrSpec("axis", int64_t{2})}, "softmax");
    b.node("MatMul", {"p", "v"}, {"y"}, {}, "context");
    b.output("y", DataType::kFloat, {1, 2, 3, 4});
    EXPECT_EQ(attention_fusions(b), 0);
  }
  // K^T given directly (no Transpose to turn back), and 3D tensors.
  {
    ModelBuilder b(17);
    b.input("q", DataType::kFloat, {2, 3, 4});
    b.input("kt", DataType::kFloat, {2, 4, 3});
    b.input("v", DataType::kFloat, {2, 3, 4});
    b.node("MatMul", {"q", "kt"}, {"s"}, {}, "scores");
    b.node("Softmax", {"s"}, {"p"}, {AttrSpec("axis", int64_t{-1})}, "softmax");
    b.node("MatMul", {"p", "v"}, {"y"}, {}, "context");
    b.output("y", DataType::kFloat, {2, 3, 4});
    EXPECT_EQ(attention_fusions(b), 0);
  }
  // Query heads that are not a multiple of the key/value heads' (MatMul
  // broadcasts a single query head; Attention cannot).
  {
    ModelBuilder b(17);
    b.input("q", DataType::kFloat, {1, 1, 3, 4});
    b.input("k", DataType::kFloat, {1, 2, 3, 4});
    b.input("v", DataType::kFloat, {1, 2, 3, 4});
    b.node("Transpose", {"k"}, {"kt"}, {AttrSpec("perm", std::vector<int64_t>{0, 1, 3, 2})}, "kt");
    b.node("MatMul", {"q", "kt"}, {"s"}, {}, "scores");
    b.node("Softmax", {"s"}, {"p"}, {AttrSpec("axis", int64_t{-1})}, "softmax");
    b.node("MatMul", {"p", "v"}, {"y"}, {}, "context");
    b.output("y", DataType::kFloat, {1, 2, 3, 4});
    EXPECT_EQ(attention_fusions(b), 0);
  }
}

TEST(AttentionFusionTest, OnlyForSessionsThatRunOnTheCpuAlone) {
  Graph g;
  EXPECT_EQ(attention_fusions(attention_model({"BERT"}), &g, /*cpu_rewrites=*/false), 0);
  EXPECT_EQ(count_ops(g, "Softmax"), 1);
  EXPECT_EQ(count_ops(g, "FusedAttention"), 0);
}

TEST(AttentionFusionTest, SavedModelReadsBackAsFusedAttention) {
  const ModelBuilder b = attention_model({"GPT-2", "Div", "where"});
  const std::string path = ::testing::TempDir() + "attention_fusion_saved.onnx";
  auto optimized = run_at(b, OptimizationLevel::kAll, attention_feeds(), path);
  ASSERT_TRUE(optimized.ok()) << optimized.status().to_string();
  std::unique_ptr<Session> reloaded;
  expect_saved_model_matches_unoptimized(path, b, attention_feeds(), &reloaded);
  // FusedAttention is written in the com.switchyard domain, with its Where
  // mask's "replace", and read back as it is.
  auto loaded = load_model(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  int saved_attention = 0;
  for (const Node& n : loaded->graph->nodes)
    if (n.op_type == "FusedAttention") {
      ++saved_attention;
      EXPECT_EQ(n.domain, "com.switchyard");
      EXPECT_EQ(n.attr_string("masked_scores", ""), "replace");
    }
  EXPECT_EQ(saved_attention, 1);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace sy::testing
