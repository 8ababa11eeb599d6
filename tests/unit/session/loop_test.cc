// The Loop operator through a session: for and while loops, loop-carried
// values that are handed through or grow, scan outputs, zero iterations,
// and the errors that name node and body. Expected values are worked out
// by hand in the comments.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"
#include "testing/session_helpers.h"

namespace sy {
namespace {

using testing::AttrSpec;
using testing::make_bool_tensor;
using testing::make_tensor;
using testing::ModelBuilder;

constexpr auto create = testing::create_session;

Tensor scalar_i64(int64_t v) { return make_tensor<int64_t>({}, {v}); }
Tensor flag(bool value) { return make_bool_tensor(Shape{}, {value ? 1 : 0}); }

// A body's first two inputs: the iteration number and the condition.
ModelBuilder body_with_counters() {
  ModelBuilder body(17);
  body.input("i", DataType::kInt64, {});
  body.input("cond_in", DataType::kBool, {});
  return body;
}

// y, ys = Loop(M, "", x): x doubles each iteration and ys stacks each
// iteration's incoming x (a body input handed straight to a scan output).
std::string doubling_model() {
  ModelBuilder body = body_with_counters();
  body.input("x_in", DataType::kFloat, {2});
  body.initializer("two", make_tensor<float>({1}, {2}));
  body.node("Mul", {"x_in", "two"}, {"x_out"}, {}, "double");
  body.node("Identity", {"cond_in"}, {"cond_out"});
  body.output("cond_out", DataType::kBool, {});
  body.output("x_out", DataType::kFloat, {2});
  body.output("x_in", DataType::kFloat, {2});
  ModelBuilder b(17);
  b.input("M", DataType::kInt64, {});
  b.input("x", DataType::kFloat, {2});
  b.node("Loop", {"M", "", "x"}, {"y", "ys"}, {AttrSpec("body", body)}, "loop");
  b.output_without_shape("y", DataType::kFloat);
  b.output_without_shape("ys", DataType::kFloat);
  return b.build();
}

TEST(LoopTest, AForLoopCarriesAValueAndStacksAScanOutput) {
  auto s = create(doubling_model());
  ASSERT_NE(s, nullptr);
  const Tensor x = make_tensor<float>({2}, {1, 2});
  for (int round = 0; round < 2; ++round) {
    auto r = s->run({{"M", scalar_i64(4)}, {"x", x}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    // [1,2] * 2^4
    EXPECT_EQ(testing::tensor_values<float>(r->at(0)), (std::vector<float>{16, 32}));
    EXPECT_EQ(r->at(1).shape(), Shape({4, 2}));
    EXPECT_EQ(testing::tensor_values<float>(r->at(1)), (std::vector<float>{1, 2, 2, 4, 4, 8, 8, 16}));
  }
  // Zero iterations (and a negative count) hand x on, with an empty stack.
  for (int64_t m : {0, -3}) {
    auto r = s->run({{"M", scalar_i64(m)}, {"x", x}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(testing::tensor_values<float>(r->at(0)), (std::vector<float>{1, 2}));
    EXPECT_NE(r->at(0).raw_data(), x.raw_data()) << "a result must not alias the caller's feed";
    EXPECT_EQ(r->at(1).shape(), Shape({0, 2}));
  }
}

TEST(LoopTest, BodyNodesAppearInTheAssignmentWithTheirNesting) {
  auto s = create(doubling_model());
  ASSERT_NE(s, nullptr);
  bool found = false;
  for (const NodeAssignment& a : s->assignment()) found = found || a.node_name == "loop/body/double";
  EXPECT_TRUE(found) << s->assignment_report();
}

// (a, b) = Loop(M, "", a0, b0) with a_out = b_in (handed through) and
// b_out = a_in + b_in: Fibonacci. Handing b_in through while the other
// frame is overwritten is what the kernel must copy rather than swap.
TEST(LoopTest, CarriedValuesHandedThroughSurviveTheSwap) {
  ModelBuilder body = body_with_counters();
  body.input("a_in", DataType::kInt64, {1});
  body.input("b_in", DataType::kInt64, {1});
  body.node("Add", {"a_in", "b_in"}, {"b_out"}, {}, "sum");
  body.output("cond_in", DataType::kBool, {});
  body.output("b_in", DataType::kInt64, {1});
  body.output("b_out", DataType::kInt64, {1});
  ModelBuilder b(17);
  b.input("M", DataType::kInt64, {});
  b.input("a0", DataType::kInt64, {1});
  b.input("b0", DataType::kInt64, {1});
  b.node("Loop", {"M", "", "a0", "b0"}, {"a", "b"}, {AttrSpec("body", body)}, "fib");
  b.output("a", DataType::kInt64, {1});
  b.output("b", DataType::kInt64, {1});
  auto s = create(b.build());
  ASSERT_NE(s, nullptr);
  auto r = s->run({{"M", scalar_i64(10)}, {"a0", make_tensor<int64_t>({1}, {0})}, {"b0", make_tensor<int64_t>({1}, {1})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // F(10) = 55, F(11) = 89
  EXPECT_EQ(testing::tensor_values<int64_t>(r->at(0)), (std::vector<int64_t>{55}));
  EXPECT_EQ(testing::tensor_values<int64_t>(r->at(1)), (std::vector<int64_t>{89}));
}

// A while loop: cond starts true; the body sets cond_out = i < 2 and adds
// i to a sum, so iterations 0, 1 and 2 run: sum = 0 + 1 + 2 = 3. With a
// trip count of 2 as well, only 0 and 1 run: sum = 1. With cond false at
// the start, none: sum = 10 as fed.
TEST(LoopTest, AWhileLoopStopsOnTheBodysCondition) {
  ModelBuilder body = body_with_counters();
  body.input("sum_in", DataType::kInt64, {});
  body.initializer("two", make_tensor<int64_t>({}, {2}));
  body.node("Less", {"i", "two"}, {"cond_out"});
  body.node("Add", {"sum_in", "i"}, {"sum_out"});
  body.output("cond_out", DataType::kBool, {});
  body.output("sum_out", DataType::kInt64, {});
  ModelBuilder b(17);
  b.input("M", DataType::kInt64, {});
  b.input("cond", DataType::kBool, {});
  b.input("sum0", DataType::kInt64, {});
  ModelBuilder while_only = b;
  b.node("Loop", {"M", "cond", "sum0"}, {"sum"}, {AttrSpec("body", body)}, "bounded");
  b.output("sum", DataType::kInt64, {});
  while_only.node("Loop", {"", "cond", "sum0"}, {"sum"}, {AttrSpec("body", body)}, "while");
  while_only.output("sum", DataType::kInt64, {});

  auto w = create(while_only.build());
  ASSERT_NE(w, nullptr);
  auto r = w->run({{"M", scalar_i64(0)}, {"cond", flag(true)}, {"sum0", scalar_i64(0)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(testing::tensor_values<int64_t>(r->at(0)), (std::vector<int64_t>{3}));
  r = w->run({{"M", scalar_i64(0)}, {"cond", flag(false)}, {"sum0", scalar_i64(10)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(testing::tensor_values<int64_t>(r->at(0)), (std::vector<int64_t>{10}));

  auto bounded = create(b.build());
  ASSERT_NE(bounded, nullptr);
  r = bounded->run({{"M", scalar_i64(2)}, {"cond", flag(true)}, {"sum0", scalar_i64(0)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(testing::tensor_values<int64_t>(r->at(0)), (std::vector<int64_t>{1}));
}

// x_out = Concat(x_in, x_in): the carried value doubles in length each
// iteration, so every iteration's shapes differ from the last one's.
TEST(LoopTest, ACarriedValueMayChangeShape) {
  ModelBuilder body = body_with_counters();
  body.input_without_shape("x_in", DataType::kFloat);
  body.node("Concat", {"x_in", "x_in"}, {"x_out"}, {AttrSpec("axis", int64_t{0})});
  body.output("cond_in", DataType::kBool, {});
  body.output_without_shape("x_out", DataType::kFloat);
  ModelBuilder b(17);
  b.input("M", DataType::kInt64, {});
  b.input("x", DataType::kFloat, {1});
  b.node("Loop", {"M", "", "x"}, {"y"}, {AttrSpec("body", body)});
  b.output_without_shape("y", DataType::kFloat);
  auto s = create(b.build());
  ASSERT_NE(s, nullptr);
  auto r = s->run({{"M", scalar_i64(3)}, {"x", make_tensor<float>({1}, {7})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->at(0).shape(), Shape({8}));
  EXPECT_EQ(testing::tensor_values<float>(r->at(0)), std::vector<float>(8, 7));
}

TEST(LoopTest, ALoopThatCouldNeverEndIsRefusedAtCreation) {
  ModelBuilder body = body_with_counters();
  body.input("x_in", DataType::kFloat, {1});
  body.output("cond_in", DataType::kBool, {});
  body.output("x_in", DataType::kFloat, {1});
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1});
  b.node("Loop", {"", "", "x"}, {"y"}, {AttrSpec("body", body)}, "forever");
  b.output("y", DataType::kFloat, {1});
  const std::string bytes = b.build();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_FALSE(s.ok());
  const std::string message = s.status().message();
  EXPECT_NE(message.find("'forever' (Loop)"), std::string::npos) << message;
  EXPECT_NE(message.find("neither a trip count"), std::string::npos) << message;
}

TEST(LoopTest, ABodyThatChangesACarriedTypeIsRefusedAtCreation) {
  ModelBuilder body = body_with_counters();
  body.input("x_in", DataType::kFloat, {1});
  body.node("Cast", {"x_in"}, {"x_out"}, {AttrSpec("to", int64_t{7})}, "to_int");
  body.output("cond_in", DataType::kBool, {});
  body.output("x_out", DataType::kInt64, {1});
  ModelBuilder b(17);
  b.input("M", DataType::kInt64, {});
  b.input("x", DataType::kFloat, {1});
  b.node("Loop", {"M", "", "x"}, {"y"}, {AttrSpec("body", body)}, "retyping");
  b.output_without_shape("y", DataType::kFloat);
  const std::string bytes = b.build();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_FALSE(s.ok());
  const std::string message = s.status().message();
  EXPECT_NE(message.find("'retyping' (Loop)"), std::string::npos) << message;
  EXPECT_NE(message.find("body output 1 ('x_out') is tensor(int64)"), std::string::npos) << message;
}

TEST(LoopTest, ABodyWithTheWrongNumberOfOutputsIsRefusedAtCreation) {
  ModelBuilder body = body_with_counters();
  body.input("x_in", DataType::kFloat, {1});
  body.output("cond_in", DataType::kBool, {});
  ModelBuilder b(17);
  b.input("M", DataType::kInt64, {});
  b.input("x", DataType::kFloat, {1});
  b.node("Loop", {"M", "", "x"}, {"y"}, {AttrSpec("body", body)}, "short");
  b.output_without_shape("y", DataType::kFloat);
  const std::string bytes = b.build();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_FALSE(s.ok());
  const std::string message = s.status().message();
  EXPECT_NE(message.find("'short' (Loop)"), std::string::npos) << message;
  EXPECT_NE(message.find("body has 1 outputs; expected 2"), std::string::npos) << message;
}

// A while loop whose condition stays true is the user's to stop:
// RunOptions.terminate ends it, and the session runs again afterwards.
TEST(LoopTest, TerminateStopsALoopThatDoesNotEndOnItsOwn) {
  ModelBuilder body = body_with_counters();
  body.input("x_in", DataType::kFloat, {1});
  body.output("cond_in", DataType::kBool, {});
  body.output("x_in", DataType::kFloat, {1});
  ModelBuilder b(17);
  b.input("cond", DataType::kBool, {});
  b.input("x", DataType::kFloat, {1});
  b.node("Loop", {"", "cond", "x"}, {"y"}, {AttrSpec("body", body)}, "spin");
  b.output("y", DataType::kFloat, {1});
  auto s = create(b.build());
  ASSERT_NE(s, nullptr);
  std::atomic<bool> stop{false};
  RunOptions options;
  options.terminate = &stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop = true;
  });
  auto r = s->run({{"cond", flag(true)}, {"x", make_tensor<float>({1}, {1})}}, {}, options);
  stopper.join();
  ASSERT_FALSE(r.ok());
  const std::string message = r.status().message();
  EXPECT_NE(message.find("terminated"), std::string::npos) << message;
  EXPECT_NE(message.find("'spin' (Loop)"), std::string::npos) << message;
  auto again = s->run({{"cond", flag(false)}, {"x", make_tensor<float>({1}, {4})}});
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(testing::tensor_values<float>(again->at(0)), (std::vector<float>{4}));
}

}  // namespace
}  // namespace sy
