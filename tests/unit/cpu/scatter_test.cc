// Scatter, ScatterElements, ScatterND and TensorScatter against the spec's
// examples, hand-computed reductions and reference loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::expect_tensor_near;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

// ---- ScatterElements ----------------------------------------------------------

TEST(ScatterElementsKernel, SpecExampleAxis0) {
  auto out = NodeTest("ScatterElements", 18)
                 .input(make_tensor<float>({3, 3}, std::vector<float>(9, 0.0f)))
                 .input(make_tensor<int64_t>({2, 3}, {1, 0, 2, 0, 2, 1}))
                 .input(make_tensor<float>({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({3, 3}, {2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f}));
}

TEST(ScatterElementsKernel, DeprecatedScatterIsTheSameOp) {
  auto out = NodeTest("Scatter", 10)
                 .input(make_tensor<float>({1, 5}, {1, 2, 3, 4, 5}))
                 .input(make_tensor<int32_t>({1, 2}, {1, 3}))
                 .input(make_tensor<float>({1, 2}, {1.1f, 2.1f}))
                 .attr("axis", 1)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({1, 5}, {1, 1.1f, 3, 2.1f, 5}));
}

TEST(ScatterElementsKernel, NegativeIndicesAndEveryReduction) {
  auto run = [](const std::string& reduction, int opset) {
    NodeTest t("ScatterElements", opset);
    t.input(make_tensor<int32_t>({1, 5}, {1, 2, 3, 4, 5}))
        .input(make_tensor<int64_t>({1, 3}, {1, -4, -2}))
        .input(make_tensor<int32_t>({1, 3}, {10, 3, -7}))
        .attr("axis", -1);
    if (!reduction.empty()) t.attr("reduction", reduction);
    return t.run();
  };
  // Positions 1, 1, 3 (index -4 is 1): updates 10 then 3 at 1, -7 at 3.
  auto none = run("", 13);
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  expect_tensor_eq(none->at(0), make_tensor<int32_t>({1, 5}, {1, 3, 3, -7, 5}));
  auto add = run("add", 16);
  ASSERT_TRUE(add.ok()) << add.status().to_string();
  expect_tensor_eq(add->at(0), make_tensor<int32_t>({1, 5}, {1, 15, 3, -3, 5}));
  auto mul = run("mul", 16);
  ASSERT_TRUE(mul.ok()) << mul.status().to_string();
  expect_tensor_eq(mul->at(0), make_tensor<int32_t>({1, 5}, {1, 60, 3, -28, 5}));
  auto mx = run("max", 18);
  ASSERT_TRUE(mx.ok()) << mx.status().to_string();
  expect_tensor_eq(mx->at(0), make_tensor<int32_t>({1, 5}, {1, 10, 3, 4, 5}));
  auto mn = run("min", 18);
  ASSERT_TRUE(mn.ok()) << mn.status().to_string();
  expect_tensor_eq(mn->at(0), make_tensor<int32_t>({1, 5}, {1, 2, 3, -7, 5}));
  // max and min arrived in opset 18.
  EXPECT_FALSE(run("max", 16).ok());
}

TEST(ScatterElementsKernel, Float16AddReduction) {
  // 1.5 + 0.25 + 0.25 in float16.
  auto out = NodeTest("ScatterElements", 18)
                 .input(make_tensor<Float16>({2}, {Float16{float_to_float16(1.5f)}, Float16{float_to_float16(0)}}))
                 .input(make_tensor<int64_t>({2}, {0, 0}))
                 .input(make_tensor<Float16>({2}, {Float16{float_to_float16(0.25f)}, Float16{float_to_float16(0.25f)}}))
                 .attr("reduction", "add")
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(float16_to_float(out->at(0).data<Float16>()[0].bits), 2.0f);
  EXPECT_EQ(float16_to_float(out->at(0).data<Float16>()[1].bits), 0.0f);
}

TEST(ScatterElementsKernel, IndicesSmallerThanDataMatchReference) {
  // data [4,5,6], indices/updates [3,4,2] along axis 1, with threads.
  const int64_t d0 = 4, d1 = 5, d2 = 6, i0 = 3, i1 = 4, i2 = 2;
  std::vector<int64_t> data(static_cast<size_t>(d0 * d1 * d2));
  std::iota(data.begin(), data.end(), 0);
  std::vector<int64_t> idx(static_cast<size_t>(i0 * i1 * i2));
  std::vector<int64_t> upd(idx.size());
  for (size_t i = 0; i < idx.size(); ++i) {
    idx[i] = static_cast<int64_t>(i * 3 % 5) - (i % 2 ? 5 : 0);
    upd[i] = 1000 + static_cast<int64_t>(i);
  }
  std::vector<int64_t> expected = data;
  for (int64_t a = 0; a < i0; ++a)
    for (int64_t b = 0; b < i1; ++b)
      for (int64_t c = 0; c < i2; ++c) {
        const size_t p = static_cast<size_t>((a * i1 + b) * i2 + c);
        int64_t j = idx[p];
        if (j < 0) j += d1;
        expected[static_cast<size_t>((a * d1 + j) * d2 + c)] += upd[p];
      }
  auto out = NodeTest("ScatterElements", 18)
                 .input(make_tensor<int64_t>({d0, d1, d2}, data))
                 .input(make_tensor<int64_t>({i0, i1, i2}, idx))
                 .input(make_tensor<int64_t>({i0, i1, i2}, upd))
                 .attr("axis", 1)
                 .attr("reduction", "add")
                 .threads(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<int64_t>(out->at(0)), expected);
}

TEST(ScatterElementsKernel, StringsAndErrors) {
  auto s = NodeTest("ScatterElements", 13)
               .input(make_tensor<std::string>({3}, {"a", "b", "c"}))
               .input(make_tensor<int64_t>({1}, {2}))
               .input(make_tensor<std::string>({1}, {"a string long enough to live on the heap"}))
               .run();
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  expect_tensor_eq(s->at(0), make_tensor<std::string>({3}, {"a", "b", "a string long enough to live on the heap"}));
  auto out_of_range = NodeTest("ScatterElements", 13)
                          .input(make_tensor<float>({3}, {1, 2, 3}))
                          .input(make_tensor<int64_t>({2}, {0, 3}))
                          .input(make_tensor<float>({2}, {5, 6}))
                          .run();
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.status().message().find("index 3"), std::string::npos) << out_of_range.status().message();
  auto bad_reduction = NodeTest("ScatterElements", 18)
                           .input(make_tensor<float>({3}, {1, 2, 3}))
                           .input(make_tensor<int64_t>({1}, {0}))
                           .input(make_tensor<float>({1}, {5}))
                           .attr("reduction", "mean")
                           .run();
  EXPECT_FALSE(bad_reduction.ok());
}

