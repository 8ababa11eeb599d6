// The sequence and optional kernels against hand-computed values: negative
// positions, out-of-range positions (an error naming the node, the input
// and the range), SplitToSequence's split forms and keepdims,
// ConcatFromSequence with new_axis, empty sequences and optionals; and that
// sequences are shared, never changed in place.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

Tensor floats(std::vector<float> v) { return make_tensor<float>(Shape{static_cast<int64_t>(v.size())}, v); }
Tensor position(int64_t p) { return make_tensor<int64_t>(Shape{}, {p}); }

// [ [0], [1, 1], [2, 2, 2] ]: items told apart by length and value.
Tensor three_items() { return Tensor::sequence(DataType::kFloat, {floats({0}), floats({1, 1}), floats({2, 2, 2})}); }

const ValueType& output_type(const NodeTest& t) {
  return t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type;
}

void expect_error_contains(const Status& s, const std::vector<std::string>& parts) {
  ASSERT_FALSE(s.ok());
  for (const std::string& p : parts) EXPECT_NE(s.message().find(p), std::string::npos) << s.message();
}

// ---- SequenceAt -----------------------------------------------------------------

TEST(SequenceAtKernel, NegativePositionCountsFromTheBackAndSharesTheItem) {
  const Tensor seq = three_items();
  auto out = NodeTest("SequenceAt", 11).input(seq).input(position(-1)).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), floats({2, 2, 2}));
  EXPECT_EQ(out->at(0).raw_data(), seq.items()[2].raw_data());  // no copy
  auto first = NodeTest("SequenceAt", 11).input(seq).input(make_tensor<int32_t>(Shape{}, {-3})).run();
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  expect_tensor_eq(first->at(0), floats({0}));
}

TEST(SequenceAtKernel, OutOfRangePositionIsAnErrorNamingNodeInputAndRange) {
  for (int64_t p : {3, -4}) {
    auto out = NodeTest("SequenceAt", 11).input(three_items()).input(position(p)).run();
    expect_error_contains(out.status(), {"(SequenceAt)", "position " + std::to_string(p), "input 0", "of 3 tensors",
                                         "[-3, 2]"});
  }
  auto empty = NodeTest("SequenceAt", 11).input(Tensor::sequence(DataType::kFloat, {})).input(position(0)).run();
  expect_error_contains(empty.status(), {"(SequenceAt)", "position 0", "input 0", "is empty"});
}

// ---- SequenceInsert, SequenceErase ----------------------------------------------

TEST(SequenceInsertKernel, InsertsBeforeANegativePositionAndLeavesTheInputAlone) {
  const Tensor seq = Tensor::sequence(DataType::kFloat, {floats({0}), floats({1, 1})});
  auto out = NodeTest("SequenceInsert", 11).input(seq).input(floats({7})).input(position(-1)).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const std::vector<Tensor>& items = out->at(0).items();
  ASSERT_EQ(items.size(), 3u);
  expect_tensor_eq(items[0], floats({0}));
  expect_tensor_eq(items[1], floats({7}));
  expect_tensor_eq(items[2], floats({1, 1}));
  EXPECT_EQ(items[0].raw_data(), seq.items()[0].raw_data());  // the old items are shared
  EXPECT_EQ(seq.items().size(), 2u);                          // the input is unchanged
}

TEST(SequenceInsertKernel, AppendsWithoutAPositionAndAcceptsPositionN) {
  const Tensor seq = Tensor::sequence(DataType::kFloat, {floats({0})});
  for (bool with_position : {false, true}) {
    NodeTest t("SequenceInsert", 11);
    t.input(seq).input(floats({5, 5}));
    if (with_position) t.input(position(1));
    auto out = t.run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ASSERT_EQ(out->at(0).items().size(), 2u);
    expect_tensor_eq(out->at(0).items()[1], floats({5, 5}));
  }
  auto empty = NodeTest("SequenceInsert", 11).input(Tensor::sequence(DataType::kFloat, {})).input(floats({1})).run();
  ASSERT_TRUE(empty.ok()) << empty.status().to_string();
  EXPECT_EQ(empty->at(0).items().size(), 1u);
}

