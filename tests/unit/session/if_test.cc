// The If operator through a session: branches compiled once at creation,
// reading outer-scope values and their own initializers, nested, with
// shapes that depend on the branch, and the errors that name node and
// branch. Expected values are worked out by hand in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
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

std::vector<float> floats(const Tensor& t) { return testing::tensor_values<float>(t); }

Tensor flag(bool value) { return make_bool_tensor(Shape{}, {value ? 1 : 0}); }

std::vector<std::string> assigned_names(const Session& s) {
  std::vector<std::string> names;
  for (const NodeAssignment& a : s.assignment()) names.push_back(a.node_name);
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A branch computing `out` = Neg(x), x a float[n] of the outer scope.
ModelBuilder neg_branch(const std::string& out, int n) {
  ModelBuilder branch(17);
  branch.node("Neg", {"x"}, {out}, {}, "else_neg");
  branch.output(out, DataType::kFloat, {n});
  return branch;
}

// y = If(cond) with these branches, over an input x of float[3], the node
// named `name`.
std::string if_over_x(const ModelBuilder& then_branch, const ModelBuilder& else_branch, const std::string& name) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {3});
  b.input("cond", DataType::kBool, {});
  b.node("If", {"cond"}, {"y"}, {AttrSpec("then_branch", then_branch), AttrSpec("else_branch", else_branch)}, name);
  b.output("y", DataType::kFloat, {3});
  return b.build();
}

// y = If(cond) then (n + w_then) else (x * w_else), where n = Neg(x) is an
// intermediate of the main graph read from inside the then branch, and
// each branch has an initializer of its own.
std::string outer_scope_model() {
  ModelBuilder then_branch(17);
  then_branch.initializer("w_then", make_tensor<float>({3}, {10, 20, 30}));
  then_branch.node("Add", {"n", "w_then"}, {"t"}, {}, "then_add");
  then_branch.output("t", DataType::kFloat, {3});
  ModelBuilder else_branch(17);
  else_branch.initializer("w_else", make_tensor<float>({3}, {2, 2, 2}));
  else_branch.node("Mul", {"x", "w_else"}, {"e"}, {}, "else_mul");
  else_branch.output("e", DataType::kFloat, {3});
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {3});
  b.input("cond", DataType::kBool, {});
  b.node("Neg", {"x"}, {"n"}, {}, "neg");
  b.node("If", {"cond"}, {"y"}, {AttrSpec("then_branch", then_branch), AttrSpec("else_branch", else_branch)}, "if");
  b.output("y", DataType::kFloat, {3});
  return b.build();
}

TEST(IfTest, PicksTheBranchThatReadsOuterScopeValuesAndItsInitializer) {
  auto s = create(outer_scope_model());
  ASSERT_NE(s, nullptr);
  const Tensor x = make_tensor<float>({3}, {1, 2, 3});
  // Alternating, so each branch's kept frame is reused after the other ran.
  for (int round = 0; round < 2; ++round) {
    auto yes = s->run({{"x", x}, {"cond", flag(true)}});
    ASSERT_TRUE(yes.ok()) << yes.status().to_string();
    // -[1,2,3] + [10,20,30]
    EXPECT_EQ(floats(yes->at(0)), (std::vector<float>{9, 18, 27}));
    auto no = s->run({{"x", x}, {"cond", flag(false)}});
    ASSERT_TRUE(no.ok()) << no.status().to_string();
    // [1,2,3] * 2
    EXPECT_EQ(floats(no->at(0)), (std::vector<float>{2, 4, 6}));
  }
}

TEST(IfTest, BranchNodesAppearInTheAssignmentWithTheirNesting) {
  auto s = create(outer_scope_model());
  ASSERT_NE(s, nullptr);
  const std::vector<std::string> names = assigned_names(*s);
  EXPECT_TRUE(has(names, "if/then_branch/then_add"));
  EXPECT_TRUE(has(names, "if/else_branch/else_mul"));
  EXPECT_TRUE(has(names, "if"));
}

