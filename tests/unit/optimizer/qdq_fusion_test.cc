// QDQ fusion (optimizer/qdq_fusion.cc): DequantizeLinear -> Conv [-> Relu |
// Clip] -> QuantizeLinear into QLinearConv; each model is run with the
// optimizer off and at level all, and the outputs compared.
//
// Exactness: with power-of-two scales every float the unfused graph makes
// is exact (small integers times powers of two), so both graphs round the
// same numbers and must agree bit for bit. With other scales the unfused
// Conv's float sum is rounded where the fused integer sum is not, and the
// fused multiplier (x_scale * w_scale) / y_scale is rounded once: a result
// within that error of a rounding boundary may come out one step apart,
// so those tests allow a difference of 1 in a few elements.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "pass_test_util.h"
#include "schema/fused.h"

namespace sy::testing {
namespace {

struct QdqConv {
  DataType x_type = DataType::kUint8;
  DataType w_type = DataType::kInt8;
  DataType y_type = DataType::kUint8;
  bool per_channel = true;
  bool bias = true;
  bool pow2 = true;                 // power-of-two scales: the exact case
  std::string act;                  // "", "Relu", "Clip"
  float clip_hi = 6.0f;
  int y_zp = 0;
  bool float_bias = false;          // a float constant bias instead of the int32 DequantizeLinear
  float bias_scale_factor = 1.0f;   // != 1: the bias scale is not x_scale * w_scale
  int64_t kernel = 3;
  float y_scale = 0;                // 0: the default for the case
};

constexpr int64_t kC = 8, kM = 16, kH = 10;

Tensor zero_point(DataType t, int v) {
  return t == DataType::kInt8 ? make_tensor<int8_t>({}, {static_cast<int8_t>(v)})
                              : make_tensor<uint8_t>({}, {static_cast<uint8_t>(v)});
}

// x (float) -> QuantizeLinear -> DequantizeLinear -> Conv(., DQ(w)[, DQ(b)])
// [-> act] -> QuantizeLinear -> y (8-bit).
ModelBuilder qdq_conv_model(const QdqConv& c) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1, kC, kH, kH});
  const float xs = c.pow2 ? 1.0f / 64 : 0.0123f;
  const int x_zp = c.x_type == DataType::kUint8 ? 128 : 3;
  b.initializer("x_scale", make_tensor<float>({}, {xs}));
  b.initializer("x_zp", zero_point(c.x_type, x_zp));
  b.node("QuantizeLinear", {"x", "x_scale", "x_zp"}, {"xq"}, {}, "quant_x");
  b.node("DequantizeLinear", {"xq", "x_scale", "x_zp"}, {"xd"}, {}, "dequant_x");

  const int64_t k = c.kernel;
  std::vector<float> ws;
  for (int64_t m = 0; m < (c.per_channel ? kM : 1); ++m)
    ws.push_back(c.pow2 ? 1.0f / static_cast<float>(64 << (m % 3)) : 0.004f + 0.0007f * static_cast<float>(m));
  const int64_t wn = kM * kC * k * k;
  std::vector<int32_t> wv(static_cast<size_t>(wn));
  uint32_t state = 7;
  for (int32_t& v : wv) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<int32_t>(state >> 24) - 128;  // [-128, 127]
    if (c.w_type == DataType::kUint8) v += 128;
  }
  if (c.w_type == DataType::kInt8) {
    b.initializer("w_q", make_tensor<int8_t>({kM, kC, k, k}, std::vector<int8_t>(wv.begin(), wv.end())));
  } else {
    b.initializer("w_q", make_tensor<uint8_t>({kM, kC, k, k}, std::vector<uint8_t>(wv.begin(), wv.end())));
  }
  const int64_t nw = std::ssize(ws);
  b.initializer("w_scale", c.per_channel ? make_tensor<float>({nw}, ws) : make_tensor<float>({}, ws));
  const int w_zp = c.w_type == DataType::kUint8 ? 128 : 0;
  if (c.per_channel) {
    if (c.w_type == DataType::kInt8)
      b.initializer("w_zp", make_tensor<int8_t>({nw}, std::vector<int8_t>(static_cast<size_t>(nw), 0)));
    else
      b.initializer("w_zp", make_tensor<uint8_t>({nw}, std::vector<uint8_t>(static_cast<size_t>(nw), 128)));
  } else {
    b.initializer("w_zp", zero_point(c.w_type, w_zp));
  }
  b.node("DequantizeLinear", {"w_q", "w_scale", "w_zp"}, {"wd"}, {AttrSpec("axis", int64_t{0})}, "dequant_w");

  std::vector<std::string> conv_in = {"xd", "wd"};
  if (c.bias) {
    std::vector<int32_t> bq;
    std::vector<float> bs;
    for (int64_t m = 0; m < kM; ++m) bq.push_back(static_cast<int32_t>((m * 937) % 2001) - 1000);
    for (float s : ws) bs.push_back(xs * s * c.bias_scale_factor);
    if (c.float_bias) {
      std::vector<float> bf;
      for (int64_t m = 0; m < kM; ++m)
        bf.push_back(static_cast<float>(bq[static_cast<size_t>(m)]) * bs[c.per_channel ? static_cast<size_t>(m) : 0]);
      b.initializer("bias", make_tensor<float>({kM}, bf));
      conv_in.push_back("bias");
    } else {
      b.initializer("b_q", make_tensor<int32_t>({kM}, bq));
      b.initializer("b_scale", c.per_channel ? make_tensor<float>({nw}, bs) : make_tensor<float>({}, bs));
      b.initializer("b_zp", c.per_channel ? make_tensor<int32_t>({nw}, std::vector<int32_t>(static_cast<size_t>(nw), 0))
                                          : make_tensor<int32_t>({}, {0}));
      b.node("DequantizeLinear", {"b_q", "b_scale", "b_zp"}, {"bd"}, {AttrSpec("axis", int64_t{0})}, "dequant_b");
      conv_in.push_back("bd");
    }
  }
  const int64_t pad = k / 2;
  b.node("Conv", conv_in, {"c"}, {AttrSpec("pads", std::vector<int64_t>{pad, pad, pad, pad})}, "conv");
  std::string pre_q = "c";
  if (c.act == "Relu") {
    b.node("Relu", {"c"}, {"a"}, {}, "relu");
    pre_q = "a";
  } else if (c.act == "Clip") {
    b.initializer("lo", make_tensor<float>({}, {0.0f}));
    b.initializer("hi", make_tensor<float>({}, {c.clip_hi}));
    b.node("Clip", {"c", "lo", "hi"}, {"a"}, {}, "clip");
    pre_q = "a";
  }
  const float ys = c.y_scale != 0 ? c.y_scale : c.act == "Clip" ? c.clip_hi / 255.0f : (c.pow2 ? 1.0f / 4 : 0.173f);
  b.initializer("y_scale", make_tensor<float>({}, {ys}));
  b.initializer("y_zp", zero_point(c.y_type, c.y_zp));
  b.node("QuantizeLinear", {pre_q, "y_scale", "y_zp"}, {"y"}, {}, "quant_y");
  b.output("y", c.y_type, {1, kM, kH, kH});
  return b;
}

