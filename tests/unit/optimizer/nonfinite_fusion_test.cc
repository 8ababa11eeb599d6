// Every fusion the optimizer makes computes what the separate nodes compute
// on hostile values too: NaN, +inf, -inf, -0.0 and denormals sprinkled into
// the inputs. Each graph runs at "all" (fused) and with optimization off;
// the fused run must have NaN exactly where the unfused one has it, the
// same infinities with the same signs, and finite values within a tight
// tolerance. (The fused clamps once turned NaN into 0: x86's maxps returns
// its second operand when either is NaN.) The kernels run here are the
// widest this CPU has; the per-ISA variants of each clamp are tested with
// such values beside their kernels (tests/unit/cpu).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "pass_test_util.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

std::vector<DimSpec> dims(const std::vector<int64_t>& v) { return std::vector<DimSpec>(v.begin(), v.end()); }

// sample_tensor's values with about ten non-finite or edge ones mixed in
// (sprinkle_nonfinite): few enough that a Conv's or a product's sums leave
// most outputs finite.
Tensor hostile_tensor(const std::vector<int64_t>& shape, uint32_t seed) {
  Tensor t = sample_tensor(Shape(shape), seed, 2.0f);
  std::vector<float> v(t.data<float>(), t.data<float>() + t.num_elements());
  sprinkle_nonfinite(v, std::max<size_t>(v.size() / 10, 7), seed);
  return make_tensor<float>(Shape(shape), v);
}

using Inputs = std::vector<std::pair<std::string, std::vector<int64_t>>>;
using Feeds = std::vector<std::pair<std::string, Tensor>>;

// Runs `b` fused (the pass behind `counter` must fire) and unfused on
// hostile feeds for `inputs`, plus `fixed` as given, and compares.
void expect_fused_matches_unfused(const std::string& name, const ModelBuilder& b, const Inputs& inputs,
                                  int PassStats::*counter, const Feeds& fixed = {}) {
  SCOPED_TRACE(name);
  EXPECT_GT(optimize_and_count(b, OptimizationLevel::kAll, /*cpu_rewrites=*/true, counter), 0) << "nothing fused";
  Feeds feeds = fixed;
  uint32_t seed = 11;
  for (const auto& [input, shape] : inputs) feeds.emplace_back(input, hostile_tensor(shape, seed++));
  auto fused = run_at(b, OptimizationLevel::kAll, feeds);
  auto unfused = run_at(b, OptimizationLevel::kDisableAll, feeds);
  ASSERT_TRUE(fused.ok()) << fused.status().to_string();
  ASSERT_TRUE(unfused.ok()) << unfused.status().to_string();
  ASSERT_EQ(fused->size(), unfused->size());
  for (size_t o = 0; o < fused->size(); ++o) {
    const Tensor& got = (*fused)[o];
    const Tensor& want = (*unfused)[o];
    ASSERT_EQ(got.shape(), want.shape());
    int64_t nans = 0, finite = 0, mismatches = 0;
    for (int64_t i = 0; i < want.num_elements(); ++i) {
      const float g = got.data<float>()[i], w = want.data<float>()[i];
      nans += std::isnan(w);
      finite += std::isfinite(w);
      const bool same = std::isfinite(w) ? std::isfinite(g) && std::fabs(g - w) <= 1e-4f * (1.0f + std::fabs(w))
                                         : same_or_both_nan(g, w);
      if (!same && ++mismatches <= 5)
        ADD_FAILURE() << "output " << o << " [" << i << "]: fused " << g << ", unfused " << w;
    }
    EXPECT_EQ(mismatches, 0) << "output " << o << " of " << want.num_elements();
    // The hostile values must reach the output, and not everywhere, or the
    // comparison tests little.
    EXPECT_GT(nans, 0) << "output " << o << " has no NaN";
    EXPECT_GT(finite, 0) << "output " << o << " has no finite value";
  }
}

// x -> Conv [-> Add z] [-> BatchNormalization] -> activation -> y.
struct ConvCase {
  std::string name;
  std::vector<int64_t> x;  // N, C, H, W
  int64_t m = 0;
  int64_t k = 3;
  int64_t stride = 1;
  int64_t group = 1;
  std::string activation = "Relu";  // "Relu", "Clip", "" (none)
  bool residual = false;
  bool batch_norm = false;
};