// ---- ScatterND ----------------------------------------------------------------

TEST(ScatterNDKernel, SpecExamples) {
  // Example 1: element updates into a 1-D tensor.
  auto one = NodeTest("ScatterND", 11)
                 .input(make_tensor<float>({8}, {1, 2, 3, 4, 5, 6, 7, 8}))
                 .input(make_tensor<int64_t>({4, 1}, {4, 3, 1, 7}))
                 .input(make_tensor<float>({4}, {9, 10, 11, 12}))
                 .run();
  ASSERT_TRUE(one.ok()) << one.status().to_string();
  expect_tensor_eq(one->at(0), make_tensor<float>({8}, {1, 11, 3, 10, 9, 6, 7, 12}));
  // Slice updates: rows 0 and 2 of a [3,2] tensor, the second given as -1.
  auto rows = NodeTest("ScatterND", 13)
                  .input(make_tensor<int32_t>({3, 2}, {1, 2, 3, 4, 5, 6}))
                  .input(make_tensor<int64_t>({2, 1}, {0, -1}))
                  .input(make_tensor<int32_t>({2, 2}, {7, 8, 9, 10}))
                  .run();
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  expect_tensor_eq(rows->at(0), make_tensor<int32_t>({3, 2}, {7, 8, 3, 4, 9, 10}));
}