std::vector<std::pair<std::string, Tensor>> conv_feeds(uint32_t seed) {
  return {{"x", sample_tensor({1, kC, kH, kH}, seed, 1.5f)}};
}

int as_int(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kInt8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
}

// Expects 8-bit `a` within `max_diff` steps of `e`; returns how many differ.
int64_t count_differences(const Tensor& a, const Tensor& e, int max_diff) {
  EXPECT_EQ(a.dtype(), e.dtype());
  EXPECT_EQ(a.shape(), e.shape());
  int64_t differ = 0;
  for (int64_t i = 0; i < e.num_elements(); ++i) {
    const int d = std::abs(as_int(a, i) - as_int(e, i));
    EXPECT_LE(d, max_diff) << "element " << i;
    differ += d != 0;
  }
  return differ;
}

// Runs `b` with the optimizer off and at level all; expects the fused run
// to have `fused_op` on the CPU and its outputs within `max_diff` steps of
// the unfused ones (returns how many differ).
int64_t compare_fused(const ModelBuilder& b, const char* fused_op, int max_diff,
                      const std::vector<std::pair<std::string, Tensor>>& feeds = conv_feeds(11)) {
  auto off = run_at(b, OptimizationLevel::kDisableAll, feeds);
  EXPECT_TRUE(off.ok()) << off.status().to_string();
  SessionOptions o;
  o.optimization_level = OptimizationLevel::kAll;
  o.intra_op_threads = 1;
  const std::string bytes = b.build();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  if (!off.ok() || !s.ok()) return -1;
  int found = 0;
  for (const NodeAssignment& a : (*s)->assignment())
    if (a.op_type == fused_op && a.provider == "CPUExecutionProvider") ++found;
  EXPECT_EQ(found, 1) << (*s)->assignment_report();
  auto on = (*s)->run(feeds);
  EXPECT_TRUE(on.ok()) << on.status().to_string();
  if (!on.ok()) return -1;
  return count_differences((*on)[0], (*off)[0], max_diff);
}

