// Dynamic quantization fusion (optimizer/dynamic_quant_matmul_fusion.cc):
// DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(., Mul(x_scale,
// B_scale)) [-> Add(bias)] into DynamicQuantizeMatMul; which graphs it
// rewrites and which it leaves, and that a rewritten model's outputs are
// those of the same model run with the optimizer off, to the bit (the
// fused kernel rounds exactly where the unfused ops do).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pass_test_util.h"

namespace sy::testing {
namespace {

struct DynQ {
  std::vector<int64_t> x_shape = {2, 3, 21};
  int64_t N = 37;
  DataType b_type = DataType::kInt8;
  bool per_column = true;
  bool zero_point = true;
  bool bias = true;
  int consumers = 1;          // MatMulIntegers sharing the DynamicQuantizeLinear
  bool bias_first = true;     // Add(bias, y), as ONNX Runtime writes it
  // Near-misses.
  bool b_runtime = false;     // B a graph input
  bool cast_to_double = false;
  bool foreign_scale = false;  // Mul by Mul(other_scale, B_scale)
  bool runtime_bias = false;
  bool cast_read_twice = false;
  bool matrix_scale = false;   // B_scale [1, N]
};

Tensor int_tensor(DataType t, const Shape& shape, const std::vector<int32_t>& v) {
  if (t == DataType::kInt8) return make_tensor<int8_t>(shape, std::vector<int8_t>(v.begin(), v.end()));
  return make_tensor<uint8_t>(shape, std::vector<uint8_t>(v.begin(), v.end()));
}

// x -> DynamicQuantizeLinear -> `consumers` x (MatMulInteger(., B_i) ->
// Cast -> Mul -> [Add]) -> y_i.
ModelBuilder dynq_model(const DynQ& c) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, std::vector<DimSpec>(c.x_shape.begin(), c.x_shape.end()));
  b.node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"}, {}, "dql");
  const int64_t K = c.x_shape.back();
  const int lo = c.b_type == DataType::kInt8 ? -128 : 0;
  std::vector<DimSpec> y_dims(c.x_shape.begin(), c.x_shape.end() - 1);
  y_dims.emplace_back(c.N);
  uint32_t state = 17;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<int32_t>(state >> 24);
  };
  if (c.foreign_scale) b.initializer("other_scale", make_tensor<float>({}, {0.02f}));
  for (int i = 0; i < c.consumers; ++i) {
    const std::string s = std::to_string(i);
    std::vector<int32_t> w;
    for (int64_t k = 0; k < K * c.N; ++k) w.push_back(lo + next());
    if (c.b_runtime) {
      b.input("w" + s, c.b_type, {K, c.N});
    } else {
      b.initializer("w" + s, int_tensor(c.b_type, {K, c.N}, w));
    }
    const int64_t params = c.per_column ? c.N : 1;
    std::vector<float> scales;
    std::vector<int32_t> zps;
    for (int64_t n = 0; n < params; ++n) {
      scales.push_back(0.001f + 0.0001f * static_cast<float>(next() % 32));
      zps.push_back(lo + next());
    }
    const Shape param_shape = c.matrix_scale ? Shape{1, params} : c.per_column ? Shape{params} : Shape{};
    b.initializer("ws" + s, make_tensor<float>(param_shape, scales));
    std::vector<std::string> mm_in = {"xq", "w" + s, "xz"};
    if (c.zero_point) {
      b.initializer("wz" + s, int_tensor(c.b_type, param_shape, zps));
      mm_in.push_back("wz" + s);
    }
    b.node("MatMulInteger", mm_in, {"mm" + s}, {}, "mm" + s);
    const auto to = static_cast<int64_t>(c.cast_to_double ? DataType::kDouble : DataType::kFloat);
    b.node("Cast", {"mm" + s}, {"c" + s}, {AttrSpec("to", to)}, "cast" + s);
    std::string cast_out = "c" + s;
    if (c.cast_to_double) {
      b.node("Cast", {"c" + s}, {"cf" + s}, {AttrSpec("to", static_cast<int64_t>(DataType::kFloat))}, "back" + s);
      cast_out = "cf" + s;
    }
    b.node("Mul", {c.foreign_scale ? "other_scale" : "xs", "ws" + s}, {"sc" + s}, {}, "scales" + s);
    b.node("Mul", {cast_out, "sc" + s}, {"m" + s}, {}, "mul" + s);
    std::string out = "m" + s;
    if (c.bias) {
      std::vector<float> bias;
      for (int64_t n = 0; n < c.N; ++n) bias.push_back(static_cast<float>(next() - 128) / 64.0f);
      if (c.runtime_bias) {
        b.input("b" + s, DataType::kFloat, {c.N});
      } else {
        b.initializer("b" + s, make_tensor<float>({c.N}, bias));
      }
      b.node("Add", c.bias_first ? std::vector<std::string>{"b" + s, out} : std::vector<std::string>{out, "b" + s},
             {"y" + s}, {}, "add" + s);
      out = "y" + s;
    }
    b.output(out, DataType::kFloat, y_dims);
    if (c.cast_read_twice) b.output("c" + s, DataType::kFloat, y_dims);
  }
  return b;
}

