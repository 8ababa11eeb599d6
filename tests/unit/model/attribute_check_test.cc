// Attributes of standard ops are checked against the spec's list for the
// op version (tools/gen_op_versions.py reads it from Changelog.md), those of
// com.switchyard's fused ops against their schemas (schema/fused.cc): one
// the list does not have is an error naming node and attribute, unless the
// session config says to ignore such attributes. An attribute of another
// type than the list's is always an error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/loader.h"
#include "model/resolve.h"
#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"

namespace sy {
namespace {

using testing::AttrSpec;
using testing::make_tensor;
using testing::ModelBuilder;

// Creating a session from `bytes` fails with a message containing `part`.
void expect_refused(const std::string& bytes, const std::string& part) {
  auto session = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find(part), std::string::npos) << session.status().to_string();
}

std::string relu_with_alpha() {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {3});
  b.node("Relu", {"x"}, {"y"}, {{"alpha", 0.5f}}, "relu_with_alpha");
  b.output("y", DataType::kFloat, {3});
  return b.build();
}

TEST(AttributeCheckTest, UnknownAttributeIsAnErrorNamingNodeAndAttribute) {
  const std::string bytes = relu_with_alpha();
  auto session = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidGraph);
  EXPECT_NE(session.status().message().find("node 'relu_with_alpha' (Relu): unknown attribute 'alpha' for Relu-14 "
                                            "of domain 'ai.onnx' (it takes no attributes)"),
            std::string::npos)
      << session.status().to_string();
  EXPECT_NE(session.status().message().find("session.allow_unknown_attributes"), std::string::npos)
      << session.status().to_string();
}

TEST(AttributeCheckTest, ConfigKeyLetsTheModelLoadAndTheAttributeIsIgnored) {
  const std::string bytes = relu_with_alpha();
  SessionOptions options;
  options.config["session.allow_unknown_attributes"] = "1";
  auto session = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  auto out = (*session)->run({{"x", make_tensor<float>({3}, {-1.0f, 0.0f, 2.0f})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // Relu, not a leaky one with slope 0.5.
  EXPECT_EQ(testing::to_vector<float>(out->at(0)), (std::vector<float>{0.0f, 0.0f, 2.0f}));

  options.config["session.allow_unknown_attributes"] = "0";
  EXPECT_FALSE(Session::create_from_bytes(bytes.data(), bytes.size(), options).ok());

  options.config["session.allow_unknown_attributes"] = "yes";
  auto bad_value = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  ASSERT_FALSE(bad_value.ok());
  EXPECT_NE(bad_value.status().message().find("'session.allow_unknown_attributes' is 'yes'; accepted: '0' or '1'"),
            std::string::npos)
      << bad_value.status().to_string();
}

TEST(AttributeCheckTest, ErrorListsTheAttributesOfThatOpVersion) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1, 1, 4, 4});
  b.initializer("w", make_tensor<float>({1, 1, 1, 1}, {2.0f}));
  b.node("Conv", {"x", "w"}, {"y"}, {{"stride", std::vector<int64_t>{2, 2}}}, "conv_typo");
  b.output("y", DataType::kFloat, {1, 1, 4, 4});
  const std::string bytes = b.build();
  expect_refused(bytes, "node 'conv_typo' (Conv): unknown attribute 'stride' for Conv-11 of domain "
                                            "'ai.onnx' (it takes auto_pad,dilations,group,kernel_shape,pads,strides)");
}

Status resolve_bytes(const std::string& bytes) {
  auto model = load_model_from_bytes(bytes.data(), bytes.size());
  if (!model.ok()) return model.status();
  return resolve(*model->graph);
}