// Where nothing fuses, a float Conv runs either way, at level all with
// its float fusions and layouts (another order of the float sum): one
// step apart at most, in few places.
void expect_close_to_unoptimized(const ModelBuilder& b) {
  const auto feeds = conv_feeds(5);
  auto off = run_at(b, OptimizationLevel::kDisableAll, feeds);
  auto on = run_at(b, OptimizationLevel::kAll, feeds);
  ASSERT_TRUE(off.ok() && on.ok());
  EXPECT_LE(count_differences((*on)[0], (*off)[0], 1), kM * kH * kH / 50);
}

Graph optimized_for_cpu(const ModelBuilder& b, int* fused) {
  Graph g;
  *fused = optimize_and_count(b, OptimizationLevel::kAll, true, &PassStats::qdq_fused, &g);
  return g;
}

TEST(QdqConvFusionTest, PerChannelWithBiasBecomesQLinearConv) {
  QdqConv c;
  int fused = 0;
  Graph g = optimized_for_cpu(qdq_conv_model(c), &fused);
  EXPECT_EQ(fused, 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"QuantizeLinear", "QLinearConv"}));
  const Node* conv = only_node(g, "QLinearConv");
  ASSERT_NE(conv, nullptr);
  ASSERT_EQ(conv->inputs.size(), 9u);
  EXPECT_EQ(conv->inputs[3], g.find_value("w_q"));
  EXPECT_EQ(conv->inputs[8], g.find_value("b_q"));
  EXPECT_EQ(conv->inputs[6], g.find_value("y_scale"));
  EXPECT_EQ(conv->outputs[0], g.find_value("y"));
  EXPECT_EQ(conv->attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(compare_fused(qdq_conv_model(c), "QLinearConv", 0), 0);
}

TEST(QdqConvFusionTest, ExactAcrossTypesAndGranularities) {
  for (DataType xt : {DataType::kUint8, DataType::kInt8})
    for (DataType wt : {DataType::kInt8, DataType::kUint8})
      for (bool per_channel : {true, false})
        for (bool bias : {true, false}) {
          QdqConv c;
          c.x_type = xt;
          c.w_type = wt;
          c.y_type = xt;
          c.y_zp = xt == DataType::kUint8 ? 100 : -20;
          c.per_channel = per_channel;
          c.bias = bias;
          c.kernel = per_channel ? 3 : 1;
          SCOPED_TRACE(std::string(data_type_name(xt)) + " x, " + std::string(data_type_name(wt)) + " w, " +
                       (per_channel ? "per channel" : "per tensor") + (bias ? ", bias" : ""));
          EXPECT_EQ(compare_fused(qdq_conv_model(c), "QLinearConv", 0), 0);
        }
}

