// Session creation on models that are valid protobuf but cannot run here:
// each error must name what is wrong and where.
#include <gtest/gtest.h>

#include "switchyard/session.h"
#include "testing/model_builder.h"

namespace sy {
namespace {

using testing::ModelBuilder;

Status create_status(const ModelBuilder& b) {
  const std::string bytes = b.build();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size());
  return s.ok() ? ok_status() : s.status();
}

TEST(ModelErrors, UnknownOpNamesNodeDomainAndOpset) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2});
  b.node("Frobnicate", {"x"}, {"y"}, {}, "frob1");
  b.output("y", DataType::kFloat, {2});
  const Status st = create_status(b);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kNotImplemented);
  EXPECT_NE(st.message().find("'frob1'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("unknown op 'Frobnicate'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("ai.onnx"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("opset 17"), std::string::npos) << st.message();
}

TEST(ModelErrors, OpNotYetDefinedAtTheModelsOpset) {
  ModelBuilder b(13);  // Gelu arrived in opset 20
  b.input("x", DataType::kFloat, {2});
  b.node("Gelu", {"x"}, {"y"}, {}, "gelu1");
  b.output("y", DataType::kFloat, {2});
  const Status st = create_status(b);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidGraph);
  EXPECT_NE(st.message().find("'gelu1'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("first appears in opset 20"), std::string::npos) << st.message();
}

TEST(ModelErrors, OpsetNewerThanSupported) {
  ModelBuilder b(99);
  b.input("x", DataType::kFloat, {2});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", DataType::kFloat, {2});
  const Status st = create_status(b);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kNotImplemented);
  EXPECT_NE(st.message().find("opset 99"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("newer than the newest this build supports"), std::string::npos) << st.message();
}

TEST(ModelErrors, WrongInputArityNamesTheNode) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2});
  b.node("Add", {"x"}, {"y"}, {}, "add1");
  b.output("y", DataType::kFloat, {2});
  const Status st = create_status(b);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'add1'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("1 inputs, expected 2"), std::string::npos) << st.message();
}

TEST(ModelErrors, ShapesThatCannotBroadcastAreCaughtAtLoad) {
  ModelBuilder b(17);
  b.input("a", DataType::kFloat, {2, 3});
  b.input("b", DataType::kFloat, {4});
  b.node("Add", {"a", "b"}, {"y"}, {}, "add1");
  b.output("y", DataType::kFloat, {2, 3});
  const Status st = create_status(b);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'add1'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("3 vs 4"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace sy