TEST(AttributeCheckTest, ListsArePerOpVersion) {
  // consumed_inputs belongs to Relu-1 (opset 1 to 5) only.
  for (int64_t opset : {int64_t{5}, int64_t{6}}) {
    ModelBuilder b(opset);
    b.input("x", DataType::kFloat, {3});
    b.node("Relu", {"x"}, {"y"}, {{"consumed_inputs", std::vector<int64_t>{0}}}, "old_relu");
    b.output("y", DataType::kFloat, {3});
    Status st = resolve_bytes(b.build());
    if (opset == 5) {
      EXPECT_TRUE(st.ok()) << st.to_string();
    } else {
      ASSERT_FALSE(st.ok());
      EXPECT_NE(st.message().find("unknown attribute 'consumed_inputs' for Relu-6"), std::string::npos) << st.to_string();
    }
  }
}

TEST(AttributeCheckTest, NodesInsideSubgraphsAreChecked) {
  ModelBuilder then_branch(17);
  then_branch.node("Identity", {"x"}, {"t"}, {{"bogus", int64_t{1}}}, "inner_identity");
  then_branch.output("t", DataType::kFloat, {2});
  ModelBuilder else_branch(17);
  else_branch.node("Neg", {"x"}, {"e"});
  else_branch.output("e", DataType::kFloat, {2});
  ModelBuilder b(17);
  b.input("cond", DataType::kBool, {});
  b.input("x", DataType::kFloat, {2});
  b.node("If", {"cond"}, {"y"}, {{"then_branch", then_branch}, {"else_branch", else_branch}}, "if");
  b.output("y", DataType::kFloat, {2});
  Status st = resolve_bytes(b.build());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("node 'inner_identity' (Identity): unknown attribute 'bogus'"), std::string::npos)
      << st.to_string();
}

// What the hostile-input suite found: an attribute of the wrong type read as
// absent, so the kernel ran with its default in silence.
TEST(AttributeCheckTest, WrongTypeIsAnErrorNamingNodeAttributeAndTypes) {
  struct Case {
    const char* op;
    AttrSpec attribute;
    const char* message;
  };
  const Case cases[] = {
      {"LeakyRelu", AttrSpec("alpha", int64_t{2}),
       "node 'n' (LeakyRelu): attribute 'alpha' of LeakyRelu-16 has type float in the ONNX spec; the model gives it "
       "as int"},
      {"Softmax", AttrSpec("axis", "1"),
       "node 'n' (Softmax): attribute 'axis' of Softmax-13 has type int in the ONNX spec; the model gives it as string"},
      {"Transpose", AttrSpec("perm", std::vector<float>{1.0f, 0.0f}),
       "node 'n' (Transpose): attribute 'perm' of Transpose-13 has type ints in the ONNX spec; the model gives it as "
       "floats"},
      {"Transpose", AttrSpec("perm", int64_t{1}),
       "attribute 'perm' of Transpose-13 has type ints in the ONNX spec; the model gives it as int"},
  };
  for (const Case& c : cases) {
    ModelBuilder b(17);
    b.input("x", DataType::kFloat, {2, 3});
    b.node(c.op, {"x"}, {"y"}, {c.attribute}, "n");
    b.output("y", DataType::kFloat, {});
    const std::string bytes = b.build();
    // The session option for unknown names does not excuse a wrong type.
    for (const char* allow : {"0", "1"}) {
      SessionOptions options;
      options.config["session.allow_unknown_attributes"] = allow;
      auto session = Session::create_from_bytes(bytes.data(), bytes.size(), options);
      ASSERT_FALSE(session.ok()) << c.op;
      EXPECT_EQ(session.status().code(), StatusCode::kInvalidGraph);
      EXPECT_NE(session.status().message().find(c.message), std::string::npos) << session.status().to_string();
    }
  }
}

