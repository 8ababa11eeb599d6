#include "model/loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "model_test_util.h"
#include "onnx/onnx_pb.h"

namespace sy {
namespace {

namespace fs = std::filesystem;
using testing::add_node;
using testing::float_tensor;
using testing::set_tensor_type;
using testing::TempDir;
using testing::write_model;

const Value& value(const Graph& g, const std::string& name) {
  const ValueId id = g.find_value(name);
  EXPECT_NE(id, kNoValue) << "no value '" << name << "'";
  static const Value kMissing;
  return id == kNoValue ? kMissing : g.values[static_cast<size_t>(id)];
}

onnx::AttributeProto* add_attr(onnx::NodeProto* n, const std::string& name, onnx::AttributeProto::AttributeType type) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

Result<Model> load_proto(const onnx::ModelProto& m, const TempDir& dir, const std::string& name = "model.onnx") {
  write_model(m, dir.file(name));
  return load_model(dir.file(name));
}

Status load_error(const onnx::ModelProto& m) {
  TempDir dir;
  auto r = load_proto(m, dir);
  EXPECT_FALSE(r.ok());
  return r.status();
}

// The model the round-trip test loads: inputs with every kind of dim, a
// plain and an overridable initializer, a node carrying an attribute of
// every type, and an If whose branches read values of the main graph, one
// of them two levels down.
onnx::ModelProto rich_model() {
  onnx::ModelProto m;
  m.set_ir_version(10);
  m.set_producer_name("loader_test");
  m.set_producer_version("1.2");
  m.set_domain("org.test");
  m.set_model_version(42);
  m.set_doc_string("a model");
  auto* meta = m.add_metadata_props();
  meta->set_key("author");
  meta->set_value("me");
  auto* op = m.add_opset_import();
  op->set_domain("ai.onnx");
  op->set_version(21);
  auto* op2 = m.add_opset_import();
  op2->set_domain("com.test");
  op2->set_version(3);

  auto* g = m.mutable_graph();
  g->set_name("main");
  set_tensor_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {"batch", "3", "?"});
  set_tensor_type(g->add_input(), "cond", onnx::TensorProto::BOOL, {});
  set_tensor_type(g->add_input(), "bias", onnx::TensorProto::FLOAT, {"n"});  // overridable
  *g->add_initializer() = float_tensor("w", {3}, {1.0f, 2.0f, 3.0f});
  *g->add_initializer() = float_tensor("bias", {3}, {0.5f, 0.5f, 0.5f});

  add_node(g, "Add", {"x", "w"}, {"a"});  // no name: gets "Add_0"
  auto* custom = add_node(g, "Custom", {"a", "", "bias"}, {"c", ""}, "custom");
  custom->set_domain("com.test");
  add_attr(custom, "f", onnx::AttributeProto::FLOAT)->set_f(0.25f);
  add_attr(custom, "i", onnx::AttributeProto::INT)->set_i(-7);
  add_attr(custom, "s", onnx::AttributeProto::STRING)->set_s("hello");
  *add_attr(custom, "t", onnx::AttributeProto::TENSOR)->mutable_t() = float_tensor("", {2}, {9.0f, 8.0f});
  auto* fs_ = add_attr(custom, "fs", onnx::AttributeProto::FLOATS);
  fs_->add_floats(1.5f);
  fs_->add_floats(-2.5f);
  auto* is = add_attr(custom, "is", onnx::AttributeProto::INTS);
  for (int64_t v : {1, 2, 3}) is->add_ints(v);
  auto* ss = add_attr(custom, "ss", onnx::AttributeProto::STRINGS);
  ss->add_strings("p");
  ss->add_strings("q");
  auto* ts = add_attr(custom, "ts", onnx::AttributeProto::TENSORS);
  *ts->add_tensors() = float_tensor("", {1}, {4.0f});
  *ts->add_tensors() = float_tensor("", {}, {5.0f});
  auto* tp = add_attr(custom, "tp", onnx::AttributeProto::TYPE_PROTO);
  tp->mutable_tp()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  auto* gs = add_attr(custom, "gs", onnx::AttributeProto::GRAPHS);
  {
    auto* body = gs->add_graphs();
    body->set_name("gs0");
    add_node(body, "Identity", {"w"}, {"gs_out"});
    set_tensor_type(body->add_output(), "gs_out", onnx::TensorProto::FLOAT, {"3"});
  }

