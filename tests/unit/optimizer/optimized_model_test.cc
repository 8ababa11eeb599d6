// SessionOptions::optimized_model_path: the optimized graph written as an
// ONNX file, read back by the loader, giving the same outputs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/saver.h"
#include "onnx/onnx_pb.h"
#include "pass_test_util.h"
#include "unit/model/model_test_util.h"

namespace sy::testing {
namespace {

onnx::ModelProto read_proto(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  onnx::ModelProto proto;
  EXPECT_TRUE(proto.ParseFromString(bytes.str())) << path << " is not a ModelProto";
  return proto;
}

const onnx::NodeProto* find_node(const onnx::GraphProto& g, const std::string& op_type) {
  for (const auto& n : g.node())
    if (n.op_type() == op_type) return &n;
  return nullptr;
}

int64_t opset_of(const onnx::ModelProto& m, const std::string& domain) {
  for (const auto& op : m.opset_import())
    if (op.domain() == domain) return op.version();
  return 0;
}

// Conv + Relu, a GELU chain and a Transpose pair, with an overridable
// initializer, in an opset-17 model.
ModelBuilder fusable_model(int64_t opset = 17) {
  ModelBuilder b(opset);
  b.input("x", DataType::kFloat, {"n", 2, 4, 4});
  b.initializer("w", sample_tensor({3, 2, 3, 3}, 51, 0.5f));
  b.initializer("b", sample_tensor({3}, 52, 0.5f));
  b.initializer("sqrt2", make_tensor<float>({}, {1.4142135f}));
  b.initializer("one", make_tensor<float>({}, {1.0f}));
  b.initializer("half", make_tensor<float>({}, {0.5f}));
  b.initializer("gain", make_tensor<float>({1}, {2.0f}), /*also_input=*/true);
  b.node("Conv", {"x", "w", "b"}, {"c"}, {AttrSpec("pads", std::vector<int64_t>{1, 1, 1, 1})}, "conv");
  b.node("Relu", {"c"}, {"r"}, {}, "relu");
  b.node("Transpose", {"r"}, {"t1"}, {AttrSpec("perm", std::vector<int64_t>{0, 2, 3, 1})}, "to_nhwc");
  b.node("Transpose", {"t1"}, {"t2"}, {AttrSpec("perm", std::vector<int64_t>{0, 3, 1, 2})}, "to_nchw");
  b.node("Div", {"t2", "sqrt2"}, {"d"}, {}, "div");
  b.node("Erf", {"d"}, {"e"}, {}, "erf");
  b.node("Add", {"e", "one"}, {"p"}, {}, "add1");
  b.node("Mul", {"t2", "p"}, {"m"}, {}, "mul_x");
  b.node("Mul", {"m", "half"}, {"g"}, {}, "mul_half");
  b.node("Mul", {"g", "gain"}, {"y"}, {}, "gain");
  b.output("y", DataType::kFloat, {"n", 3, 4, 4});
  return b;
}

TEST(OptimizedModelTest, WrittenFileHoldsTheFusedGraphAndRunsTheSame) {
  TempDir dir;
  const std::string path = dir.file("optimized.onnx");
  const ModelBuilder b = fusable_model();
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", sample_tensor({2, 2, 4, 4}, 53, 2.0f)}};
  auto optimized = run_at(b, OptimizationLevel::kAll, feeds, path);
  ASSERT_TRUE(optimized.ok()) << optimized.status().to_string();

  const onnx::ModelProto proto = read_proto(path);
  EXPECT_EQ(opset_of(proto, ""), 17);
  EXPECT_EQ(opset_of(proto, kSavedFusedDomain), 1);
  const onnx::GraphProto& g = proto.graph();
  std::vector<std::string> ops;
  for (const auto& n : g.node()) ops.push_back(n.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"FusedConv", "Gelu", "Mul"}));
  // The fused Conv is com.switchyard's FusedConv; Gelu, which the opset-17
  // ai.onnx domain cannot express, goes there under its own name.
  const onnx::NodeProto* conv = find_node(g, "FusedConv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->domain(), kSwitchyardDomain);
  std::vector<std::string> conv_attributes;
  for (const auto& a : conv->attribute()) conv_attributes.push_back(a.name() + (a.has_s() ? "=" + a.s() : ""));
  EXPECT_EQ(conv_attributes, (std::vector<std::string>{"pads", "activation=Relu"}));
  EXPECT_EQ(find_node(g, "Gelu")->domain(), kSavedFusedDomain);
  EXPECT_EQ(find_node(g, "Mul")->domain(), "");
  // Inputs (the overridable initializer among them), outputs and constants.
  std::vector<std::string> inputs;
  for (const auto& i : g.input()) inputs.push_back(i.name());
  EXPECT_EQ(inputs, (std::vector<std::string>{"x", "gain"}));
  ASSERT_EQ(g.output_size(), 1);
  EXPECT_EQ(g.output(0).name(), "y");
  EXPECT_EQ(g.output(0).type().tensor_type().shape().dim(0).dim_param(), "n");
  std::vector<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.push_back(t.name());
  EXPECT_EQ(initializers, (std::vector<std::string>{"w", "b", "gain"}));  // the GELU scalars are gone
  EXPECT_GT(g.value_info_size(), 0);

  // Read back without optimizing: the same outputs as the unoptimized model.
  std::unique_ptr<Session> reloaded;
  std::vector<Tensor> again;
  ASSERT_NO_FATAL_FAILURE(expect_saved_model_matches_unoptimized(path, b, feeds, &reloaded, &again));
  expect_tensor_eq(again[0], (*optimized)[0]);
  // The overridable initializer still is one.
  ASSERT_EQ(reloaded->overridable_initializers().size(), 1u);
  EXPECT_EQ(reloaded->overridable_initializers()[0].name, "gain");
  auto overridden = reloaded->run({feeds[0], {"gain", make_tensor<float>({1}, {4.0f})}});
  ASSERT_TRUE(overridden.ok()) << overridden.status().to_string();
  for (int64_t i = 0; i < again[0].num_elements(); ++i)
    EXPECT_FLOAT_EQ((*overridden)[0].data<float>()[i], 2.0f * again[0].data<float>()[i]);
}

TEST(OptimizedModelTest, GeluStaysInAiOnnxWhenTheOpsetHasIt) {
  TempDir dir;
  const std::string path = dir.file("optimized20.onnx");
  auto r = run_at(fusable_model(20), OptimizationLevel::kAll, {{"x", sample_tensor({1, 2, 4, 4}, 54)}}, path);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const onnx::ModelProto proto = read_proto(path);
  ASSERT_NE(find_node(proto.graph(), "Gelu"), nullptr);
  EXPECT_EQ(find_node(proto.graph(), "Gelu")->domain(), "");
  EXPECT_EQ(find_node(proto.graph(), "Conv"), nullptr);
  EXPECT_EQ(find_node(proto.graph(), "FusedConv")->domain(), kSwitchyardDomain);
  EXPECT_EQ(opset_of(proto, kSwitchyardDomain), 1);
}

// x -> FusedConv (1x1, Relu, writes NCHW16c) -> FusedConv (1x1, reads
// NCHW16c, residual x with an empty bias slot, Relu) -> y, and
// t -> FusedMatMul (scale, bias, Relu) -> u: every fused op and attribute.
ModelBuilder every_fusion_model() {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1, 32, 9, 9});
  b.input("t", DataType::kFloat, {"rows", 8});
  b.initializer("w1", sample_tensor({16, 32, 1, 1}, 61, 0.3f));
  b.initializer("b1", sample_tensor({16}, 62, 0.5f));
  b.initializer("w2", sample_tensor({32, 16, 1, 1}, 63, 0.3f));
  b.initializer("wm", sample_tensor({8, 6}, 64, 0.5f));
  b.initializer("bias", sample_tensor({6}, 65, 0.5f));
  b.initializer("eight", make_tensor<float>({}, {8.0f}));
  b.node("Conv", {"x", "w1", "b1"}, {"h"}, {}, "c1");
  b.node("Relu", {"h"}, {"hr"}, {}, "c1_relu");
  b.node("Conv", {"hr", "w2"}, {"p"}, {}, "c2");
  b.node("Add", {"p", "x"}, {"s"}, {}, "residual");
  b.node("Relu", {"s"}, {"y"}, {}, "c2_relu");
  b.node("MatMul", {"t", "wm"}, {"m"}, {}, "matmul");
  b.node("Div", {"m", "eight"}, {"md"}, {}, "scale");
  b.node("Add", {"md", "bias"}, {"mb"}, {}, "bias_add");
  b.node("Relu", {"mb"}, {"u"}, {}, "matmul_relu");
  b.output("y", DataType::kFloat, {1, 32, 9, 9});
  b.output("u", DataType::kFloat, {"rows", 6});
  return b;
}