TEST(IfTest, BranchesAreOptimizedOnceAtCreation) {
  // then: c = w1 + w2 (constant: folded at creation to [1,2,3]), t = x * c.
  ModelBuilder then_branch(17);
  then_branch.initializer("w1", make_tensor<float>({3}, {1, 1, 1}));
  then_branch.initializer("w2", make_tensor<float>({3}, {0, 1, 2}));
  then_branch.node("Add", {"w1", "w2"}, {"c"}, {}, "fold_add");
  then_branch.node("Mul", {"x", "c"}, {"t"}, {}, "then_mul");
  then_branch.output("t", DataType::kFloat, {3});
  auto s = create(if_over_x(then_branch, neg_branch("e", 3), "if"));
  ASSERT_NE(s, nullptr);
  const std::vector<std::string> names = assigned_names(*s);
  EXPECT_FALSE(has(names, "if/then_branch/fold_add")) << "not folded";
  EXPECT_TRUE(has(names, "if/then_branch/then_mul"));
  auto out = s->run({{"x", make_tensor<float>({3}, {1, 2, 3})}, {"cond", flag(true)}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // [1,2,3] * [1,2,3]
  EXPECT_EQ(floats(out->at(0)), (std::vector<float>{1, 4, 9}));
}

// Weights of the main graph that a branch reorders (as exporters write an
// LSTM's gates inside a branch) are constants to the branch too: the
// reordering is folded at creation, not run each time.
TEST(IfTest, ABranchFoldsOverTheMainGraphsWeights) {
  ModelBuilder then_branch(17);
  then_branch.node("Add", {"w1", "w2"}, {"c"}, {}, "fold_outer_add");
  then_branch.node("Mul", {"x", "c"}, {"t"}, {}, "then_mul");
  then_branch.output("t", DataType::kFloat, {3});
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {3});
  b.input("cond", DataType::kBool, {});
  b.initializer("w1", make_tensor<float>({3}, {1, 1, 1}));
  b.initializer("w2", make_tensor<float>({3}, {0, 1, 2}));
  b.node("If", {"cond"}, {"y"}, {AttrSpec("then_branch", then_branch), AttrSpec("else_branch", neg_branch("e", 3))}, "if");
  b.output("y", DataType::kFloat, {3});
  auto s = create(b.build());
  ASSERT_NE(s, nullptr);
  const std::vector<std::string> names = assigned_names(*s);
  EXPECT_FALSE(has(names, "if/then_branch/fold_outer_add")) << "not folded";
  EXPECT_TRUE(has(names, "if/then_branch/then_mul"));
  auto out = s->run({{"x", make_tensor<float>({3}, {1, 2, 3})}, {"cond", flag(true)}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // [1,2,3] * ([1,1,1] + [0,1,2])
  EXPECT_EQ(floats(out->at(0)), (std::vector<float>{1, 4, 9}));
}

// z = If(c1) then (If(c2) then a * x else a - x, with a = x + x local to the
// outer then branch) else -x. The inner branches read x from two levels
// out and a from one; the inner If's condition c2 comes from the main graph.
std::string nested_model() {
  ModelBuilder inner_then(17);
  inner_then.node("Mul", {"a", "x"}, {"it"}, {}, "inner_mul");
  inner_then.output("it", DataType::kFloat, {2});
  ModelBuilder inner_else(17);
  inner_else.node("Sub", {"a", "x"}, {"ie"}, {}, "inner_sub");
  inner_else.output("ie", DataType::kFloat, {2});
  ModelBuilder outer_then(17);
  outer_then.node("Add", {"x", "x"}, {"a"}, {}, "outer_add");
  outer_then.node("If", {"c2"}, {"z_then"},
                  {AttrSpec("then_branch", inner_then), AttrSpec("else_branch", inner_else)}, "inner_if");
  outer_then.output("z_then", DataType::kFloat, {2});
  const ModelBuilder outer_else = neg_branch("z_else", 2);
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2});
  b.input("c1", DataType::kBool, {});
  b.input("c2", DataType::kBool, {});
  b.node("If", {"c1"}, {"z"}, {AttrSpec("then_branch", outer_then), AttrSpec("else_branch", outer_else)}, "outer_if");
  b.output("z", DataType::kFloat, {2});
  return b.build();
}

TEST(IfTest, AnIfInsideAnIfReadsValuesFromEveryEnclosingGraph) {
  auto s = create(nested_model());
  ASSERT_NE(s, nullptr);
  const Tensor x = make_tensor<float>({2}, {1, 3});
  struct Case {
    bool c1, c2;
    std::vector<float> z;
  };
  // a = [2,6]: a*x = [2,18]; a-x = [1,3]; -x = [-1,-3]
  const Case cases[] = {{true, true, {2, 18}}, {true, false, {1, 3}}, {false, true, {-1, -3}}, {true, true, {2, 18}}};
  for (const Case& c : cases) {
    auto out = s->run({{"x", x}, {"c1", flag(c.c1)}, {"c2", flag(c.c2)}});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(floats(out->at(0)), c.z) << "c1=" << c.c1 << " c2=" << c.c2;
  }
  EXPECT_TRUE(has(assigned_names(*s), "outer_if/then_branch/inner_if/else_branch/inner_sub"));
}

// y = If(cond) then Concat(x, x) ([2N]) else Neg(x) ([N]); and
// w = If(cond) then Relu(x) else Neg(x), [N] both ways.
std::string branch_shape_model() {
  ModelBuilder then_branch(17);
  then_branch.node("Concat", {"x", "x"}, {"t"}, {AttrSpec("axis", 0)}, "then_concat");
  then_branch.output_without_shape("t", DataType::kFloat);
  ModelBuilder else_branch(17);
  else_branch.node("Neg", {"x"}, {"e"}, {}, "else_neg");
  else_branch.output_without_shape("e", DataType::kFloat);
  ModelBuilder same_then(17);
  same_then.node("Relu", {"x"}, {"st"}, {}, "same_relu");
  same_then.output_without_shape("st", DataType::kFloat);
  ModelBuilder same_else(17);
  same_else.node("Neg", {"x"}, {"se"}, {}, "same_neg");
  same_else.output_without_shape("se", DataType::kFloat);
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"N"});
  b.input("cond", DataType::kBool, {});
  b.node("If", {"cond"}, {"y"}, {AttrSpec("then_branch", then_branch), AttrSpec("else_branch", else_branch)}, "if");
  b.node("If", {"cond"}, {"w"}, {AttrSpec("then_branch", same_then), AttrSpec("else_branch", same_else)}, "if_same");
  b.output_without_shape("y", DataType::kFloat);
  b.output_without_shape("w", DataType::kFloat);
  return b.build();
}