TEST(QdqConvFusionTest, OtherScalesAgreeWithinOneStep) {
  for (DataType t : {DataType::kUint8, DataType::kInt8}) {
    QdqConv c;
    c.pow2 = false;
    c.x_type = t;
    c.y_type = t;
    c.y_zp = t == DataType::kUint8 ? 120 : 0;
    const int64_t differ = compare_fused(qdq_conv_model(c), "QLinearConv", 1);
    EXPECT_LE(differ, kM * kH * kH / 50) << "too many results one step apart";
  }
}

TEST(QdqConvFusionTest, ActivationDroppedOnlyWhenQuantizeLinearClampsTheSame) {
  {
    QdqConv c;  // y_zp 0 (uint8's lowest): Relu changes nothing QuantizeLinear keeps
    c.act = "Relu";
    int fused = 0;
    Graph g = optimized_for_cpu(qdq_conv_model(c), &fused);
    EXPECT_EQ(fused, 1);
    EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"QuantizeLinear", "QLinearConv"}));
    EXPECT_EQ(compare_fused(qdq_conv_model(c), "QLinearConv", 0), 0);
  }
  {
    QdqConv c;  // Clip(0, 6) with y_scale 6/255, y_zp 0: both ends are uint8's
    c.act = "Clip";
    c.pow2 = false;
    int fused = 0;
    Graph g = optimized_for_cpu(qdq_conv_model(c), &fused);
    EXPECT_EQ(fused, 1);
    EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"QuantizeLinear", "QLinearConv"}));
    compare_fused(qdq_conv_model(c), "QLinearConv", 1);
  }
  for (const char* act : {"Relu", "Clip"}) {
    QdqConv c;  // y_zp 100: negative results quantize below it, so the activation matters
    c.act = act;
    c.y_zp = 100;
    int fused = 0;
    optimized_for_cpu(qdq_conv_model(c), &fused);
    EXPECT_EQ(fused, 0) << act;
  }
  {
    QdqConv c;  // Clip's top (6) quantizes to 60: it clamps where QuantizeLinear would not
    c.act = "Clip";
    c.y_scale = 0.1f;
    int fused = 0;
    optimized_for_cpu(qdq_conv_model(c), &fused);
    EXPECT_EQ(fused, 0);
    expect_close_to_unoptimized(qdq_conv_model(c));
  }
}

TEST(QdqConvFusionTest, BiasNotWrittenAsQuantizersDoIsNotFused) {
  QdqConv float_bias;
  float_bias.float_bias = true;
  QdqConv other_scale;
  other_scale.bias_scale_factor = 2.0f;
  for (const QdqConv& c : {float_bias, other_scale}) {
    int fused = 0;
    Graph g = optimized_for_cpu(qdq_conv_model(c), &fused);
    EXPECT_EQ(fused, 0);
    // The constant ones kept for the fusion are folded after it: x's is left.
    int dq = 0;
    for (const std::string& op : remaining_ops(g)) dq += op == "DequantizeLinear";
    EXPECT_EQ(dq, 1);
    expect_close_to_unoptimized(qdq_conv_model(c));
  }
}

TEST(QdqConvFusionTest, GenericFoldingKeepsWeightDequantizeForTheFusion) {
  Graph g;
  optimize_and_count(qdq_conv_model(QdqConv{}), OptimizationLevel::kAll, false, &PassStats::folded, &g);
  int dq = 0;
  for (const std::string& op : remaining_ops(g)) dq += op == "DequantizeLinear";
  EXPECT_EQ(dq, 3);  // x, w and b: the fusion after placement reads them
}