void run_conv_case(const ConvCase& c) {
  const int64_t pad = c.k / 2;
  const std::vector<int64_t> y = {c.x[0], c.m, (c.x[2] + 2 * pad - c.k) / c.stride + 1,
                                  (c.x[3] + 2 * pad - c.k) / c.stride + 1};
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, dims(c.x));
  b.initializer("w", sample_tensor({c.m, c.x[1] / c.group, c.k, c.k}, 1, 0.3f));
  b.initializer("b", sample_tensor({c.m}, 2, 0.5f));
  b.node("Conv", {"x", "w", "b"}, {"c0"},
         {AttrSpec("pads", std::vector<int64_t>{pad, pad, pad, pad}),
          AttrSpec("strides", std::vector<int64_t>{c.stride, c.stride}), AttrSpec("group", c.group)},
         "conv");
  std::string s = "c0";
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputs = {{"x", c.x}};
  if (c.batch_norm) {
    b.initializer("scale", sample_tensor({c.m}, 3, 2.0f));
    b.initializer("shift", sample_tensor({c.m}, 4, 1.0f));
    b.initializer("mean", sample_tensor({c.m}, 5, 1.0f));
    b.initializer("var", make_tensor<float>({c.m}, std::vector<float>(static_cast<size_t>(c.m), 0.7f)));
    b.node("BatchNormalization", {s, "scale", "shift", "mean", "var"}, {"bn"}, {}, "bn");
    s = "bn";
  }
  if (c.residual) {
    b.input("z", DataType::kFloat, dims(y));
    b.node("Add", {s, "z"}, {"sum"}, {}, "add");
    s = "sum";
    inputs.emplace_back("z", y);
  }
  if (c.activation == "Relu") {
    b.node("Relu", {s}, {"y"}, {}, "relu");
  } else if (c.activation == "Clip") {
    b.initializer("lo", make_tensor<float>({}, {0.0f}));
    b.initializer("hi", make_tensor<float>({}, {6.0f}));
    b.node("Clip", {s, "lo", "hi"}, {"y"}, {}, "clip");
  } else {
    b.node("Identity", {s}, {"y"}, {}, "identity");
  }
  b.output("y", DataType::kFloat, dims(y));
  int PassStats::*counter = c.residual     ? &PassStats::conv_residuals_fused
                            : c.batch_norm ? &PassStats::conv_bn_fused
                                           : &PassStats::conv_activations_fused;
  expect_fused_matches_unfused(c.name, b, inputs, counter);
}

// The shapes pick each Conv path the CPU kernel has (as in
// conv_residual_fusion_test.cc), each with the activation, the residual
// and the folded BatchNormalization.
TEST(NonfiniteFusionTest, ConvEpiloguesOnEveryPath) {
  const ConvCase shapes[] = {
      {"winograd 3x3", {1, 16, 12, 12}, 16, 3, 1, 1},
      {"depthwise 3x3", {1, 8, 9, 9}, 8, 3, 1, 8},
      {"transposed 1x1 on 7x7", {1, 24, 7, 7}, 32, 1, 1, 1},
      {"pointwise GEMM 1x1 on 12x12", {2, 16, 12, 12}, 24, 1, 1, 1},
      {"im2col GEMM 3x3 stride 2", {1, 8, 24, 24}, 12, 3, 2, 1},
      {"direct, 3 input channels", {1, 3, 20, 20}, 8, 3, 1, 1},
  };
  for (const ConvCase& shape : shapes) {
    for (const char* activation : {"Relu", "Clip"}) {
      for (int mode = 0; mode < 3; ++mode) {
        ConvCase c = shape;
        c.activation = activation;
        c.residual = mode == 1;
        c.batch_norm = mode == 2;
        c.name += std::string(" + ") + activation + (c.residual ? " + residual" : "") + (c.batch_norm ? " + BN" : "");
        run_conv_case(c);
      }
    }
    ConvCase bn_only = shape;
    bn_only.activation = "";
    bn_only.batch_norm = true;
    bn_only.name += " + BN alone";
    run_conv_case(bn_only);
  }
}