TEST(IfTest, TheOutputShapeIsTheBranchTaken) {
  auto s = create(branch_shape_model());
  ASSERT_NE(s, nullptr);
  // Inferred from the branches: y is rank 1 of unknown length ([2N] vs
  // [N]); w keeps the symbol both branches agree on.
  ASSERT_EQ(s->outputs().size(), 2u);
  ASSERT_TRUE(s->outputs()[0].has_shape);
  ASSERT_EQ(s->outputs()[0].shape.size(), 1u);
  EXPECT_EQ(s->outputs()[0].shape[0].value, -1);
  EXPECT_EQ(s->outputs()[0].shape[0].symbol, "");
  ASSERT_TRUE(s->outputs()[1].has_shape);
  ASSERT_EQ(s->outputs()[1].shape.size(), 1u);
  EXPECT_EQ(s->outputs()[1].shape[0].symbol, "N");

  const Tensor x = make_tensor<float>({3}, {1, -2, 3});
  auto yes = s->run({{"x", x}, {"cond", flag(true)}});
  ASSERT_TRUE(yes.ok()) << yes.status().to_string();
  EXPECT_EQ(yes->at(0).shape(), Shape({6}));
  EXPECT_EQ(floats(yes->at(0)), (std::vector<float>{1, -2, 3, 1, -2, 3}));
  EXPECT_EQ(floats(yes->at(1)), (std::vector<float>{1, 0, 3}));
  auto no = s->run({{"x", x}, {"cond", flag(false)}});
  ASSERT_TRUE(no.ok()) << no.status().to_string();
  EXPECT_EQ(no->at(0).shape(), Shape({3}));
  EXPECT_EQ(floats(no->at(0)), (std::vector<float>{-1, 2, -3}));
  EXPECT_EQ(floats(no->at(1)), (std::vector<float>{-1, 2, -3}));
}

