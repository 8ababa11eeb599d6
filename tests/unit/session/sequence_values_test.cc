// Sequences and optionals as values: built, cloned, fed to a model whose
// input is a sequence, returned by Identity, and refused where the model
// wants something else; and a sequence built from intermediate tensors
// in a session, whose buffers the executor reuses.
#include <gtest/gtest.h>

#include "onnx/onnx_pb.h"
#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"

namespace sy {
namespace {

// Type setters for graph inputs and outputs beyond ModelBuilder's tensors.
onnx::TypeProto* named(onnx::ValueInfoProto* v, const char* name) {
  v->set_name(name);
  return v->mutable_type();
}
onnx::TypeProto* tensor_of(onnx::TypeProto* t, int elem_type) {
  t->mutable_tensor_type()->set_elem_type(elem_type);
  return t;
}
onnx::TypeProto* seq_of(onnx::TypeProto* t) { return t->mutable_sequence_type()->mutable_elem_type(); }
onnx::TypeProto* optional_of(onnx::TypeProto* t) { return t->mutable_optional_type()->mutable_elem_type(); }

onnx::ModelProto opset17_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  m.mutable_graph()->set_name("containers");
  return m;
}

void add_node(onnx::GraphProto* g, const char* op, const std::vector<const char*>& inputs, const char* output) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  for (const char* name : inputs) n->add_input(name);
  n->add_output(output);
}

// Identity over a seq(tensor(float)) input.
std::string identity_sequence_model() {
  onnx::ModelProto m = opset17_model();
  onnx::GraphProto* g = m.mutable_graph();
  tensor_of(seq_of(named(g->add_input(), "x")), onnx::TensorProto::FLOAT);
  tensor_of(seq_of(named(g->add_output(), "y")), onnx::TensorProto::FLOAT);
  add_node(g, "Identity", {"x"}, "y");
  return m.SerializeAsString();
}

// Every kind of container as a graph input, read by the ops that take it:
//   s: seq(tensor(float)), i: int64 scalar  -> at = SequenceAt(s, i), len = SequenceLength(s)
//   o: optional(tensor(float))              -> has = OptionalHasElement(o), o_out = Identity(o)
//   os: optional(seq(tensor(float)))        -> os_out = Identity(os)
std::string containers_model() {
  onnx::ModelProto m = opset17_model();
  onnx::GraphProto* g = m.mutable_graph();
  constexpr int kFloat = onnx::TensorProto::FLOAT;
  tensor_of(seq_of(named(g->add_input(), "s")), kFloat);
  tensor_of(named(g->add_input(), "i"), onnx::TensorProto::INT64)->mutable_tensor_type()->mutable_shape();
  tensor_of(optional_of(named(g->add_input(), "o")), kFloat);
  tensor_of(seq_of(optional_of(named(g->add_input(), "os"))), kFloat);
  tensor_of(named(g->add_output(), "at"), kFloat);
  tensor_of(named(g->add_output(), "len"), onnx::TensorProto::INT64);
  tensor_of(named(g->add_output(), "has"), onnx::TensorProto::BOOL);
  tensor_of(optional_of(named(g->add_output(), "o_out")), kFloat);
  tensor_of(seq_of(optional_of(named(g->add_output(), "os_out"))), kFloat);
  add_node(g, "SequenceAt", {"s", "i"}, "at");
  add_node(g, "SequenceLength", {"s"}, "len");
  add_node(g, "OptionalHasElement", {"o"}, "has");
  add_node(g, "Identity", {"o"}, "o_out");
  add_node(g, "Identity", {"os"}, "os_out");
  return m.SerializeAsString();
}

std::unique_ptr<Session> containers_session() {
  const std::string bytes = containers_model();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size());
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(s).value() : nullptr;
}

Tensor float_seq(std::vector<Tensor> items) { return Tensor::sequence(DataType::kFloat, std::move(items)); }