TEST(OptimizedModelTest, FusedOpsSaveAndReloadWithTheSameOutputs) {
  TempDir dir;
  const std::string path = dir.file("fused.onnx");
  const ModelBuilder b = every_fusion_model();
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", sample_tensor({1, 32, 9, 9}, 66, 2.0f)},
                                                             {"t", sample_tensor({3, 8}, 67, 2.0f)}};
  auto optimized = run_at(b, OptimizationLevel::kAll, feeds, path);
  ASSERT_TRUE(optimized.ok()) << optimized.status().to_string();

  const onnx::ModelProto proto = read_proto(path);
  EXPECT_EQ(opset_of(proto, kSwitchyardDomain), 1);
  std::vector<std::string> ops;
  for (const auto& n : proto.graph().node()) ops.push_back(n.domain() + ":" + n.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"com.switchyard:FusedConv", "com.switchyard:FusedConv",
                                           "com.switchyard:FusedMatMul"}));
  const onnx::NodeProto& c2 = proto.graph().node(1);
  ASSERT_EQ(c2.input_size(), 4);
  EXPECT_EQ(c2.input(2), "");  // no bias
  EXPECT_EQ(c2.input(3), "x");
  for (const auto& n : proto.graph().node())
    for (const auto& a : n.attribute()) EXPECT_NE(a.name().rfind("sy_", 0), 0u) << n.name() << " " << a.name();

  // Read back as it is and read back optimized again: the outputs of the
  // session that wrote it, and of the unoptimized model.
  auto unoptimized = run_at(b, OptimizationLevel::kDisableAll, feeds);
  ASSERT_TRUE(unoptimized.ok()) << unoptimized.status().to_string();
  for (OptimizationLevel level : {OptimizationLevel::kDisableAll, OptimizationLevel::kAll}) {
    SCOPED_TRACE(level == OptimizationLevel::kAll ? "all" : "disabled");
    SessionOptions o;
    o.optimization_level = level;
    o.intra_op_threads = 1;
    auto reloaded = Session::create(path, o);
    ASSERT_TRUE(reloaded.ok()) << reloaded.status().to_string();
    auto again = (*reloaded)->run(feeds);
    ASSERT_TRUE(again.ok()) << again.status().to_string();
    ASSERT_EQ(again->size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      expect_tensor_eq((*again)[i], (*optimized)[i]);
      expect_tensor_near((*again)[i], (*unoptimized)[i], 1e-5, 1e-5);
    }
  }
}