TEST(IfTest, ABranchMayReturnAnOuterValueAsItIs) {
  // then: y is x itself, with no node in the branch; else: -x.
  ModelBuilder then_branch(17);
  then_branch.output("x", DataType::kFloat, {3});
  auto s = create(if_over_x(then_branch, neg_branch("e", 3), "if"));
  ASSERT_NE(s, nullptr);
  const Tensor x = make_tensor<float>({3}, {1, 2, 3});
  auto yes = s->run({{"x", x}, {"cond", flag(true)}});
  ASSERT_TRUE(yes.ok()) << yes.status().to_string();
  EXPECT_EQ(floats(yes->at(0)), (std::vector<float>{1, 2, 3}));
  EXPECT_NE(yes->at(0).raw_data(), x.raw_data()) << "a result must not alias the caller's feed";
  auto no = s->run({{"x", x}, {"cond", flag(false)}});
  ASSERT_TRUE(no.ok()) << no.status().to_string();
  EXPECT_EQ(floats(no->at(0)), (std::vector<float>{-1, -2, -3}));
}

TEST(IfTest, BranchesThatDisagreeInOutputCountAreRefusedAtCreation) {
  ModelBuilder then_branch(17);
  then_branch.node("Relu", {"x"}, {"t1"}, {}, "then_relu");
  then_branch.node("Neg", {"x"}, {"t2"}, {}, "then_neg");
  then_branch.output("t1", DataType::kFloat, {3});
  then_branch.output("t2", DataType::kFloat, {3});
  const std::string bytes = if_over_x(then_branch, neg_branch("e", 3), "bad_if");
  auto s = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_FALSE(s.ok());
  const std::string message = s.status().message();
  EXPECT_NE(message.find("'bad_if' (If)"), std::string::npos) << message;
  EXPECT_NE(message.find("then_branch has 2"), std::string::npos) << message;
  EXPECT_NE(message.find("else_branch has 1"), std::string::npos) << message;
}

TEST(IfTest, BranchesThatDisagreeInOutputTypeAreRefusedAtCreation) {
  ModelBuilder then_branch(17);
  then_branch.node("Cast", {"x"}, {"t"}, {AttrSpec("to", int64_t{7})}, "then_cast");
  then_branch.output("t", DataType::kInt64, {3});
  const std::string bytes = if_over_x(then_branch, neg_branch("e", 3), "mixed_if");
  auto s = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_FALSE(s.ok());
  const std::string message = s.status().message();
  EXPECT_NE(message.find("'mixed_if' (If)"), std::string::npos) << message;
  EXPECT_NE(message.find("output 0: then_branch gives tensor(int64), else_branch gives tensor(float)"),
            std::string::npos)
      << message;
}

TEST(IfTest, ABranchThatFailsAtRunTimeIsNamed) {
  // then: Reshape(x, s) with s fed by the caller; [4] to [3] cannot work.
  ModelBuilder then_branch(17);
  then_branch.node("Reshape", {"x", "s"}, {"t"}, {}, "then_reshape");
  then_branch.output_without_shape("t", DataType::kFloat);
  ModelBuilder else_branch(17);
  else_branch.node("Neg", {"x"}, {"e"}, {}, "else_neg");
  else_branch.output_without_shape("e", DataType::kFloat);
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {4});
  b.input("s", DataType::kInt64, {1});
  b.input("cond", DataType::kBool, {});
  b.node("If", {"cond"}, {"y"}, {AttrSpec("then_branch", then_branch), AttrSpec("else_branch", else_branch)},
         "failing_if");
  b.output_without_shape("y", DataType::kFloat);
  auto s = create(b.build());
  ASSERT_NE(s, nullptr);
  const Tensor x = make_tensor<float>({4}, {1, 2, 3, 4});
  const Tensor shape = make_tensor<int64_t>({1}, {3});
  auto bad = s->run({{"x", x}, {"s", shape}, {"cond", flag(true)}});
  ASSERT_FALSE(bad.ok());
  const std::string message = bad.status().message();
  EXPECT_NE(message.find("'failing_if' (If) then_branch"), std::string::npos) << message;
  EXPECT_NE(message.find("then_reshape"), std::string::npos) << message;
  // The other branch still runs, and so does this one afterwards.
  auto good = s->run({{"x", x}, {"s", shape}, {"cond", flag(false)}});
  ASSERT_TRUE(good.ok()) << good.status().to_string();
  EXPECT_EQ(floats(good->at(0)), (std::vector<float>{-1, -2, -3, -4}));
  auto again = s->run({{"x", x}, {"s", make_tensor<int64_t>({1}, {4})}, {"cond", flag(true)}});
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(floats(again->at(0)), (std::vector<float>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace sy
