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

// Identity over a seq(tensor(float)) input.
std::string identity_sequence_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("seq");
  auto seq_type = [](onnx::ValueInfoProto* v, const char* name) {
    v->set_name(name);
    v->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
  };
  seq_type(g->add_input(), "x");
  seq_type(g->add_output(), "y");
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("Identity");
  n->add_input("x");
  n->add_output("y");
  return m.SerializeAsString();
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
  EXPECT_NE(wrong_items.status().message().find("an element of type tensor(int64)"), std::string::npos)
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