TEST(SequenceValues, ValueInfoSaysWhatAFeedIs) {
  auto s = containers_session();
  ASSERT_TRUE(s);
  const std::vector<ValueInfo>& in = s->inputs();
  ASSERT_EQ(in.size(), 4u);
  EXPECT_EQ(in[0].type, "seq(tensor(float))");
  EXPECT_TRUE(in[0].sequence);
  EXPECT_FALSE(in[0].optional);
  EXPECT_EQ(in[0].element_dtype, DataType::kFloat);
  EXPECT_EQ(in[1].type, "tensor(int64)");
  EXPECT_FALSE(in[1].sequence || in[1].optional);
  EXPECT_EQ(in[1].element_dtype, DataType::kInt64);
  EXPECT_EQ(in[2].type, "optional(tensor(float))");
  EXPECT_TRUE(in[2].optional);
  EXPECT_FALSE(in[2].sequence);
  EXPECT_EQ(in[3].type, "optional(seq(tensor(float)))");
  EXPECT_TRUE(in[3].optional && in[3].sequence);
  EXPECT_EQ(in[3].element_dtype, DataType::kFloat);
  EXPECT_EQ(s->outputs()[4].type, "optional(seq(tensor(float)))");
}

TEST(SequenceValues, SequencesAndOptionalsAreFedAndFetched) {
  auto s = containers_session();
  ASSERT_TRUE(s);
  const Tensor seq =
      float_seq({testing::make_tensor<float>({2}, {1, 2}), testing::make_tensor<float>({3}, {3, 4, 5})});
  auto out = s->run({{"s", seq},
                     {"i", testing::make_tensor<int64_t>({}, {-1})},
                     {"o", testing::make_tensor<float>({2}, {8, 9})},
                     {"os", seq}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(testing::to_vector<float>(out->at(0)), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(testing::to_vector<int64_t>(out->at(1)), (std::vector<int64_t>{2}));
  EXPECT_EQ(testing::to_vector<bool>(out->at(2)), (std::vector<bool>{true}));
  ASSERT_TRUE(out->at(3).is_tensor());
  EXPECT_EQ(testing::to_vector<float>(out->at(3)), (std::vector<float>{8, 9}));
  ASSERT_EQ(out->at(4).kind(), ValueKind::kSequence);
  ASSERT_EQ(out->at(4).items().size(), 2u);
  EXPECT_EQ(testing::to_vector<float>(out->at(4).items()[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(testing::to_vector<float>(out->at(4).items()[1]), (std::vector<float>{3, 4, 5}));
  // SequenceAt and Identity hand their values on without copying; the
  // results still never share the feeds' bytes.
  EXPECT_NE(out->at(0).raw_data(), seq.items()[1].raw_data());
  EXPECT_NE(out->at(4).items()[0].raw_data(), seq.items()[0].raw_data());
  EXPECT_NE(out->at(4).items()[1].raw_data(), seq.items()[1].raw_data());
  // The results are the caller's: another run leaves them as they were.
  auto again = s->run({{"s", float_seq({testing::make_tensor<float>({1}, {6})})},
                       {"i", testing::make_tensor<int64_t>({}, {0})},
                       {"o", Tensor::none(DataType::kFloat)},
                       {"os", Tensor::none(DataType::kFloat)}});
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(testing::to_vector<float>(again->at(0)), (std::vector<float>{6}));
  EXPECT_EQ(testing::to_vector<int64_t>(again->at(1)), (std::vector<int64_t>{1}));
  EXPECT_EQ(testing::to_vector<bool>(again->at(2)), (std::vector<bool>{false}));
  EXPECT_EQ(again->at(3).kind(), ValueKind::kNone);
  EXPECT_EQ(again->at(4).kind(), ValueKind::kNone);
  EXPECT_EQ(testing::to_vector<float>(out->at(4).items()[1]), (std::vector<float>{3, 4, 5}));
}

TEST(SequenceValues, AnEmptySequenceIsAFeed) {
  auto s = containers_session();
  ASSERT_TRUE(s);
  // Every node runs, so "s" keeps an element for SequenceAt; "os" is empty.
  auto out = s->run({{"s", float_seq({testing::make_tensor<float>({1}, {5})})},
                     {"i", testing::make_tensor<int64_t>({}, {0})},
                     {"o", Tensor::none()},
                     {"os", float_seq({})}},
                    {"os_out"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->at(0).kind(), ValueKind::kSequence);
  EXPECT_TRUE(out->at(0).items().empty());
  EXPECT_EQ(out->at(0).dtype(), DataType::kFloat);

  const std::string bytes = identity_sequence_model();
  auto identity = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(identity.ok()) << identity.status().to_string();
  auto same = (*identity)->run({{"x", float_seq({})}});
  ASSERT_TRUE(same.ok()) << same.status().to_string();
  ASSERT_EQ(same->at(0).kind(), ValueKind::kSequence);
  EXPECT_TRUE(same->at(0).items().empty());
}

// Each wrong feed is refused before the run, naming the input, the type it
// expected and what it was given.
TEST(SequenceValues, WrongContainerFeedsNameInputAndTypes) {
  auto s = containers_session();
  ASSERT_TRUE(s);
  const Tensor good_seq = float_seq({testing::make_tensor<float>({1}, {1})});
  const Tensor index = testing::make_tensor<int64_t>({}, {0});
  auto message = [&](const char* name, const Tensor& value) {
    std::vector<std::pair<std::string, Tensor>> feeds = {
        {"s", good_seq}, {"i", index}, {"o", Tensor::none()}, {"os", Tensor::none()}};
    for (auto& [n, v] : feeds)
      if (n == name) v = value;
    auto out = s->run(feeds);
    return out.ok() ? std::string("(ran)") : out.status().message();
  };
  auto has = [](const std::string& text, const std::string& part) {
    return ::testing::AssertionResult(text.find(part) != std::string::npos)
           << "'" << text << "' lacks '" << part << "'";
  };
  EXPECT_TRUE(has(message("i", Tensor::none(DataType::kInt64)),
                  "input 'i': expected tensor(int64), got optional(none)"));
  EXPECT_TRUE(has(message("i", float_seq({})), "input 'i': expected tensor(int64), got seq(float) of 0"));
  EXPECT_TRUE(has(message("s", Tensor::none()), "input 's': expected seq(tensor(float)), got optional(none)"));
  EXPECT_TRUE(has(message("s", Tensor::sequence(DataType::kInt64, {})),
                  "input 's': expected seq(tensor(float)), got a sequence of tensor(int64)"));
  const Tensor mixed = float_seq({testing::make_tensor<float>({1}, {1}), testing::make_tensor<int64_t>({1}, {2})});
  EXPECT_TRUE(has(message("s", mixed),
                  "input 's': expected seq(tensor(float)), got an element of type tensor(int64) (element 1)"));
  EXPECT_TRUE(has(message("s", float_seq({good_seq})),
                  "input 's': expected seq(tensor(float)), got seq(float) of 1 (element 0)"));
  EXPECT_TRUE(has(message("o", good_seq), "input 'o': expected optional(tensor(float)), got seq(float) of 1"));
  EXPECT_TRUE(has(message("o", testing::make_tensor<int64_t>({1}, {2})),
                  "input 'o': expected optional(tensor(float)), got tensor(int64)"));
  EXPECT_TRUE(has(message("o", Tensor::none(DataType::kInt64)),
                  "input 'o': expected optional(tensor(float)), got an empty optional of tensor(int64)"));
  EXPECT_TRUE(has(message("os", testing::make_tensor<float>({1}, {2})),
                  "input 'os': expected optional(seq(tensor(float))), got float[1]"));
}

TEST(SequenceValues, IoBindingBindsContainersOnTheHost) {
  auto s = containers_session();
  ASSERT_TRUE(s);
  auto bind_inputs = [](IoBinding& b) {
    ASSERT_TRUE(b.bind_input("s", float_seq({testing::make_tensor<float>({2}, {1, 2})})).ok());
    ASSERT_TRUE(b.bind_input("i", testing::make_tensor<int64_t>({}, {0})).ok());
    ASSERT_TRUE(b.bind_input("o", Tensor::none(DataType::kFloat)).ok());
    ASSERT_TRUE(b.bind_input("os", float_seq({testing::make_tensor<float>({1}, {7})})).ok());
  };
  IoBinding binding;
  bind_inputs(binding);
  ASSERT_TRUE(binding.bind_output("os_out").ok());
  ASSERT_TRUE(binding.bind_output("o_out").ok());
  Status st = s->run_with_binding(binding);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_EQ(binding.outputs().size(), 2u);
  ASSERT_EQ(binding.outputs()[0].kind(), ValueKind::kSequence);
  EXPECT_EQ(testing::to_vector<float>(binding.outputs()[0].items().at(0)), (std::vector<float>{7}));
  EXPECT_EQ(binding.outputs()[1].kind(), ValueKind::kNone);

  // A sequence has no bytes of its own to write into a caller's tensor.
  IoBinding into_tensor;
  bind_inputs(into_tensor);
  ASSERT_TRUE(into_tensor.bind_output("os_out", testing::make_tensor<float>({1}, {0})).ok());
  st = s->run_with_binding(into_tensor);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("output 'os_out' is optional(seq(tensor(float))), which cannot be written into a "
                              "bound tensor; bind it without one"),
            std::string::npos)
      << st.message();
}

TEST(SequenceValues, CloneCopiesEveryItem) {
  Tensor a = testing::make_tensor<float>({2}, {1, 2});
  Tensor seq = Tensor::sequence(DataType::kFloat, {a});
  auto copy = seq.clone();
  ASSERT_TRUE(copy.ok());
  ASSERT_EQ(copy->kind(), ValueKind::kSequence);
  ASSERT_EQ(copy->items().size(), 1u);
  EXPECT_NE(copy->items()[0].raw_data(), a.raw_data());
  EXPECT_EQ(copy->items()[0].data<float>()[1], 2.0f);
  EXPECT_EQ(Tensor::none().kind(), ValueKind::kNone);
}

TEST(SequenceValues, IdentityReturnsTheSequence) {
  const std::string bytes = identity_sequence_model();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)->inputs()[0].type, "seq(tensor(float))");
  Tensor seq = Tensor::sequence(DataType::kFloat, {testing::make_tensor<float>({2}, {1, 2}),
                                                   testing::make_tensor<float>({1}, {7})});
  auto out = (*s)->run({{"x", seq}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->at(0).kind(), ValueKind::kSequence);
  ASSERT_EQ(out->at(0).items().size(), 2u);
  EXPECT_EQ(out->at(0).items()[1].data<float>()[0], 7.0f);
}

TEST(SequenceValues, WrongKindOrElementTypeIsRefused) {
  const std::string bytes = identity_sequence_model();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(s.ok());
  auto tensor_fed = (*s)->run({{"x", testing::make_tensor<float>({2}, {1, 2})}});
  ASSERT_FALSE(tensor_fed.ok());
  EXPECT_NE(tensor_fed.status().message().find("input 'x': expected seq(tensor(float)), got float[2]"),
            std::string::npos)
      << tensor_fed.status().message();
  auto wrong_items = (*s)->run({{"x", Tensor::sequence(DataType::kInt64, {testing::make_tensor<int64_t>({1}, {3})})}});
  ASSERT_FALSE(wrong_items.ok());
  EXPECT_NE(wrong_items.status().message().find("got a sequence of tensor(int64)"), std::string::npos)
      << wrong_items.status().message();
}

TEST(SequenceValues, ItemsOutliveTheBuffersOfTheTensorsTheyCameFrom) {
  // a = -x goes into a sequence; after that its planned buffer is free,
  // and the next values (|x|, then relu(|x|)) may take it. The sequence
  // must still hold -x when ConcatFromSequence reads it at the end.
  testing::ModelBuilder b(17);
  b.input("x", DataType::kFloat, {4});
  b.node("Neg", {"x"}, {"a"});
  b.node("SequenceConstruct", {"a"}, {"s"});
  b.node("Abs", {"x"}, {"c"});
  b.node("Relu", {"c"}, {"d"});
  b.node("Add", {"d", "c"}, {"e"});
  b.node("ConcatFromSequence", {"s"}, {"y"}, {{"axis", 0}});
  b.output("y", DataType::kFloat, {4});
  b.output("e", DataType::kFloat, {4});
  const std::string bytes = b.build();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  for (int run = 0; run < 2; ++run) {
    auto out = (*s)->run({{"x", testing::make_tensor<float>({4}, {1, -2, 3, -4})}});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(testing::to_vector<float>(out->at(0)), (std::vector<float>{-1, 2, -3, 4}));
    EXPECT_EQ(testing::to_vector<float>(out->at(1)), (std::vector<float>{2, 4, 6, 8}));
  }
}

}  // namespace
}  // namespace sy