TEST(OptimizedModelTest, SubgraphsAndOuterScopeReadsAreWritten) {
  // No CPU kernel runs If yet, so the round trip is checked on the IR.
  const std::string original = identity_feeding_if_branches().build();
  auto model = load_model_from_bytes(original.data(), original.size());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  ASSERT_TRUE(resolve(*model->graph).ok());
  ASSERT_TRUE(optimize(*model->graph, OptimizationLevel::kAll).ok());
  auto bytes = model_to_bytes(*model, *model->graph);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();

  auto again = load_model_from_bytes(bytes->data(), bytes->size());
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  Status st = resolve(*again->graph);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(remaining_ops(*again->graph), (std::vector<std::string>{"Identity", "If"}));
  const Node* if_node = only_node(*again->graph, "If");
  ASSERT_NE(if_node, nullptr);
  const Attribute* then_attr = if_node->attr("then_branch");
  ASSERT_TRUE(then_attr != nullptr && then_attr->g != nullptr);
  EXPECT_EQ(remaining_ops(*then_attr->g), (std::vector<std::string>{"Relu"}));
  // The branch still reads the outer value by name.
  EXPECT_EQ(then_attr->g->values[static_cast<size_t>(then_attr->g->nodes[0].inputs[0])].name, "xi");
  EXPECT_EQ(if_node->implicit_inputs, (std::vector<ValueId>{again->graph->find_value("xi")}));
}

TEST(OptimizedModelTest, UnknownSwitchyardOpInAFileIsAnError) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {3});
  b.node("Relu", {"x"}, {"y"}, {}, "relu");
  b.output("y", DataType::kFloat, {3});
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(b.build()));
  proto.mutable_graph()->mutable_node(0)->set_op_type("NoSuchFusedOp");
  proto.mutable_graph()->mutable_node(0)->set_domain(kSavedFusedDomain);
  auto* op = proto.add_opset_import();
  op->set_domain(kSavedFusedDomain);
  op->set_version(1);
  const std::string bytes = proto.SerializeAsString();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("NoSuchFusedOp"), std::string::npos) << s.status().to_string();
}

TEST(OptimizedModelTest, UnwritablePathIsAnError) {
  SessionOptions o;
  o.optimized_model_path = "/nonexistent-folder/x.onnx";
  const std::string bytes = fusable_model().build();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("/nonexistent-folder/x.onnx"), std::string::npos) << s.status().to_string();
}

}  // namespace
}  // namespace sy::testing