TEST(AttributeCheckTest, RightTypesLoadAndCompute) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2});
  b.node("LeakyRelu", {"x"}, {"y"}, {{"alpha", 0.25f}}, "n");
  b.output("y", DataType::kFloat, {2});
  const std::string bytes = b.build();
  auto session = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  auto out = (*session)->run({{"x", make_tensor<float>({2}, {-4.0f, 3.0f})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(testing::to_vector<float>(out->at(0)), (std::vector<float>{-1.0f, 3.0f}));
}

// x [1, 1, 2, 2] -> FusedConv(w = 2, `attrs`) -> y, com.switchyard imported
// at `switchyard_opset` (0: not imported).
std::string fused_conv_model(std::vector<AttrSpec> attrs, int64_t switchyard_opset = 1) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1, 1, 2, 2});
  b.initializer("w", make_tensor<float>({1, 1, 1, 1}, {2.0f}));
  b.domain_node("com.switchyard", "FusedConv", {"x", "w"}, {"y"}, std::move(attrs), "fused");
  if (switchyard_opset > 0) b.opset_import("com.switchyard", switchyard_opset);
  b.output("y", DataType::kFloat, {1, 1, 2, 2});
  return b.build();
}

TEST(AttributeCheckTest, SwitchyardOpsAreCheckedAgainstTheirSchemas) {
  {
    const std::string bytes = fused_conv_model({{"activation", "Relu"}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}});
    auto session = Session::create_from_bytes(bytes.data(), bytes.size());
    ASSERT_TRUE(session.ok()) << session.status().to_string();
    auto out = (*session)->run({{"x", make_tensor<float>({1, 1, 2, 2}, {-1.0f, 0.5f, 2.0f, -3.0f})}});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(testing::to_vector<float>(out->at(0)), (std::vector<float>{0.0f, 1.0f, 4.0f, 0.0f}));
  }
  {
    // A misspelt attribute would be ignored, and the Relu with it.
    const std::string bytes = fused_conv_model({{"activaton", "Relu"}});
    expect_refused(bytes, "node 'fused' (com.switchyard.FusedConv): unknown attribute "
                                              "'activaton' for FusedConv-1 of domain 'com.switchyard' (it takes "
                                              "activation,");
  }
  {
    const std::string bytes = fused_conv_model({{"activation_params", int64_t{6}}});
    expect_refused(bytes, "attribute 'activation_params' of FusedConv-1 has type floats in its "
                                              "schema");
  }
  {
    const std::string bytes = fused_conv_model({}, /*switchyard_opset=*/0);
    expect_refused(bytes, "domain 'com.switchyard' is not imported");
  }
  {
    const std::string bytes = fused_conv_model({}, /*switchyard_opset=*/2);
    expect_refused(bytes, "opset 2 of domain 'com.switchyard', newer than the newest");
  }
}

TEST(AttributeCheckTest, AnOnnxOpWrittenInTheSwitchyardDomainIsCheckedAsOne) {
  // save_model() writes an ai.onnx op newer than the model's opset in
  // com.switchyard under its own name; read back, it is that op, with that
  // op's attributes. A private attribute on it is an error, not ignored.
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1, 1, 2, 2});
  b.initializer("w", make_tensor<float>({1, 1, 1, 1}, {2.0f}));
  b.domain_node("com.switchyard", "Conv", {"x", "w"}, {"y"}, {{"fused_activation", "Relu"}}, "conv");
  b.opset_import("com.switchyard", 1);
  b.output("y", DataType::kFloat, {1, 1, 2, 2});
  std::string bytes = b.build();
  auto model = load_model_from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  Status st = resolve(*model->graph);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("unknown attribute 'fused_activation' for Conv-11 of domain 'ai.onnx'"),
            std::string::npos)
      << st.to_string();

  ModelBuilder gelu(17);
  gelu.input("x", DataType::kFloat, {3});
  gelu.domain_node("com.switchyard", "Gelu", {"x"}, {"y"}, {{"approximate", "tanh"}}, "gelu");
  gelu.opset_import("com.switchyard", 1);
  gelu.output("y", DataType::kFloat, {3});
  bytes = gelu.build();
  model = load_model_from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  st = resolve(*model->graph);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(model->graph->nodes[0].domain, "");
  EXPECT_EQ(model->graph->nodes[0].since_version, 20);
}

}  // namespace
}  // namespace sy