TEST(ScatterNDKernel, ReductionsWithDuplicates) {
  auto run = [](const std::string& reduction) {
    return NodeTest("ScatterND", 18)
        .input(make_tensor<float>({2, 2}, {1, 2, 3, 4}))
        .input(make_tensor<int64_t>({3, 2}, {0, 0, 1, 1, 0, 0}))
        .input(make_tensor<float>({3}, {5, 1, -2}))
        .attr("reduction", reduction)
        .run();
  };
  auto add = run("add");
  ASSERT_TRUE(add.ok()) << add.status().to_string();
  expect_tensor_eq(add->at(0), make_tensor<float>({2, 2}, {4, 2, 3, 5}));
  auto mul = run("mul");
  ASSERT_TRUE(mul.ok()) << mul.status().to_string();
  expect_tensor_eq(mul->at(0), make_tensor<float>({2, 2}, {-10, 2, 3, 4}));
  auto mx = run("max");
  ASSERT_TRUE(mx.ok()) << mx.status().to_string();
  expect_tensor_eq(mx->at(0), make_tensor<float>({2, 2}, {5, 2, 3, 4}));
  auto mn = run("min");
  ASSERT_TRUE(mn.ok()) << mn.status().to_string();
  expect_tensor_eq(mn->at(0), make_tensor<float>({2, 2}, {-2, 2, 3, 1}));
}

TEST(ScatterNDKernel, BigSlicesWithThreadsMatchReference) {
  const int64_t rows = 16, cols = 4096;
  std::vector<float> data(static_cast<size_t>(rows * cols));
  std::iota(data.begin(), data.end(), 0.0f);
  const std::vector<int64_t> idx = {3, 15, 3, 0};
  std::vector<float> upd(static_cast<size_t>(4 * cols));
  for (size_t i = 0; i < upd.size(); ++i) upd[i] = static_cast<float>(i % 7);
  std::vector<float> expected = data;
  for (size_t t = 0; t < idx.size(); ++t)
    for (int64_t c = 0; c < cols; ++c)
      expected[static_cast<size_t>(idx[t] * cols + c)] += upd[t * static_cast<size_t>(cols) + static_cast<size_t>(c)];
  auto out = NodeTest("ScatterND", 18)
                 .input(make_tensor<float>({rows, cols}, data))
                 .input(make_tensor<int64_t>({4, 1}, idx))
                 .input(make_tensor<float>({4, cols}, upd))
                 .attr("reduction", "add")
                 .threads(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<float>(out->at(0)), expected);
}

TEST(ScatterNDKernel, ShapeErrors) {
  auto bad_updates = NodeTest("ScatterND", 13)
                         .input(make_tensor<float>({3, 2}, {1, 2, 3, 4, 5, 6}))
                         .input(make_tensor<int64_t>({2, 1}, {0, 1}))
                         .input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                         .dynamic_shapes()
                         .run();
  ASSERT_FALSE(bad_updates.ok());
  EXPECT_NE(bad_updates.status().message().find("[2,2]"), std::string::npos) << bad_updates.status().message();
  auto bad_index = NodeTest("ScatterND", 13)
                       .input(make_tensor<float>({3, 2}, {1, 2, 3, 4, 5, 6}))
                       .input(make_tensor<int64_t>({1, 2}, {0, 2}))
                       .input(make_tensor<float>({1}, {1}))
                       .run();
  ASSERT_FALSE(bad_index.ok());
  EXPECT_NE(bad_index.status().message().find("index 2"), std::string::npos) << bad_index.status().message();
}

// ---- TensorScatter --------------------------------------------------------------