// a [2, 5, 32] -> Q -> DQ -> MatMul(., DQ(b [32, 24])) [-> Add(bias)] -> Q -> y
ModelBuilder qdq_matmul_model(bool per_column, bool bias_add, DataType t) {
  constexpr int64_t K = 32, N = 24;
  ModelBuilder b(17);
  b.input("a", DataType::kFloat, {2, 5, K});
  b.initializer("a_scale", make_tensor<float>({}, {1.0f / 32}));
  b.initializer("a_zp", zero_point(t, t == DataType::kUint8 ? 128 : -5));
  b.node("QuantizeLinear", {"a", "a_scale", "a_zp"}, {"aq"}, {}, "quant_a");
  b.node("DequantizeLinear", {"aq", "a_scale", "a_zp"}, {"ad"}, {}, "dequant_a");
  std::vector<int8_t> bq(static_cast<size_t>(K * N));
  for (size_t i = 0; i < bq.size(); ++i) bq[i] = static_cast<int8_t>(static_cast<int>((i * 97) % 255) - 127);
  b.initializer("b_q", make_tensor<int8_t>({K, N}, bq));
  std::vector<float> bs;
  for (int64_t n = 0; n < (per_column ? N : 1); ++n) bs.push_back(1.0f / static_cast<float>(32 << (n % 4)));
  const auto nb = std::ssize(bs);
  b.initializer("b_scale", per_column ? make_tensor<float>({nb}, bs) : make_tensor<float>({}, bs));
  b.initializer("b_zp", per_column ? make_tensor<int8_t>({nb}, std::vector<int8_t>(static_cast<size_t>(nb), 0))
                                   : make_tensor<int8_t>({}, {0}));
  b.node("DequantizeLinear", {"b_q", "b_scale", "b_zp"}, {"bd"}, {}, "dequant_b");
  b.node("MatMul", {"ad", "bd"}, {"m"}, {}, "matmul");
  std::string pre_q = "m";
  if (bias_add) {
    b.initializer("bias", sample_tensor({N}, 3));
    b.node("Add", {"m", "bias"}, {"mb"}, {}, "bias_add");
    pre_q = "mb";
  }
  b.initializer("y_scale", make_tensor<float>({}, {0.5f}));
  b.initializer("y_zp", zero_point(t, t == DataType::kUint8 ? 128 : 0));
  b.node("QuantizeLinear", {pre_q, "y_scale", "y_zp"}, {"y"}, {}, "quant_y");
  b.output("y", t, {2, 5, N});
  return b;
}

TEST(QdqMatMulFusionTest, BecomesQLinearMatMul) {
  for (DataType t : {DataType::kUint8, DataType::kInt8})
    for (bool per_column : {true, false}) {
      SCOPED_TRACE(std::string(data_type_name(t)) + (per_column ? " per column" : " per tensor"));
      int fused = 0;
      Graph g = optimized_for_cpu(qdq_matmul_model(per_column, false, t), &fused);
      EXPECT_EQ(fused, 1);
      EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"QuantizeLinear", "QLinearMatMul"}));
      const std::vector<std::pair<std::string, Tensor>> feeds = {{"a", sample_tensor({2, 5, 32}, 9, 3.0f)}};
      EXPECT_EQ(compare_fused(qdq_matmul_model(per_column, false, t), "QLinearMatMul", 0, feeds), 0);
    }
}

TEST(QdqMatMulFusionTest, BiasAddBetweenIsNotFused) {
  int fused = 0;
  Graph g = optimized_for_cpu(qdq_matmul_model(true, true, DataType::kUint8), &fused);
  EXPECT_EQ(fused, 0);
  for (const std::string& op : remaining_ops(g)) EXPECT_NE(op, "QLinearMatMul");
}

// ---- QLinearAdd ---------------------------------------------------------------------------