  auto* iff = add_node(g, "If", {"cond"}, {"y"}, "if");
  auto* then_g = add_attr(iff, "then_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  then_g->set_name("then");
  add_node(then_g, "Mul", {"a", "x"}, {"t_out"});  // outer: a, x
  set_tensor_type(then_g->add_output(), "t_out", onnx::TensorProto::FLOAT, {"batch", "3", "?"});
  auto* else_g = add_attr(iff, "else_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  else_g->set_name("else");
  auto* inner_if = add_node(else_g, "If", {"cond"}, {"e_out"}, "inner_if");
  auto* inner_then = add_attr(inner_if, "then_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  inner_then->set_name("inner_then");
  add_node(inner_then, "Neg", {"c"}, {"it_out"});  // "c" is two levels up
  set_tensor_type(inner_then->add_output(), "it_out", onnx::TensorProto::FLOAT, {});
  auto* inner_else = add_attr(inner_if, "else_branch", onnx::AttributeProto::GRAPH)->mutable_g();
  inner_else->set_name("inner_else");
  set_tensor_type(inner_else->add_output(), "x", onnx::TensorProto::FLOAT, {});  // an outer value as output
  set_tensor_type(else_g->add_output(), "e_out", onnx::TensorProto::FLOAT, {});

  set_tensor_type(g->add_value_info(), "a", onnx::TensorProto::FLOAT, {"batch", "3", "?"});
  set_tensor_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {"batch", "3", "?"});
  set_tensor_type(g->add_output(), "c", onnx::TensorProto::FLOAT, {});
  return m;
}

TEST(LoaderTest, RoundTripOfARichModel) {
  TempDir dir;
  auto r = load_proto(rich_model(), dir);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Model& m = *r;
  EXPECT_EQ(m.path, dir.file("model.onnx"));
  EXPECT_EQ(m.ir_version, 10);
  EXPECT_EQ(m.producer_name, "loader_test");
  EXPECT_EQ(m.producer_version, "1.2");
  EXPECT_EQ(m.domain, "org.test");
  EXPECT_EQ(m.model_version, 42);
  EXPECT_EQ(m.doc_string, "a model");
  EXPECT_EQ(m.metadata.at("author"), "me");
  EXPECT_EQ(m.opsets, (std::map<std::string, int64_t>{{"", 21}, {"com.test", 3}}));

  const Graph& g = *m.graph;
  EXPECT_EQ(g.name, "main");
  EXPECT_EQ(g.parent, nullptr);
  EXPECT_EQ(g.opsets, m.opsets);
  EXPECT_EQ(g.opset(""), 21);

  // Inputs: "bias" is an initializer too, so not in graph.inputs.
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.values[static_cast<size_t>(g.inputs[0])].name, "x");
  EXPECT_EQ(g.values[static_cast<size_t>(g.inputs[1])].name, "cond");
  const Value& x = value(g, "x");
  EXPECT_TRUE(x.is_graph_input);
  EXPECT_FALSE(x.is_initializer);
  EXPECT_EQ(x.type.kind, ValueType::Kind::kTensor);
  EXPECT_EQ(x.type.dtype, DataType::kFloat);
  ASSERT_TRUE(x.type.has_shape);
  ASSERT_EQ(x.type.dims.size(), 3u);
  EXPECT_EQ(x.type.dims[0], Dim::symbolic("batch"));
  EXPECT_EQ(x.type.dims[1], Dim::known(3));
  EXPECT_EQ(x.type.dims[2], Dim::unknown());
  EXPECT_EQ(x.type.shape_string(), "[batch,3,?]");
  const Value& cond = value(g, "cond");
  EXPECT_EQ(cond.type.dtype, DataType::kBool);
  EXPECT_TRUE(cond.type.has_shape);
  EXPECT_EQ(cond.type.rank(), 0u);

  const Value& w = value(g, "w");
  EXPECT_TRUE(w.is_initializer);
  EXPECT_FALSE(w.is_graph_input);
  EXPECT_EQ(w.type.shape_string(), "[3]");
  const Tensor* wt = g.constant(g.find_value("w"));
  ASSERT_NE(wt, nullptr);
  EXPECT_EQ(wt->data<float>()[2], 3.0f);
  const Value& bias = value(g, "bias");
  EXPECT_TRUE(bias.is_initializer);
  EXPECT_TRUE(bias.is_graph_input);
  EXPECT_EQ(bias.type.shape_string(), "[n]");  // the declared input type
  ASSERT_NE(g.constant(g.find_value("bias")), nullptr);
  EXPECT_EQ(g.constant(g.find_value("bias"))->data<float>()[0], 0.5f);

  // value_info and output declarations give intermediate types.
  EXPECT_EQ(value(g, "a").type.shape_string(), "[batch,3,?]");
  EXPECT_EQ(value(g, "c").type.type_string(), "tensor(float)");
  EXPECT_TRUE(value(g, "c").is_graph_output);
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].name, "y");