// x [2, 5, 16] -> MatMul(w) [-> Div c] [-> Add bias] [-> Add z] [-> Relu | Gelu].
void run_matmul_case(const std::string& name, bool scale, bool bias, bool residual, const std::string& activation) {
  ModelBuilder b(20);
  const std::vector<int64_t> x = {2, 5, 16}, y = {2, 5, 24};
  b.input("x", DataType::kFloat, dims(x));
  b.initializer("w", sample_tensor({16, 24}, 21, 0.5f));
  b.initializer("c", make_tensor<float>({}, {8.0f}));
  b.initializer("bias", sample_tensor({24}, 22, 1.0f));
  b.node("MatMul", {"x", "w"}, {"p"}, {}, "matmul");
  std::string s = "p";
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputs = {{"x", x}};
  auto then = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
    b.node(op, in, {out}, {}, out);
    s = out;
  };
  if (scale) then("Div", {s, "c"}, "scaled");
  if (bias) then("Add", {s, "bias"}, "biased");
  if (residual) {
    b.input("z", DataType::kFloat, dims(y));
    inputs.emplace_back("z", y);
    then("Add", {s, "z"}, "summed");
  }
  if (!activation.empty()) then(activation, {s}, "activated");
  b.node("Identity", {s}, {"y"}, {}, "y");
  b.output("y", DataType::kFloat, dims(y));
  expect_fused_matches_unfused(name, b, inputs, &PassStats::matmul_epilogues_fused);
}

TEST(NonfiniteFusionTest, MatMulEpilogues) {
  run_matmul_case("scale", true, false, false, "");
  run_matmul_case("bias", false, true, false, "");
  run_matmul_case("bias + Relu", false, true, false, "Relu");
  run_matmul_case("bias + Gelu", false, true, false, "Gelu");
  run_matmul_case("bias + residual", false, true, true, "");
  run_matmul_case("scale + bias + residual + Relu", true, true, true, "Relu");
}

// x [2, 5, 40] -> the GELU chain PyTorch exports -> y.
TEST(NonfiniteFusionTest, GeluChains) {
  for (bool tanh_form : {false, true}) {
    ModelBuilder b(17);
    b.input("x", DataType::kFloat, {2, 5, 40});
    b.initializer("one", make_tensor<float>({}, {1.0f}));
    b.initializer("half", make_tensor<float>({}, {0.5f}));
    if (tanh_form) {
      b.initializer("three", make_tensor<float>({}, {3.0f}));
      b.initializer("k", make_tensor<float>({}, {0.044715f}));
      b.initializer("s", make_tensor<float>({}, {0.7978845608f}));
      b.node("Pow", {"x", "three"}, {"cube"}, {}, "cube");
      b.node("Mul", {"cube", "k"}, {"kc"}, {}, "kc");
      b.node("Add", {"x", "kc"}, {"inner"}, {}, "inner");
      b.node("Mul", {"inner", "s"}, {"u"}, {}, "u");
      b.node("Tanh", {"u"}, {"e"}, {}, "tanh");
    } else {
      b.initializer("sqrt2", make_tensor<float>({}, {1.4142135f}));
      b.node("Div", {"x", "sqrt2"}, {"d"}, {}, "div");
      b.node("Erf", {"d"}, {"e"}, {}, "erf");
    }
    b.node("Add", {"e", "one"}, {"p"}, {}, "add1");
    b.node("Mul", {"x", "p"}, {"m"}, {}, "mul_x");
    b.node("Mul", {"m", "half"}, {"y"}, {}, "mul_half");
    b.output("y", DataType::kFloat, {2, 5, 40});
    expect_fused_matches_unfused(tanh_form ? "tanh" : "erf", b, {{"x", {2, 5, 40}}}, &PassStats::gelus_fused);
  }
}

// x [8, 4, 16] -> the decomposed layer norm over the last axis -> y. Some
// rows hold a non-finite value; the others must stay finite.
TEST(NonfiniteFusionTest, LayerNormChain) {
  ModelBuilder b(13);
  b.input("x", DataType::kFloat, {8, 4, 16});
  b.initializer("two", make_tensor<float>({}, {2.0f}));
  b.initializer("eps", make_tensor<float>({}, {1e-5f}));
  b.initializer("gamma", sample_tensor({16}, 61, 2.0f));
  b.initializer("beta", sample_tensor({16}, 62, 1.0f));
  const std::vector<AttrSpec> axes = {AttrSpec("axes", std::vector<int64_t>{-1})};
  b.node("ReduceMean", {"x"}, {"mean"}, axes, "mean");
  b.node("Sub", {"x", "mean"}, {"d"}, {}, "sub");
  b.node("Pow", {"d", "two"}, {"sq"}, {}, "square");
  b.node("ReduceMean", {"sq"}, {"var"}, axes, "var");
  b.node("Add", {"var", "eps"}, {"ve"}, {}, "add_eps");
  b.node("Sqrt", {"ve"}, {"sd"}, {}, "sqrt");
  b.node("Div", {"d", "sd"}, {"n"}, {}, "div");
  b.node("Mul", {"n", "gamma"}, {"m"}, {}, "scale");
  b.node("Add", {"m", "beta"}, {"y"}, {}, "shift");
  b.output("y", DataType::kFloat, {8, 4, 16});
  expect_fused_matches_unfused("layer norm", b, {{"x", {8, 4, 16}}}, &PassStats::layer_norms_fused);
}