TEST(SequenceInsertKernel, OutOfRangePositionAndWrongTypeAreErrors) {
  const Tensor seq = Tensor::sequence(DataType::kFloat, {floats({0}), floats({1})});
  auto past = NodeTest("SequenceInsert", 11).input(seq).input(floats({7})).input(position(3)).run();
  expect_error_contains(past.status(), {"(SequenceInsert)", "position 3", "input 0", "[-2, 2]"});
  auto before = NodeTest("SequenceInsert", 11).input(seq).input(floats({7})).input(position(-3)).run();
  expect_error_contains(before.status(), {"position -3", "[-2, 2]"});
  auto wrong = NodeTest("SequenceInsert", 11).input(seq).input(make_tensor<int64_t>({1}, {7})).run();
  ASSERT_FALSE(wrong.ok());
}

TEST(SequenceEraseKernel, ErasesAtANegativePositionOrTheLast) {
  auto out = NodeTest("SequenceErase", 11).input(three_items()).input(position(-2)).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->at(0).items().size(), 2u);
  expect_tensor_eq(out->at(0).items()[0], floats({0}));
  expect_tensor_eq(out->at(0).items()[1], floats({2, 2, 2}));
  auto last = NodeTest("SequenceErase", 11).input(three_items()).run();
  ASSERT_TRUE(last.ok()) << last.status().to_string();
  ASSERT_EQ(last->at(0).items().size(), 2u);
  expect_tensor_eq(last->at(0).items()[1], floats({1, 1}));
}

TEST(SequenceEraseKernel, OutOfRangeOrEmptyIsAnError) {
  auto out = NodeTest("SequenceErase", 11).input(three_items()).input(position(3)).run();
  expect_error_contains(out.status(), {"(SequenceErase)", "position 3", "input 0", "[-3, 2]"});
  auto empty = NodeTest("SequenceErase", 11).input(Tensor::sequence(DataType::kFloat, {})).run();
  expect_error_contains(empty.status(), {"(SequenceErase)", "empty"});
}

// ---- SequenceEmpty, SequenceConstruct, SequenceLength ----------------------------

TEST(SequenceEmptyKernel, DefaultsToFloat) {
  NodeTest t("SequenceEmpty", 11);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).kind(), ValueKind::kSequence);
  EXPECT_EQ(out->at(0).dtype(), DataType::kFloat);
  EXPECT_TRUE(out->at(0).items().empty());
  EXPECT_EQ(output_type(t).type_string(), "seq(tensor(float))");

  NodeTest typed("SequenceEmpty", 11);
  typed.attr("dtype", static_cast<int64_t>(DataType::kInt64));
  auto ints = typed.run();
  ASSERT_TRUE(ints.ok()) << ints.status().to_string();
  EXPECT_EQ(ints->at(0).dtype(), DataType::kInt64);
  EXPECT_EQ(output_type(typed).type_string(), "seq(tensor(int64))");
}

TEST(SequenceLengthKernel, CountsItemsOfAnEmptyOrFullSequence) {
  auto empty = NodeTest("SequenceLength", 11).input(Tensor::sequence(DataType::kFloat, {})).run();
  ASSERT_TRUE(empty.ok()) << empty.status().to_string();
  expect_tensor_eq(empty->at(0), make_tensor<int64_t>(Shape{}, {0}));
  auto three = NodeTest("SequenceLength", 11).input(three_items()).run();
  ASSERT_TRUE(three.ok()) << three.status().to_string();
  expect_tensor_eq(three->at(0), make_tensor<int64_t>(Shape{}, {3}));
}

TEST(SequenceConstructKernel, KeepsInputOrderAndInfersTheSharedDims) {
  NodeTest t("SequenceConstruct", 11);
  t.input(make_tensor<float>({2, 1}, {1, 2})).input(make_tensor<float>({2, 2}, {3, 4, 5, 6}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->at(0).items().size(), 2u);
  expect_tensor_eq(out->at(0).items()[1], make_tensor<float>({2, 2}, {3, 4, 5, 6}));
  const ValueType& type = output_type(t);
  ASSERT_EQ(type.type_string(), "seq(tensor(float))");
  EXPECT_EQ(type.element->shape_string(), "[2,?]");  // dim 1 differs between the items
}

// ---- SplitToSequence ------------------------------------------------------------

TEST(SplitToSequenceKernel, WithoutSplitKeepdimsZeroDropsTheAxis) {
  // [[1,2,3],[4,5,6]] split along axis 1 into its columns.
  NodeTest t("SplitToSequence", 11);
  t.input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})).attr("axis", 1).attr("keepdims", 0);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const std::vector<Tensor>& items = out->at(0).items();
  ASSERT_EQ(items.size(), 3u);
  expect_tensor_eq(items[0], floats({1, 4}));
  expect_tensor_eq(items[2], floats({3, 6}));
  EXPECT_EQ(output_type(t).element->shape_string(), "[2]");

  auto kept = NodeTest("SplitToSequence", 11).input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})).attr("axis", -1).run();
  ASSERT_TRUE(kept.ok()) << kept.status().to_string();
  expect_tensor_eq(kept->at(0).items()[1], make_tensor<float>({2, 1}, {2, 5}));
}