  ASSERT_EQ(g.nodes.size(), 3u);
  const Node& add = g.nodes[0];
  EXPECT_EQ(add.name, "Add_0");
  EXPECT_EQ(add.op_type, "Add");
  EXPECT_EQ(add.domain, "");
  EXPECT_EQ(add.inputs, (std::vector<ValueId>{g.find_value("x"), g.find_value("w")}));
  EXPECT_EQ(value(g, "a").producer, 0);
  // Only explicit inputs link: the If reads "a" through its subgraph, which
  // shows as an outer-scope value there, not as a consumer here.
  EXPECT_EQ(value(g, "a").consumers, (std::vector<NodeId>{1}));

  const Node& custom = g.nodes[1];
  EXPECT_EQ(custom.domain, "com.test");
  EXPECT_EQ(custom.inputs, (std::vector<ValueId>{g.find_value("a"), kNoValue, g.find_value("bias")}));
  EXPECT_EQ(custom.outputs, (std::vector<ValueId>{g.find_value("c"), kNoValue}));
  EXPECT_EQ(custom.attr("f")->type, AttributeType::kFloat);
  EXPECT_FLOAT_EQ(custom.attr_float("f", 0), 0.25f);
  EXPECT_EQ(custom.attr("i")->type, AttributeType::kInt);
  EXPECT_EQ(custom.attr_int("i", 0), -7);
  EXPECT_EQ(custom.attr_string("s", ""), "hello");
  ASSERT_EQ(custom.attr("t")->type, AttributeType::kTensor);
  EXPECT_EQ(custom.attr("t")->t.shape(), Shape({2}));
  EXPECT_EQ(custom.attr("t")->t.data<float>()[1], 8.0f);
  EXPECT_EQ(custom.attr_floats("fs"), (std::vector<float>{1.5f, -2.5f}));
  EXPECT_EQ(custom.attr("is")->type, AttributeType::kInts);
  EXPECT_EQ(custom.attr_ints("is"), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(custom.attr("ss")->strings, (std::vector<std::string>{"p", "q"}));
  ASSERT_EQ(custom.attr("ts")->tensors.size(), 2u);
  EXPECT_EQ(custom.attr("ts")->tensors[1].data<float>()[0], 5.0f);
  EXPECT_EQ(custom.attr("ts")->tensors[1].shape().rank(), 0u);
  EXPECT_EQ(custom.attr("tp")->type, AttributeType::kTypeProto);
  EXPECT_EQ(custom.attr("tp")->s, "tensor(int64)");
  ASSERT_EQ(custom.attr("gs")->graphs.size(), 1u);
  const Graph& gs0 = *custom.attr("gs")->graphs[0];
  EXPECT_EQ(gs0.parent, &g);
  EXPECT_TRUE(value(gs0, "w").is_outer_scope);

  const Node& iff = g.nodes[2];
  EXPECT_EQ(iff.name, "if");
  ASSERT_EQ(iff.attr("then_branch")->type, AttributeType::kGraph);
  const Graph& then_g = *iff.attr("then_branch")->g;
  EXPECT_EQ(then_g.name, "then");
  EXPECT_EQ(then_g.parent, &g);
  EXPECT_TRUE(then_g.inputs.empty());
  const Value& outer_a = value(then_g, "a");
  EXPECT_TRUE(outer_a.is_outer_scope);
  EXPECT_FALSE(outer_a.is_graph_input);
  EXPECT_EQ(outer_a.type.shape_string(), "[batch,3,?]");  // copied from the enclosing graph
  EXPECT_TRUE(value(then_g, "x").is_outer_scope);
  EXPECT_FALSE(value(then_g, "t_out").is_outer_scope);
  EXPECT_EQ(then_g.nodes[0].inputs, (std::vector<ValueId>{then_g.find_value("a"), then_g.find_value("x")}));
  EXPECT_EQ(then_g.nodes[0].name, "Mul_0");

  const Graph& else_g = *iff.attr("else_branch")->g;
  const Graph& inner_then = *else_g.nodes[0].attr("then_branch")->g;
  EXPECT_EQ(inner_then.parent, &else_g);
  EXPECT_TRUE(value(inner_then, "c").is_outer_scope);
  // The graph in between lists the name too, so that its If node's
  // implicit inputs can be found level by level.
  EXPECT_TRUE(value(else_g, "c").is_outer_scope);
  EXPECT_TRUE(value(else_g, "cond").is_outer_scope);
  const Graph& inner_else = *else_g.nodes[0].attr("else_branch")->g;
  ASSERT_EQ(inner_else.outputs.size(), 1u);
  EXPECT_TRUE(inner_else.values[static_cast<size_t>(inner_else.outputs[0])].is_outer_scope);
  EXPECT_TRUE(inner_else.values[static_cast<size_t>(inner_else.outputs[0])].is_graph_output);

  auto order = g.topological_order();
  ASSERT_TRUE(order.ok()) << order.status().to_string();
  EXPECT_EQ(order->size(), 3u);
}

TEST(LoaderTest, FromBytesMatchesFromFile) {
  std::string bytes;
  ASSERT_TRUE(rich_model().SerializeToString(&bytes));
  auto r = load_model_from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->path.empty());
  EXPECT_EQ(r->graph->nodes.size(), 3u);
  EXPECT_EQ(r->producer_name, "loader_test");
}