// x, y (float) -> QuantizeLinear -> DequantizeLinear -> Add [-> Relu] ->
// QuantizeLinear -> z, as a residual connection in a QDQ ResNet.
struct QdqAdd {
  DataType type = DataType::kUint8;
  DataType y_type = DataType::kUndefined;  // kUndefined: type
  std::vector<int64_t> y_shape = {1, kC, kH, kH};
  bool relu = false;
  int z_zp = 128;
  float z_scale = 0.021f;
  bool z_scale_input = false;  // z's scale a graph input, not a constant
  bool per_axis_y = false;     // y's DequantizeLinear with a scale per channel
};

Tensor zp_of(DataType t, int uint8_value) { return zero_point(t, t == DataType::kInt8 ? uint8_value - 128 : uint8_value); }

ModelBuilder qdq_add_model(const QdqAdd& c) {
  const DataType yt = c.y_type == DataType::kUndefined ? c.type : c.y_type;
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1, kC, kH, kH});
  std::vector<DimSpec> y_dims(c.y_shape.begin(), c.y_shape.end());
  b.input("y", DataType::kFloat, y_dims);
  b.initializer("x_scale", make_tensor<float>({}, {0.0123f}));
  b.initializer("x_zp", zp_of(c.type, 120));
  b.node("QuantizeLinear", {"x", "x_scale", "x_zp"}, {"xq"}, {}, "quant_x");
  b.node("DequantizeLinear", {"xq", "x_scale", "x_zp"}, {"xd"}, {}, "dequant_x");
  if (c.per_axis_y) {
    b.initializer("y_scale", make_tensor<float>({kC}, {0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f, 0.07f, 0.08f}));
    b.initializer("y_zp", yt == DataType::kInt8 ? make_tensor<int8_t>({kC}, std::vector<int8_t>(kC, 0))
                                                 : make_tensor<uint8_t>({kC}, std::vector<uint8_t>(kC, 128)));
    b.node("QuantizeLinear", {"y", "y_scale", "y_zp"}, {"yq"}, {AttrSpec("axis", int64_t{1})}, "quant_y");
    b.node("DequantizeLinear", {"yq", "y_scale", "y_zp"}, {"yd"}, {AttrSpec("axis", int64_t{1})}, "dequant_y");
  } else {
    b.initializer("y_scale", make_tensor<float>({}, {0.0371f}));
    b.initializer("y_zp", zp_of(yt, 131));
    b.node("QuantizeLinear", {"y", "y_scale", "y_zp"}, {"yq"}, {}, "quant_y");
    b.node("DequantizeLinear", {"yq", "y_scale", "y_zp"}, {"yd"}, {}, "dequant_y");
  }
  b.node("Add", {"xd", "yd"}, {"s"}, {}, "residual_add");
  std::string pre_q = "s";
  if (c.relu) {
    b.node("Relu", {"s"}, {"r"}, {}, "relu");
    pre_q = "r";
  }
  if (c.z_scale_input)
    b.input("z_scale", DataType::kFloat, {});
  else
    b.initializer("z_scale", make_tensor<float>({}, {c.z_scale}));
  b.initializer("z_zp", zp_of(c.type, c.z_zp));
  b.node("QuantizeLinear", {pre_q, "z_scale", "z_zp"}, {"z"}, {}, "quant_z");
  b.output("z", c.type, {1, kC, kH, kH});
  return b;
}

std::vector<std::pair<std::string, Tensor>> add_feeds(const QdqAdd& c) {
  std::vector<std::pair<std::string, Tensor>> f = {{"x", sample_tensor({1, kC, kH, kH}, 21, 2.0f)},
                                                   {"y", sample_tensor(Shape(c.y_shape), 22, 5.0f)}};
  if (c.z_scale_input) f.emplace_back("z_scale", make_tensor<float>({}, {c.z_scale}));
  return f;
}