std::vector<std::pair<std::string, Tensor>> feeds(const DynQ& c) {
  std::vector<std::pair<std::string, Tensor>> f = {{"x", sample_tensor(Shape(c.x_shape), 3, 2.0f)}};
  if (c.b_runtime) {
    const int64_t K = c.x_shape.back();
    std::vector<int32_t> w;
    for (int64_t i = 0; i < K * c.N; ++i) w.push_back(static_cast<int32_t>((i * 37) % 200) - 100);
    for (int i = 0; i < c.consumers; ++i) f.emplace_back("w" + std::to_string(i), int_tensor(DataType::kInt8, {K, c.N}, w));
  }
  if (c.runtime_bias)
    for (int i = 0; i < c.consumers; ++i) f.emplace_back("b" + std::to_string(i), sample_tensor({c.N}, 9));
  return f;
}

int fused_count(const DynQ& c, Graph* g = nullptr) {
  return optimize_and_count(dynq_model(c), OptimizationLevel::kAll, true, &PassStats::dynamic_quant_matmuls_fused, g);
}

// The model's outputs with the optimizer off and at level all: equal.
void expect_same_as_unfused(const DynQ& c) {
  const ModelBuilder b = dynq_model(c);
  auto off = run_at(b, OptimizationLevel::kDisableAll, feeds(c));
  auto on = run_at(b, OptimizationLevel::kAll, feeds(c));
  ASSERT_TRUE(off.ok()) << off.status().to_string();
  ASSERT_TRUE(on.ok()) << on.status().to_string();
  ASSERT_EQ(off->size(), on->size());
  for (size_t i = 0; i < off->size(); ++i) expect_tensor_eq((*on)[i], (*off)[i]);
}

TEST(DynamicQuantMatMulFusionTest, ChainBecomesOneNode) {
  DynQ c;
  Graph g;
  EXPECT_EQ(fused_count(c, &g), 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"DynamicQuantizeMatMul"}));
  const Node* n = only_node(g, "DynamicQuantizeMatMul");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->domain, "com.switchyard");
  ASSERT_EQ(n->inputs.size(), 5u);
  EXPECT_EQ(g.values[static_cast<size_t>(n->inputs[0])].name, "x");
  EXPECT_EQ(g.values[static_cast<size_t>(n->inputs[1])].name, "w0");
  EXPECT_EQ(g.values[static_cast<size_t>(n->inputs[2])].name, "ws0");
  EXPECT_EQ(g.values[static_cast<size_t>(n->inputs[3])].name, "wz0");
  EXPECT_EQ(g.values[static_cast<size_t>(n->inputs[4])].name, "b0");
  EXPECT_EQ(g.values[static_cast<size_t>(n->outputs[0])].name, "y0");
}

TEST(DynamicQuantMatMulFusionTest, SharedQuantizerFeedsOneNodeEach) {
  DynQ c;
  c.consumers = 3;
  Graph g;
  EXPECT_EQ(fused_count(c, &g), 3);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>(3, "DynamicQuantizeMatMul")));
  expect_same_as_unfused(c);
}