TEST(SplitToSequenceKernel, ScalarSplitLeavesAShorterLastChunk) {
  NodeTest t("SplitToSequence", 11);
  t.input(floats({0, 1, 2, 3, 4})).constant_input(position(2)).attr("keepdims", 0);  // keepdims ignored with split
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const std::vector<Tensor>& items = out->at(0).items();
  ASSERT_EQ(items.size(), 3u);
  expect_tensor_eq(items[0], floats({0, 1}));
  expect_tensor_eq(items[1], floats({2, 3}));
  expect_tensor_eq(items[2], floats({4}));
  EXPECT_EQ(output_type(t).element->shape_string(), "[?]");  // 2 does not divide 5
}

TEST(SplitToSequenceKernel, ListSplitGivesTheListedLengths) {
  NodeTest t("SplitToSequence", 11);
  t.input(make_tensor<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6})).input(make_tensor<int64_t>({2}, {1, 2}));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->at(0).items().size(), 2u);
  expect_tensor_eq(out->at(0).items()[0], make_tensor<int32_t>({1, 2}, {1, 2}));
  expect_tensor_eq(out->at(0).items()[1], make_tensor<int32_t>({2, 2}, {3, 4, 5, 6}));

  auto bad = NodeTest("SplitToSequence", 11)
                 .input(make_tensor<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6}))
                 .input(make_tensor<int64_t>({2}, {1, 1}))
                 .run();
  expect_error_contains(bad.status(), {"(SplitToSequence)", "sums to 2", "length 3"});
  auto zero = NodeTest("SplitToSequence", 11).input(floats({1, 2})).input(position(0)).run();
  expect_error_contains(zero.status(), {"must be positive"});
}

TEST(SplitToSequenceKernel, EmptyAxisGivesAnEmptySequence) {
  auto out = NodeTest("SplitToSequence", 11).input(make_tensor<float>({0, 2}, {})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).kind(), ValueKind::kSequence);
  EXPECT_TRUE(out->at(0).items().empty());
}

// ---- ConcatFromSequence ---------------------------------------------------------

TEST(ConcatFromSequenceKernel, NewAxisOneStacksAlongTheInnerAxis) {
  const Tensor seq = Tensor::sequence(DataType::kFloat, {floats({1, 2}), floats({3, 4}), floats({5, 6})});
  for (int64_t axis : {1, -1}) {
    NodeTest t("ConcatFromSequence", 11);
    t.input(seq).attr("axis", axis).attr("new_axis", 1);
    auto out = t.run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_tensor_eq(out->at(0), make_tensor<float>({2, 3}, {1, 3, 5, 2, 4, 6}));
    EXPECT_EQ(output_type(t).type_string(), "tensor(float)");
  }
  auto front = NodeTest("ConcatFromSequence", 11).input(seq).attr("axis", 0).attr("new_axis", 1).run();
  ASSERT_TRUE(front.ok()) << front.status().to_string();
  expect_tensor_eq(front->at(0), make_tensor<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
}

TEST(ConcatFromSequenceKernel, WithoutNewAxisConcatenatesItemsOfDifferentLengths) {
  const Tensor seq = Tensor::sequence(DataType::kFloat, {make_tensor<float>({2, 1}, {1, 2}),
                                                         make_tensor<float>({2, 2}, {3, 4, 5, 6})});
  auto out = NodeTest("ConcatFromSequence", 11).input(seq).attr("axis", 1).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({2, 3}, {1, 3, 4, 2, 5, 6}));
  auto stacked = NodeTest("ConcatFromSequence", 11).input(seq).attr("axis", 0).attr("new_axis", 1).run();
  expect_error_contains(stacked.status(), {"(ConcatFromSequence)", "item 1", "must match"});
}