TEST(LoaderTest, OtherValueKinds) {
  onnx::ModelProto m = testing::relu_model();
  auto* g = m.mutable_graph();
  auto* seq = g->add_input();
  seq->set_name("seq");
  seq->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT64);
  auto* opt = g->add_input();
  opt->set_name("opt");
  set_tensor_type(opt, "opt", onnx::TensorProto::FLOAT, {"2"});
  onnx::TypeProto inner = opt->type();
  *opt->mutable_type()->mutable_optional_type()->mutable_elem_type() = inner;
  auto* map = g->add_input();
  map->set_name("map");
  map->mutable_type()->mutable_map_type()->set_key_type(onnx::TensorProto::STRING);
  map->mutable_type()->mutable_map_type()->mutable_value_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  auto* sp = g->add_input();
  sp->set_name("sp");
  sp->mutable_type()->mutable_sparse_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  sp->mutable_type()->mutable_sparse_tensor_type()->mutable_shape()->add_dim()->set_dim_value(10);

  // A sparse initializer is made dense.
  auto* sinit = g->add_sparse_initializer();
  sinit->add_dims(4);
  *sinit->mutable_values() = float_tensor("sparse_w", {2}, {1.0f, 2.0f});
  sinit->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  sinit->mutable_indices()->add_dims(2);
  sinit->mutable_indices()->add_int64_data(0);
  sinit->mutable_indices()->add_int64_data(3);

  TempDir dir;
  auto r = load_proto(m, dir);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Graph& graph = *r->graph;
  EXPECT_EQ(value(graph, "seq").type.kind, ValueType::Kind::kSequence);
  EXPECT_EQ(value(graph, "seq").type.type_string(), "seq(tensor(int64))");
  EXPECT_EQ(value(graph, "opt").type.type_string(), "optional(tensor(float))");
  EXPECT_EQ(value(graph, "opt").type.element->shape_string(), "[2]");
  EXPECT_EQ(value(graph, "map").type.kind, ValueType::Kind::kMap);
  EXPECT_EQ(value(graph, "map").type.dtype, DataType::kString);
  EXPECT_EQ(value(graph, "map").type.element->dtype, DataType::kFloat);
  EXPECT_EQ(value(graph, "sp").type.kind, ValueType::Kind::kSparseTensor);
  EXPECT_EQ(value(graph, "sp").type.shape_string(), "[10]");
  const Tensor* dense = graph.constant(graph.find_value("sparse_w"));
  ASSERT_NE(dense, nullptr);
  EXPECT_EQ(std::vector<float>(dense->data<float>(), dense->data<float>() + 4),
            (std::vector<float>{1.0f, 0.0f, 0.0f, 2.0f}));
  EXPECT_EQ(graph.inputs.size(), 5u);
}

TEST(LoaderTest, LargeModelIsMappedAndLoads) {
  onnx::ModelProto m = testing::relu_model();
  std::vector<float> big(400000);  // 1.6 MB, over the mapping threshold
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 1000) - 500.0f;
  onnx::TensorProto t;
  t.set_name("big");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(400);
  t.add_dims(1000);
  t.set_raw_data(testing::bytes_of(big));
  *m.mutable_graph()->add_initializer() = t;
  TempDir dir;
  auto r = load_proto(m, dir);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Tensor* c = r->graph->constant(r->graph->find_value("big"));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->shape(), Shape({400, 1000}));
  EXPECT_EQ(c->data<float>()[0], -500.0f);
  EXPECT_EQ(c->data<float>()[399999], 499.0f);
}