TEST(QdqAddFusionTest, ResidualAddBecomesQLinearAdd) {
  QdqAdd c;
  int fused = 0;
  Graph g = optimized_for_cpu(qdq_add_model(c), &fused);
  EXPECT_EQ(fused, 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"QuantizeLinear", "QuantizeLinear", "QLinearAdd"}));
  const Node* add = only_node(g, "QLinearAdd");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->domain, kSwitchyardDomain);
  ASSERT_EQ(add->inputs.size(), 8u);
  EXPECT_EQ(add->inputs[0], g.find_value("xq"));
  EXPECT_EQ(add->inputs[3], g.find_value("yq"));
  EXPECT_EQ(add->inputs[6], g.find_value("z_scale"));
  EXPECT_EQ(add->inputs[7], g.find_value("z_zp"));
  EXPECT_EQ(add->outputs[0], g.find_value("z"));
}

// QLinearAdd rounds where the graph rounds: bit for bit, at any scales.
TEST(QdqAddFusionTest, ExactAcrossTypesBroadcastsAndRelu) {
  for (DataType t : {DataType::kUint8, DataType::kInt8})
    for (const std::vector<int64_t>& ys : {std::vector<int64_t>{1, kC, kH, kH}, std::vector<int64_t>{},
                                           std::vector<int64_t>{kC, 1, 1}})
      for (bool relu : {false, true})
        for (int z_zp : {0, 128, 200}) {
          QdqAdd c;
          c.type = t;
          c.y_shape = ys;
          c.relu = relu;
          c.z_zp = z_zp;
          SCOPED_TRACE(std::string(data_type_name(t)) + " y rank " + std::to_string(ys.size()) +
                       (relu ? " relu" : "") + " z_zp " + std::to_string(z_zp));
          EXPECT_EQ(compare_fused(qdq_add_model(c), "QLinearAdd", 0, add_feeds(c)), 0);
        }
}

TEST(QdqAddFusionTest, SaturatesAsTheGraphDoes) {
  QdqAdd c;  // a tiny output scale: most sums saturate one way or the other
  c.z_scale = 0.001f;
  EXPECT_EQ(compare_fused(qdq_add_model(c), "QLinearAdd", 0, add_feeds(c)), 0);
}

TEST(QdqAddFusionTest, NearMissesAreNotFused) {
  QdqAdd scale_input;
  scale_input.z_scale_input = true;
  QdqAdd per_axis;
  per_axis.per_axis_y = true;
  QdqAdd mixed_types;
  mixed_types.y_type = DataType::kInt8;
  for (const QdqAdd& c : {scale_input, per_axis, mixed_types}) {
    int fused = 0;
    Graph g = optimized_for_cpu(qdq_add_model(c), &fused);
    EXPECT_EQ(fused, 0);
    for (const std::string& op : remaining_ops(g)) EXPECT_NE(op, "QLinearAdd");
    auto off = run_at(qdq_add_model(c), OptimizationLevel::kDisableAll, add_feeds(c));
    auto on = run_at(qdq_add_model(c), OptimizationLevel::kAll, add_feeds(c));
    ASSERT_TRUE(off.ok() && on.ok());
    EXPECT_EQ(count_differences((*on)[0], (*off)[0], 0), 0);
  }
}

TEST(QdqAddFusionTest, DequantizeWithAnotherReaderStays) {
  // x's DequantizeLinear also feeds a second output: it stays for it.
  ModelBuilder b = qdq_add_model(QdqAdd{});
  b.output("xd", DataType::kFloat, {1, kC, kH, kH});
  int fused = 0;
  Graph g = optimized_for_cpu(b, &fused);
  EXPECT_EQ(fused, 1);
  int dq = 0;
  for (const std::string& op : remaining_ops(g)) dq += op == "DequantizeLinear";
  EXPECT_EQ(dq, 1);
  EXPECT_EQ(compare_fused(b, "QLinearAdd", 0, add_feeds(QdqAdd{})), 0);
}

// ---- MaxPool ---------------------------------------------------------------------------------