TEST(DynamicQuantMatMulFusionTest, OutputsEqualTheUnfusedGraph) {
  for (DataType bt : {DataType::kInt8, DataType::kUint8})
    for (int flags = 0; flags < 8; ++flags) {
      DynQ c;
      c.b_type = bt;
      c.per_column = (flags & 1) != 0;
      c.zero_point = (flags & 2) != 0;
      c.bias = (flags & 4) != 0;
      c.bias_first = bt == DataType::kInt8;
      SCOPED_TRACE(std::string(bt == DataType::kInt8 ? "int8" : "uint8") + " flags " + std::to_string(flags));
      EXPECT_EQ(fused_count(c), 1);
      expect_same_as_unfused(c);
    }
  // Odd sizes: M 7 (not a multiple of 6), K 13 (of 4), N 5 (of 16).
  DynQ c;
  c.x_shape = {7, 13};
  c.N = 5;
  EXPECT_EQ(fused_count(c), 1);
  expect_same_as_unfused(c);
}

TEST(DynamicQuantMatMulFusionTest, SavedOptimizedModelReadsBack) {
  DynQ c;
  c.consumers = 2;
  c.zero_point = false;  // an omitted input before the bias: an empty name in the file
  const std::string path = ::testing::TempDir() + "dynq_optimized.onnx";
  auto on = run_at(dynq_model(c), OptimizationLevel::kAll, feeds(c), path);
  ASSERT_TRUE(on.ok()) << on.status().to_string();
  std::unique_ptr<Session> reloaded;
  expect_saved_model_matches_unoptimized(path, dynq_model(c), feeds(c), &reloaded);
  ASSERT_NE(reloaded, nullptr);
  int fused = 0;
  for (const NodeAssignment& a : reloaded->assignment()) fused += a.op_type == "DynamicQuantizeMatMul";
  EXPECT_EQ(fused, 2) << reloaded->assignment_report();
}

TEST(DynamicQuantMatMulFusionTest, BiasAddStaysWhenNotAConstantVector) {
  DynQ c;
  c.runtime_bias = true;
  Graph g;
  EXPECT_EQ(fused_count(c, &g), 1);
  EXPECT_EQ(remaining_ops(g), (std::vector<std::string>{"DynamicQuantizeMatMul", "Add"}));
  const Node* n = only_node(g, "DynamicQuantizeMatMul");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->inputs.size(), 4u);
  expect_same_as_unfused(c);
}

TEST(DynamicQuantMatMulFusionTest, NearMissesStay) {
  auto expect_unfused = [](const DynQ& c, const char* what) {
    SCOPED_TRACE(what);
    Graph g;
    EXPECT_EQ(fused_count(c, &g), 0);
    EXPECT_EQ(only_node(g, "DynamicQuantizeMatMul"), nullptr);
    expect_same_as_unfused(c);
  };
  DynQ c;
  c.b_runtime = true;
  expect_unfused(c, "B not constant");
  c = DynQ();
  c.cast_to_double = true;
  expect_unfused(c, "Cast to double");
  c = DynQ();
  c.foreign_scale = true;
  expect_unfused(c, "Mul by another scale than the quantizer's");
  c = DynQ();
  c.cast_read_twice = true;
  expect_unfused(c, "the Cast's output read elsewhere");
  c = DynQ();
  c.matrix_scale = true;
  expect_unfused(c, "B_scale [1, N]");
}

TEST(DynamicQuantMatMulFusionTest, MatMulIntegerWithoutQuantizerZeroPointStays) {
  // MatMulInteger(x_q, B) without x's zero point computes another sum.
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {4, 8});
  b.node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"}, {}, "dql");
  b.initializer("w", make_tensor<int8_t>({8, 3}, std::vector<int8_t>(24, 3)));
  b.initializer("ws", make_tensor<float>({}, {0.5f}));
  b.node("MatMulInteger", {"xq", "w"}, {"mm"}, {}, "mm");
  b.node("Cast", {"mm"}, {"c"}, {AttrSpec("to", static_cast<int64_t>(DataType::kFloat))}, "cast");
  b.node("Mul", {"xs", "ws"}, {"sc"}, {}, "scales");
  b.node("Mul", {"c", "sc"}, {"y"}, {}, "mul");
  b.output("y", DataType::kFloat, {4, 3});
  EXPECT_EQ(optimize_and_count(b, OptimizationLevel::kAll, true, &PassStats::dynamic_quant_matmuls_fused), 0);
}

}  // namespace
}  // namespace sy::testing
