// Inputs are checked against the spec's type constraints of their op version
// (op_versions.inc, from Changelog.md's "Inputs" and "Type Constraints"): a
// type the variable does not accept, two inputs of one variable with
// different types, and an input of a fixed type given another are errors
// naming node, input and types. The fuzzer found the second one: a Conv with
// a float X and a float8 W was run, reading W's bytes as floats past its end.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"

namespace sy {
namespace {

using testing::make_tensor;
using testing::ModelBuilder;

Status create_status(const std::string& bytes) {
  auto session = Session::create_from_bytes(bytes.data(), bytes.size());
  return session.ok() ? ok_status() : session.status();
}

void expect_error_with(const Status& status, const std::vector<std::string>& parts) {
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidGraph) << status.to_string();
  for (const std::string& part : parts)
    EXPECT_NE(status.message().find(part), std::string::npos) << "missing '" << part << "' in " << status.to_string();
}

std::string conv_with_weight_type(DataType w_type) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1, 1, 5, 5});
  b.input("w", w_type, {1, 1, 3, 3});
  b.node("Conv", {"x", "w"}, {"y"}, {}, "conv");
  b.output("y", DataType::kFloat, {1, 1, 3, 3});
  return b.build();
}

TEST(TypeConstraintTest, InputsOfOneVariableMustMatch) {
  expect_error_with(create_status(conv_with_weight_type(DataType::kDouble)),
                    {"node 'conv' (Conv)", "input 1 'w' is tensor(double) but input 0 'x' is tensor(float)",
                     "Conv-11 gives both type T"});
  // The fuzzer's case: a float8 weight is not a type Conv takes at all.
  expect_error_with(create_status(conv_with_weight_type(DataType::kFloat8E4M3FN)),
                    {"node 'conv' (Conv)", "input 1 'w' is tensor(float8e4m3fn); type T of Conv-11 accepts"});
}

TEST(TypeConstraintTest, TypeTheVariableDoesNotAcceptIsAnError) {
  ModelBuilder b(17);
  b.input("x", DataType::kString, {3});
  b.node("Abs", {"x"}, {"y"}, {}, "abs");
  b.output("y", DataType::kString, {3});
  expect_error_with(create_status(b.build()),
                    {"node 'abs' (Abs)", "input 0 'x' is tensor(string)", "type T of Abs-13 accepts",
                     "tensor(float), tensor(double)"});
}

TEST(TypeConstraintTest, FixedInputTypeIsChecked) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3});
  b.input("shape", DataType::kInt32, {1});
  b.node("Reshape", {"x", "shape"}, {"y"}, {}, "reshape");
  b.output("y", DataType::kFloat, {6});
  expect_error_with(create_status(b.build()),
                    {"node 'reshape' (Reshape)", "input 1 'shape' is tensor(int32); Reshape-14 takes tensor(int64)"});
}

TEST(TypeConstraintTest, EveryVariadicInputSharesTheVariable) {
  ModelBuilder b(17);
  b.input("a", DataType::kFloat, {2});
  b.input("b", DataType::kFloat, {2});
  b.input("c", DataType::kDouble, {2});
  b.node("Max", {"a", "b", "c"}, {"y"}, {}, "max");
  b.output("y", DataType::kFloat, {2});
  expect_error_with(create_status(b.build()), {"node 'max' (Max)", "input 2 'c' is tensor(double) but input 0 'a'"});
}

TEST(TypeConstraintTest, DifferentVariablesMayDiffer) {
  // Where: B is bool, T the two branches; Gather: T data, Tind int64 indices.
  ModelBuilder b(17);
  b.input("cond", DataType::kBool, {3});
  b.input("x", DataType::kFloat, {3});
  b.input("y", DataType::kFloat, {3});
  b.input("i", DataType::kInt64, {2});
  b.node("Where", {"cond", "x", "y"}, {"w"}, {}, "where");
  b.node("Gather", {"w", "i"}, {"g"}, {{"axis", int64_t{0}}}, "gather");
  b.output("g", DataType::kFloat, {2});
  const std::string bytes = b.build();
  auto session = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  Tensor cond = make_tensor<bool>({3}, {true, false, true});
  auto out = (*session)->run({{"cond", std::move(cond)},
                              {"x", make_tensor<float>({3}, {1.0f, 2.0f, 3.0f})},
                              {"y", make_tensor<float>({3}, {-1.0f, -2.0f, -3.0f})},
                              {"i", make_tensor<int64_t>({2}, {2, 1})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(testing::to_vector<float>(out->at(0)), (std::vector<float>{3.0f, -2.0f}));
}

}  // namespace
}  // namespace sy
