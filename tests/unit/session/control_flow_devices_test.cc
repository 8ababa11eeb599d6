// Control flow across devices, on the test provider's simulated device
// (unit/partition/test_provider.h): a body's nodes are placed through the
// same provider chain as the main graph's, and values cross between the
// device and the host where a node on one reads a value on the other —
// the body's outer-scope values included — with the copies in the
// assignment report. Expected values are worked out by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"
#include "testing/session_helpers.h"
#include "unit/partition/test_provider.h"

namespace sy {
namespace {

using testing::AttrSpec;
using testing::make_bool_tensor;
using testing::make_tensor;
using testing::ModelBuilder;

const NodeAssignment* find_node(const std::vector<NodeAssignment>& all, const std::string& name) {
  for (const NodeAssignment& a : all)
    if (a.node_name == name) return &a;
  return nullptr;
}

int count_op(const std::vector<NodeAssignment>& all, const std::string& prefix, const std::string& op) {
  int n = 0;
  for (const NodeAssignment& a : all) n += a.op_type == op && a.node_name.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

// a = x * x on the device; y = If(cond) then a + x (on the device, inside
// the branch) else Relu(a) (on the host: the test provider has no Relu).
TEST(ControlFlowDevicesTest, BodiesReadOuterValuesAcrossDevicesThroughCopies) {
  testing::register_test_provider();
  ModelBuilder then_branch(17);
  then_branch.node("Add", {"a", "x"}, {"t"}, {}, "then_add");
  then_branch.output("t", DataType::kFloat, {3});
  ModelBuilder else_branch(17);
  else_branch.node("Relu", {"a"}, {"e"}, {}, "else_relu");
  else_branch.output("e", DataType::kFloat, {3});
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {3});
  b.input("cond", DataType::kBool, {});
  b.node("Mul", {"x", "x"}, {"a"}, {}, "square");
  b.node("If", {"cond"}, {"y"}, {AttrSpec("then_branch", then_branch), AttrSpec("else_branch", else_branch)}, "if");
  b.output("y", DataType::kFloat, {3});
  const std::string bytes = b.build();
  SessionOptions options;
  options.providers = {{"test", {{"ops", "Mul,Add"}}}, {"cpu", {}}};
  auto created = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  const Session& s = **created;

  const std::vector<NodeAssignment> all = s.assignment();
  const NodeAssignment* square = find_node(all, "square");
  const NodeAssignment* add = find_node(all, "if/then_branch/then_add");
  const NodeAssignment* relu = find_node(all, "if/else_branch/else_relu");
  const NodeAssignment* node_if = find_node(all, "if");
  ASSERT_TRUE(square && add && relu && node_if) << s.assignment_report();
  EXPECT_EQ(square->provider, "TestExecutionProvider");
  EXPECT_EQ(add->provider, "TestExecutionProvider");
  EXPECT_EQ(relu->provider, "CPUExecutionProvider");
  EXPECT_EQ(node_if->provider, "CPUExecutionProvider");
  // a goes to the host for the If (its bodies take outer values there);
  // the then branch brings a and x to the device for its Add and its result
  // back; the else branch's Relu reads a on the host as it is.
  EXPECT_GE(count_op(all, "", "MemcpyToHost"), 1) << s.assignment_report();
  EXPECT_EQ(count_op(all, "if/then_branch/", "MemcpyFromHost"), 2) << s.assignment_report();
  EXPECT_EQ(count_op(all, "if/then_branch/", "MemcpyToHost"), 1) << s.assignment_report();
  EXPECT_EQ(count_op(all, "if/else_branch/", "MemcpyFromHost"), 0) << s.assignment_report();

  // The If stays on the host by design, not for want of a kernel: only the
  // Relu counts as falling through, among the nodes of every graph.
  ASSERT_FALSE(node_if->declined.empty());
  EXPECT_NE(node_if->declined[0].reason.find("control flow: it runs on the host by design"), std::string::npos)
      << node_if->declined[0].reason;
  options.fallback.node_fallthrough = FallbackAction::kError;
  auto strict = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find(
                "1 of 4 nodes fell through to a later provider (TestExecutionProvider -> CPUExecutionProvider: Relu x1)"),
            std::string::npos)
      << strict.status().message();

  const Tensor x = make_tensor<float>({3}, {1, -2, 3});
  auto yes = s.run({{"x", x}, {"cond", make_bool_tensor(Shape{}, {1})}});
  ASSERT_TRUE(yes.ok()) << yes.status().to_string();
  // [1,4,9] + [1,-2,3]
  EXPECT_EQ(testing::tensor_values<float>(yes->at(0)), (std::vector<float>{2, 2, 12}));
  auto no = s.run({{"x", x}, {"cond", make_bool_tensor(Shape{}, {0})}});
  ASSERT_TRUE(no.ok()) << no.status().to_string();
  EXPECT_EQ(testing::tensor_values<float>(no->at(0)), (std::vector<float>{1, 4, 9}));
}

}  // namespace
}  // namespace sy
