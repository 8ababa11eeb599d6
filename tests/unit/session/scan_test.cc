// The Scan operator through a session: scanning along another axis than
// the first and in reverse, stacking along another axis, and opset 8's
// batched form with sequence lengths. Expected values are worked out by
// hand in the comments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"
#include "testing/session_helpers.h"

namespace sy {
namespace {

using testing::AttrSpec;
using testing::make_tensor;
using testing::ModelBuilder;

constexpr auto create = testing::create_session;

std::vector<float> floats(const Tensor& t) { return testing::tensor_values<float>(t); }

// A running sum: s_out = s_in + slice, and the scan output is s_out.
ModelBuilder running_sum_body(std::vector<testing::DimSpec> slice) {
  ModelBuilder body(17);
  body.input("s_in", DataType::kFloat, slice);
  body.input("slice", DataType::kFloat, slice);
  body.node("Add", {"s_in", "slice"}, {"s_out"}, {}, "accumulate");
  body.node("Identity", {"s_out"}, {"partial"});
  body.output("s_out", DataType::kFloat, slice);
  body.output("partial", DataType::kFloat, slice);
  return body;
}

// x = [[1,2,3],[4,5,6]] scanned along axis 1 in reverse: the slices are
// [3,6], [2,5], [1,4]; the sums [3,6], [5,11], [6,15], stacked along axis 1
// of the output: [[3,5,6],[6,11,15]]; the final state [6,15].
TEST(ScanTest, ScansAnotherAxisInReverseAndStacksAlongAnotherAxis) {
  ModelBuilder b(17);
  b.input("s0", DataType::kFloat, {2});
  b.input("x", DataType::kFloat, {2, 3});
  b.node("Scan", {"s0", "x"}, {"s", "partials"},
         {AttrSpec("body", running_sum_body({2})), AttrSpec("num_scan_inputs", int64_t{1}),
          AttrSpec("scan_input_axes", std::vector<int64_t>{1}), AttrSpec("scan_input_directions", std::vector<int64_t>{1}),
          AttrSpec("scan_output_axes", std::vector<int64_t>{-1})},
         "scan");
  b.output_without_shape("s", DataType::kFloat);
  b.output_without_shape("partials", DataType::kFloat);
  auto s = create(b.build());
  ASSERT_NE(s, nullptr);
  // Inferred from the body and the scan input: [2] and [2, 3].
  ASSERT_TRUE(s->outputs()[1].has_shape);
  ASSERT_EQ(s->outputs()[1].shape.size(), 2u);
  EXPECT_EQ(s->outputs()[1].shape[1].value, 3);
  for (int round = 0; round < 2; ++round) {
    auto r = s->run({{"s0", make_tensor<float>({2}, {0, 0})}, {"x", make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(floats(r->at(0)), (std::vector<float>{6, 15}));
    EXPECT_EQ(r->at(1).shape(), Shape({2, 3}));
    EXPECT_EQ(floats(r->at(1)), (std::vector<float>{3, 5, 6, 6, 11, 15}));
  }
}

// Opset 8: x is [batch 2, sequence 3, 1] and sequence_lens [3, 2]. Entry 0
// sums 1, 2, 3 (partials 1, 3, 6); entry 1 sums 4, 5 and stops (partials
// 4, 9, then a zero where its sequence has ended).
TEST(ScanTest, Opset8RunsEachBatchEntryForItsOwnLength) {
  ModelBuilder b(8);
  b.input("lens", DataType::kInt64, {2});
  b.input("s0", DataType::kFloat, {2, 1});
  b.input("x", DataType::kFloat, {2, 3, 1});
  b.node("Scan", {"lens", "s0", "x"}, {"s", "partials"},
         {AttrSpec("body", running_sum_body({1})), AttrSpec("num_scan_inputs", int64_t{1})}, "scan8");
  b.output_without_shape("s", DataType::kFloat);
  b.output_without_shape("partials", DataType::kFloat);
  auto s = create(b.build());
  ASSERT_NE(s, nullptr);
  auto r = s->run({{"lens", make_tensor<int64_t>({2}, {3, 2})},
                   {"s0", make_tensor<float>({2, 1}, {0, 0})},
                   {"x", make_tensor<float>({2, 3, 1}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->at(0).shape(), Shape({2, 1}));
  EXPECT_EQ(floats(r->at(0)), (std::vector<float>{6, 9}));
  EXPECT_EQ(r->at(1).shape(), Shape({2, 3, 1}));
  EXPECT_EQ(floats(r->at(1)), (std::vector<float>{1, 3, 6, 4, 9, 0}));

  auto bad = s->run({{"lens", make_tensor<int64_t>({2}, {3, 4})},
                     {"s0", make_tensor<float>({2, 1}, {0, 0})},
                     {"x", make_tensor<float>({2, 3, 1}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("sequence_lens[1] = 4 is out of range"), std::string::npos)
      << bad.status().message();
}

TEST(ScanTest, ScanInputsOfDifferentLengthsAreNamed) {
  ModelBuilder body(17);
  body.input("a", DataType::kFloat, {});
  body.input("b", DataType::kFloat, {});
  body.node("Add", {"a", "b"}, {"c"});
  body.output("c", DataType::kFloat, {});
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"n"});
  b.input("y", DataType::kFloat, {"m"});
  b.node("Scan", {"x", "y"}, {"z"}, {AttrSpec("body", body), AttrSpec("num_scan_inputs", int64_t{2})}, "pairs");
  b.output_without_shape("z", DataType::kFloat);
  auto s = create(b.build());
  ASSERT_NE(s, nullptr);
  auto ok = s->run({{"x", make_tensor<float>({2}, {1, 2})}, {"y", make_tensor<float>({2}, {10, 20})}});
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(floats(ok->at(0)), (std::vector<float>{11, 22}));
  auto bad = s->run({{"x", make_tensor<float>({2}, {1, 2})}, {"y", make_tensor<float>({3}, {1, 2, 3})}});
  ASSERT_FALSE(bad.ok());
  const std::string message = bad.status().message();
  EXPECT_NE(message.find("'pairs' (Scan)"), std::string::npos) << message;
  EXPECT_NE(message.find("has 3 entries along its scan axis; the first has 2"), std::string::npos) << message;
}

}  // namespace
}  // namespace sy