// x -> QuantizeLinear -> DequantizeLinear -> MaxPool -> QuantizeLinear -> y
// with y's scale and zero point x's times `scale_factor` / plus `zp_shift`.
ModelBuilder qdq_max_pool_model(DataType t, int opset, float scale_factor = 1.0f, int zp_shift = 0) {
  ModelBuilder b(opset);
  b.input("x", DataType::kFloat, {1, kC, kH, kH});
  const float xs = 0.0173f;
  const int x_zp = t == DataType::kUint8 ? 100 : -20;
  b.initializer("x_scale", make_tensor<float>({}, {xs}));
  b.initializer("x_zp", zero_point(t, x_zp));
  b.node("QuantizeLinear", {"x", "x_scale", "x_zp"}, {"xq"}, {}, "quant_x");
  b.node("DequantizeLinear", {"xq", "x_scale", "x_zp"}, {"xd"}, {}, "dequant_x");
  b.node("MaxPool", {"xd"}, {"p"},
         {AttrSpec("kernel_shape", std::vector<int64_t>{3, 3}), AttrSpec("strides", std::vector<int64_t>{2, 2}),
          AttrSpec("pads", std::vector<int64_t>{1, 1, 1, 1})},
         "pool");
  b.initializer("y_scale", make_tensor<float>({}, {xs * scale_factor}));
  b.initializer("y_zp", zero_point(t, x_zp + zp_shift));
  b.node("QuantizeLinear", {"p", "y_scale", "y_zp"}, {"y"}, {}, "quant_y");
  b.output("y", t, {1, kC, 5, 5});
  return b;
}

TEST(QdqMaxPoolFusionTest, RunsOnTheQuantizedTensor) {
  for (DataType t : {DataType::kUint8, DataType::kInt8}) {
    SCOPED_TRACE(data_type_name(t));
    int fused = 0;
    Graph g = optimized_for_cpu(qdq_max_pool_model(t, 17), &fused);
    EXPECT_EQ(fused, 1);
    EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"QuantizeLinear", "MaxPool"}));
    const Node* pool = only_node(g, "MaxPool");
    ASSERT_NE(pool, nullptr);
    EXPECT_EQ(pool->inputs[0], g.find_value("xq"));
    EXPECT_EQ(pool->outputs[0], g.find_value("y"));
    EXPECT_EQ(compare_fused(qdq_max_pool_model(t, 17), "MaxPool", 0, {{"x", sample_tensor({1, kC, kH, kH}, 4, 3.0f)}}),
              0);
  }
}

TEST(QdqMaxPoolFusionTest, OtherScaleZeroPointOrOldOpsetIsNotFused) {
  struct Miss {
    const char* what;
    ModelBuilder model;
  };
  const Miss misses[] = {{"other scale", qdq_max_pool_model(DataType::kUint8, 17, 2.0f)},
                         {"other zero point", qdq_max_pool_model(DataType::kUint8, 17, 1.0f, 1)},
                         {"MaxPool-11, float only", qdq_max_pool_model(DataType::kUint8, 11)}};
  for (const Miss& m : misses) {
    SCOPED_TRACE(m.what);
    int fused = 0;
    Graph g = optimized_for_cpu(m.model, &fused);
    EXPECT_EQ(fused, 0);
    int dq = 0;
    for (const std::string& op : remaining_ops(g)) dq += op == "DequantizeLinear";
    EXPECT_EQ(dq, 1);
    const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", sample_tensor({1, kC, kH, kH}, 4, 3.0f)}};
    auto off = run_at(m.model, OptimizationLevel::kDisableAll, feeds);
    auto on = run_at(m.model, OptimizationLevel::kAll, feeds);
    ASSERT_TRUE(off.ok() && on.ok());
    EXPECT_EQ(count_differences((*on)[0], (*off)[0], 0), 0);
  }
}

}  // namespace
}  // namespace sy::testing