TEST(ConcatFromSequenceKernel, EmptySequenceOrBadAxisIsAnError) {
  auto empty =
      NodeTest("ConcatFromSequence", 11).input(Tensor::sequence(DataType::kFloat, {})).attr("axis", 0).run();
  expect_error_contains(empty.status(), {"(ConcatFromSequence)", "empty"});
  const Tensor seq = Tensor::sequence(DataType::kFloat, {floats({1}), floats({2})});
  auto axis = NodeTest("ConcatFromSequence", 11).input(seq).attr("axis", 1).run();
  expect_error_contains(axis.status(), {"axis 1", "out of range"});
}

// ---- Optional, OptionalHasElement, OptionalGetElement ---------------------------

TEST(OptionalKernels, EmptyOptionalHasNoElementAndCannotBeRead) {
  auto has = NodeTest("OptionalHasElement", 18).input(Tensor::none(DataType::kFloat)).run();
  ASSERT_TRUE(has.ok()) << has.status().to_string();
  EXPECT_EQ(has->at(0).data<bool>()[0], false);
  auto missing = NodeTest("OptionalHasElement", 18).missing_input().run();
  ASSERT_TRUE(missing.ok()) << missing.status().to_string();
  EXPECT_EQ(missing->at(0).data<bool>()[0], false);
  auto get = NodeTest("OptionalGetElement", 18).input(Tensor::none(DataType::kFloat)).run();
  expect_error_contains(get.status(), {"(OptionalGetElement)", "empty optional"});
}

TEST(OptionalKernels, TensorsAndSequencesHaveTheirElement) {
  auto has = NodeTest("OptionalHasElement", 18).input(floats({1})).run();
  ASSERT_TRUE(has.ok()) << has.status().to_string();
  EXPECT_EQ(has->at(0).data<bool>()[0], true);
  const Tensor seq = three_items();
  auto get = NodeTest("OptionalGetElement", 18).input(seq).run();
  ASSERT_TRUE(get.ok()) << get.status().to_string();
  ASSERT_EQ(get->at(0).kind(), ValueKind::kSequence);
  EXPECT_EQ(get->at(0).items()[1].raw_data(), seq.items()[1].raw_data());
  NodeTest wrap("Optional", 15);
  wrap.input(floats({4, 5}));
  auto wrapped = wrap.run();
  ASSERT_TRUE(wrapped.ok()) << wrapped.status().to_string();
  expect_tensor_eq(wrapped->at(0), floats({4, 5}));
  EXPECT_EQ(output_type(wrap).type_string(), "optional(tensor(float))");
}

TEST(OptionalKernels, WithoutAnInputTheTypeAttributeTypesTheEmptyOptional) {
  NodeTest t("Optional", 15);
  t.type_attr("type", "seq(tensor(int64))");
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).kind(), ValueKind::kNone);
  EXPECT_EQ(out->at(0).dtype(), DataType::kInt64);
  EXPECT_EQ(output_type(t).type_string(), "optional(seq(tensor(int64)))");
  auto untyped = NodeTest("Optional", 15).run();
  expect_error_contains(untyped.status(), {"(Optional)", "attribute 'type' is required"});
}

TEST(OptionalKernels, Version15TakesOnlyOptionals) {
  auto get = NodeTest("OptionalGetElement", 15).input(floats({1})).run();
  ASSERT_FALSE(get.ok());
}

TEST(ValueTypeParse, ReadsBackTypeStrings) {
  for (const char* s : {"tensor(float)", "seq(tensor(int64))", "optional(seq(tensor(bool)))", "sparse_tensor(double)"}) {
    ValueType t;
    ASSERT_TRUE(parse_type_string(s, t)) << s;
    EXPECT_EQ(t.type_string(), s);
  }
  ValueType t;
  EXPECT_FALSE(parse_type_string("tensor(floaty)", t));
  EXPECT_FALSE(parse_type_string("seq(tensor(float)", t));
  EXPECT_FALSE(parse_type_string("map(int64)", t));
}

}  // namespace
}  // namespace sy