// BERT's attention: Q, K, V [1, 2, 6, 8] (batch, heads, seq, size) ->
// MatMul(Q, K^T) / sqrt(8) [+ mask] -> Softmax -> MatMul(., V), with the
// hostile values in Q and V, and masks
// [1, 2, 1, 6] whose first head's row holds -inf or NaN (the second round's
// K has a NaN and a +inf in head 0's first and last keys): keys masked at
// either end (which the fast path skips), in the middle, every key (the
// chain's 0 / 0 is NaN where ai.onnx Attention gives 0). FusedAttention
// must give the chain's answers in all of them (schema/fused.cc).
TEST(NonfiniteFusionTest, AttentionChain) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<std::string, std::vector<float>>> masks = {
      {"no mask", {}},
      {"padding mask", {0, 0, 0, 0, -10000, -10000}},
      {"-inf key", {0, -kInf, 0, 0, 0, 0}},
      {"NaN key", {0, 0, std::nanf(""), 0, 0, 0}},
      {"-inf first and last keys", {-kInf, 0, 0, 0, 0, -kInf}},
      {"every key -inf", {-kInf, -kInf, -kInf, -kInf, -kInf, -kInf}},
      {"padding then -inf", {0, 0, -10000, -10000, -kInf, -kInf}},
  };
  for (const bool hostile_k : {false, true})
  for (const auto& [name, mask] : masks) {
    ModelBuilder b(17);
    const std::vector<int64_t> qkv = {1, 2, 6, 8};
    Inputs inputs;
    Feeds fixed;
    fixed.reserve(2);  // (grown from an initializer list, GCC 12 warns of a false out-of-bounds write)
    Tensor k = sample_tensor(Shape(qkv), 7, 2.0f);
    if (hostile_k) {
      // Head 0's first key all NaN, its last key's first value +inf: keys
      // the masks above mask, and the fast path skips.
      float* k0 = k.data<float>();
      for (int e = 0; e < 8; ++e) k0[e] = std::nanf("");
      k0[5 * 8] = kInf;
    }
    fixed.emplace_back("k", std::move(k));
    for (const char* n : {"q", "k", "v"}) b.input(n, DataType::kFloat, dims(qkv));
    inputs.emplace_back("q", qkv);
    inputs.emplace_back("v", qkv);
    b.initializer("c", make_tensor<float>({}, {2.828427f}));
    b.node("Transpose", {"k"}, {"k_t"}, {AttrSpec("perm", std::vector<int64_t>{0, 1, 3, 2})}, "k_t");
    b.node("MatMul", {"q", "k_t"}, {"scores"}, {}, "scores");
    b.node("Div", {"scores", "c"}, {"scaled"}, {}, "scale");
    std::string s = "scaled";
    if (!mask.empty()) {
      std::vector<float> both_heads = mask;
      both_heads.resize(12, 0.0f);
      b.input("mask", DataType::kFloat, {1, 2, 1, 6});
      fixed.emplace_back("mask", make_tensor<float>({1, 2, 1, 6}, both_heads));
      b.node("Add", {s, "mask"}, {"masked"}, {}, "mask_add");
      s = "masked";
    }
    b.node("Softmax", {s}, {"p"}, {AttrSpec("axis", int64_t{-1})}, "softmax");
    b.node("MatMul", {"p", "v"}, {"y"}, {}, "context");
    b.output("y", DataType::kFloat, dims(qkv));
    expect_fused_matches_unfused(name + (hostile_k ? ", hostile K" : ""), b, inputs, &PassStats::attentions_fused,
                                 fixed);
  }
}

}  // namespace
}  // namespace sy::testing