TEST(LoaderTest, MissingFileAndDirectory) {
  TempDir dir;
  auto missing = load_model(dir.file("absent.onnx"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNoSuchFile);
  EXPECT_NE(missing.status().message().find("No such file: " + dir.file("absent.onnx")), std::string::npos)
      << missing.status().message();

  auto folder = load_model(dir.path().string());
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.status().message().find("is a directory"), std::string::npos) << folder.status().message();
}

TEST(LoaderTest, BytesThatAreNotAModel) {
  TempDir dir;
  testing::write_file(dir.file("junk.onnx"), "this is not a protobuf \xff\xff\xff\xff");
  auto junk = load_model(dir.file("junk.onnx"));
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.status().code(), StatusCode::kInvalidProtobuf);
  EXPECT_NE(junk.status().message().find(dir.file("junk.onnx")), std::string::npos);

  testing::write_file(dir.file("empty.onnx"), "");
  auto empty = load_model(dir.file("empty.onnx"));
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidProtobuf);

  onnx::ModelProto no_graph;
  no_graph.set_ir_version(8);
  Status s = load_error(no_graph);
  EXPECT_EQ(s.code(), StatusCode::kInvalidProtobuf);
  EXPECT_NE(s.message().find("no graph"), std::string::npos) << s.message();

  onnx::ModelProto no_ir = testing::relu_model();
  no_ir.clear_ir_version();
  Status s2 = load_error(no_ir);
  EXPECT_EQ(s2.code(), StatusCode::kInvalidProtobuf);
  EXPECT_NE(s2.message().find("ir_version"), std::string::npos) << s2.message();
}