// present = past with update rows written at write_indices[b] (+ step).
std::vector<float> reference_tensor_scatter(const std::vector<float>& past, const std::vector<float>& update,
                                            const std::vector<int64_t>& wi, int64_t batch, int64_t heads,
                                            int64_t max_seq, int64_t seq, int64_t hidden, bool circular) {
  std::vector<float> out = past;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t s = 0; s < seq; ++s) {
        int64_t p = wi[static_cast<size_t>(b)] + s;
        if (circular) p %= max_seq;
        for (int64_t d = 0; d < hidden; ++d)
          out[static_cast<size_t>(((b * heads + h) * max_seq + p) * hidden + d)] =
              update[static_cast<size_t>(((b * heads + h) * seq + s) * hidden + d)];
      }
  return out;
}

TEST(TensorScatterKernel, LinearAndCircularMatchReference) {
  const int64_t batch = 2, heads = 3, max_seq = 5, seq = 2, hidden = 4;
  std::vector<float> past(static_cast<size_t>(batch * heads * max_seq * hidden));
  std::iota(past.begin(), past.end(), 0.0f);
  std::vector<float> update(static_cast<size_t>(batch * heads * seq * hidden));
  std::iota(update.begin(), update.end(), 1000.0f);
  for (const bool circular : {false, true}) {
    const std::vector<int64_t> wi = circular ? std::vector<int64_t>{4, 1} : std::vector<int64_t>{3, 0};
    NodeTest t("TensorScatter", 24);
    t.input(make_tensor<float>({batch, heads, max_seq, hidden}, past))
        .input(make_tensor<float>({batch, heads, seq, hidden}, update))
        .input(make_tensor<int64_t>({batch}, wi));
    if (circular) t.attr("mode", "circular");
    auto out = t.run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(to_vector<float>(out->at(0)),
              reference_tensor_scatter(past, update, wi, batch, heads, max_seq, seq, hidden, circular))
        << (circular ? "circular" : "linear");
  }
}

TEST(TensorScatterKernel, NoWriteIndicesAndAxisOne) {
  // [batch=2, seq=3], axis 1, no write indices: rows start at 0.
  auto out = NodeTest("TensorScatter", 24)
                 .input(make_tensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}))
                 .input(make_tensor<int32_t>({2, 2}, {7, 8, 9, 10}))
                 .attr("axis", 1)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int32_t>({2, 3}, {7, 8, 3, 9, 10, 6}));
  auto overflow = NodeTest("TensorScatter", 24)
                      .input(make_tensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}))
                      .input(make_tensor<int32_t>({2, 2}, {7, 8, 9, 10}))
                      .input(make_tensor<int64_t>({2}, {0, 2}))
                      .attr("axis", 1)
                      .run();
  ASSERT_FALSE(overflow.ok());
  EXPECT_NE(overflow.status().message().find("linear"), std::string::npos) << overflow.status().message();
  auto batch_axis = NodeTest("TensorScatter", 24)
                        .input(make_tensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}))
                        .input(make_tensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}))
                        .attr("axis", 0)
                        .run();
  EXPECT_FALSE(batch_axis.ok());
}

TEST(TensorScatterKernel, PackedInt4RowsOfWholeBytes) {
  // [batch 2, seq 3, hidden 2] int4: each row is one byte.
  Tensor past = Tensor::allocate(DataType::kInt4, Shape{2, 3, 2}).value();
  Tensor update = Tensor::allocate(DataType::kInt4, Shape{2, 1, 2}).value();
  const uint8_t past_bytes[] = {0x10, 0x21, 0x32, 0x43, 0x54, 0x65};
  const uint8_t update_bytes[] = {0xAB, 0xCD};
  std::copy(std::begin(past_bytes), std::end(past_bytes), static_cast<uint8_t*>(past.raw_data()));
  std::copy(std::begin(update_bytes), std::end(update_bytes), static_cast<uint8_t*>(update.raw_data()));
  auto out = NodeTest("TensorScatter", 24).input(past).input(update).input(make_tensor<int64_t>({2}, {2, 0})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const auto* got = static_cast<const uint8_t*>(out->at(0).raw_data());
  EXPECT_EQ(std::vector<uint8_t>(got, got + 6), (std::vector<uint8_t>{0x10, 0x21, 0xAB, 0xCD, 0x54, 0x65}));
}

}  // namespace
}  // namespace sy