TEST(LoaderTest, TruncatedFile) {
  onnx::ModelProto m = testing::relu_model();
  *m.mutable_graph()->add_initializer() = float_tensor("w", {256}, std::vector<float>(256, 1.0f));
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  TempDir dir;
  testing::write_file(dir.file("cut.onnx"), bytes.substr(0, bytes.size() / 2));
  auto r = load_model(dir.file("cut.onnx"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidProtobuf);
  EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("graph"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(dir.file("cut.onnx")), std::string::npos);
}

TEST(LoaderTest, DuplicateValueNames) {
  onnx::ModelProto twice = testing::relu_model();
  add_node(twice.mutable_graph(), "Relu", {"x"}, {"y"}, "relu1");
  Status s = load_error(twice);
  EXPECT_EQ(s.code(), StatusCode::kInvalidGraph);
  EXPECT_NE(s.message().find("'y' is defined twice"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("relu0"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("relu1"), std::string::npos) << s.message();

  onnx::ModelProto shadow_input = testing::relu_model();
  add_node(shadow_input.mutable_graph(), "Relu", {"y"}, {"x"}, "relu1");
  EXPECT_NE(load_error(shadow_input).message().find("'x' is defined twice: as a graph input"), std::string::npos);

  onnx::ModelProto init_twice = testing::relu_model();
  *init_twice.mutable_graph()->add_initializer() = float_tensor("w", {1}, {1.0f});
  *init_twice.mutable_graph()->add_initializer() = float_tensor("w", {1}, {2.0f});
  EXPECT_EQ(load_error(init_twice).code(), StatusCode::kInvalidGraph);
}

TEST(LoaderTest, UndefinedNodeInput) {
  onnx::ModelProto m = testing::relu_model();
  add_node(m.mutable_graph(), "Add", {"y", "nope"}, {"z"}, "adder");
  Status s = load_error(m);
  EXPECT_EQ(s.code(), StatusCode::kInvalidGraph);
  EXPECT_NE(s.message().find("node 'adder' (Add) input 1 'nope' is not defined"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("model.onnx"), std::string::npos) << s.message();

  // A subgraph name that no enclosing graph defines either.
  onnx::ModelProto sub = testing::relu_model();
  set_tensor_type(sub.mutable_graph()->add_input(), "cond", onnx::TensorProto::BOOL, {});
  auto* iff = add_node(sub.mutable_graph(), "If", {"cond"}, {"z"}, "branch");
  auto* a = iff->add_attribute();
  a->set_name("then_branch");
  a->set_type(onnx::AttributeProto::GRAPH);
  add_node(a->mutable_g(), "Neg", {"ghost"}, {"o"}, "neg");
  Status s2 = load_error(sub);
  EXPECT_NE(s2.message().find("node 'neg' (Neg) input 0 'ghost' is not defined"), std::string::npos) << s2.message();
  EXPECT_NE(s2.message().find("attribute 'then_branch'"), std::string::npos) << s2.message();

  onnx::ModelProto bad_output = testing::relu_model();
  set_tensor_type(bad_output.mutable_graph()->add_output(), "missing", onnx::TensorProto::FLOAT, {});
  EXPECT_NE(load_error(bad_output).message().find("graph output 'missing' is not defined"), std::string::npos);
}

TEST(LoaderTest, GraphInputWithoutType) {
  onnx::ModelProto m = testing::relu_model();
  m.mutable_graph()->add_input()->set_name("untyped");
  Status s = load_error(m);
  EXPECT_EQ(s.code(), StatusCode::kInvalidGraph);
  EXPECT_NE(s.message().find("graph input 'untyped' has no type"), std::string::npos) << s.message();
}

TEST(LoaderTest, RefAttrNameOutsideAFunction) {
  onnx::ModelProto m = testing::relu_model();
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("alpha");
  a->set_ref_attr_name("outer_alpha");
  a->set_type(onnx::AttributeProto::FLOAT);
  Status s = load_error(m);
  EXPECT_EQ(s.code(), StatusCode::kInvalidGraph);
  EXPECT_NE(s.message().find("ref_attr_name"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("relu0"), std::string::npos) << s.message();
}

TEST(LoaderTest, BadInitializerNamesItAndTheFile) {
  onnx::ModelProto m = testing::relu_model();
  *m.mutable_graph()->add_initializer() = float_tensor("w", {2, 2}, {1.0f, 2.0f, 3.0f});
  Status s = load_error(m);
  EXPECT_EQ(s.code(), StatusCode::kInvalidGraph);
  EXPECT_NE(s.message().find("initializer 'w'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("model.onnx"), std::string::npos) << s.message();
}

TEST(LoaderTest, OverridableInitializerTypeMustAgree) {
  onnx::ModelProto m = testing::relu_model();
  set_tensor_type(m.mutable_graph()->add_input(), "w", onnx::TensorProto::INT64, {"1"});
  *m.mutable_graph()->add_initializer() = float_tensor("w", {1}, {1.0f});
  Status s = load_error(m);
  EXPECT_NE(s.message().find("initializer 'w' holds float but the graph input of that name declares tensor(int64)"),
            std::string::npos)
      << s.message();
}

TEST(LoaderTest, ConflictingOpsets) {
  onnx::ModelProto m = testing::relu_model();
  auto* op = m.add_opset_import();
  op->set_domain("ai.onnx");
  op->set_version(13);
  Status s = load_error(m);
  EXPECT_NE(s.message().find("opset_import lists domain 'ai.onnx' twice"), std::string::npos) << s.message();
}

TEST(LoaderTest, OnnxBackendNodeModels) {
  const fs::path root(SY_ONNX_NODE_TESTS);
  if (!fs::exists(root / "test_abs" / "model.onnx")) GTEST_SKIP() << "no ONNX backend test data in " << root;

  auto abs = load_model((root / "test_abs" / "model.onnx").string());
  ASSERT_TRUE(abs.ok()) << abs.status().to_string();
  ASSERT_EQ(abs->graph->nodes.size(), 1u);
  EXPECT_EQ(abs->graph->nodes[0].op_type, "Abs");
  ASSERT_EQ(abs->graph->inputs.size(), 1u);
  EXPECT_EQ(abs->graph->values[static_cast<size_t>(abs->graph->inputs[0])].type.shape_string(), "[3,4,5]");
  EXPECT_EQ(abs->opsets.at(""), 13);

  // Every model of the suite loads (IR 3 to 13, every dtype, subgraphs).
  int loaded = 0;
  std::vector<std::string> failures;
  for (const auto& entry : fs::directory_iterator(root)) {
    const fs::path model = entry.path() / "model.onnx";
    if (!fs::exists(model)) continue;
    auto r = load_model(model.string());
    if (r.ok())
      ++loaded;
    else
      failures.push_back(r.status().to_string());
  }
  EXPECT_GT(loaded, 1000);
  EXPECT_TRUE(failures.empty()) << failures.size() << " failures, first: " << failures.front();
}

}  // namespace
}  // namespace sy
