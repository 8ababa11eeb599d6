// Gather, GatherElements, GatherND against hand-computed values and
// reference loops.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

std::vector<float> iota_floats(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST(GatherKernel, Axis0And1WithNegativeIndices) {
  // data [3,4]: rows 0..2.
  const std::vector<float> data = iota_floats(12);
  auto rows = NodeTest("Gather", 13)
                  .input(make_tensor<float>({3, 4}, data))
                  .input(make_tensor<int64_t>({2, 2}, {2, 0, -1, 1}))
                  .run();
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  expect_tensor_eq(rows->at(0), make_tensor<float>({2, 2, 4}, {8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7}));

  NodeTest t("Gather", 11);
  t.input(make_tensor<float>({3, 4}, data)).input(make_tensor<int32_t>({3}, {-4, 3, 1})).attr("axis", -1);
  auto cols = t.run();
  ASSERT_TRUE(cols.ok()) << cols.status().to_string();
  expect_tensor_eq(cols->at(0), make_tensor<float>({3, 3}, {0, 3, 1, 4, 7, 5, 8, 11, 9}));
  EXPECT_EQ(t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type.shape_string(), "[3,3]");
}

TEST(GatherKernel, ScalarIndexDropsTheAxis) {
  auto out = NodeTest("Gather", 13)
                 .input(make_tensor<float>({2, 3}, iota_floats(6)))
                 .input(make_tensor<int64_t>({}, {1}))
                 .attr("axis", 1)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({2}, {1, 4}));
}

TEST(GatherKernel, OutOfRangeIndexIsAnError) {
  auto out = NodeTest("Gather", 13)
                 .input(make_tensor<float>({3, 4}, iota_floats(12)))
                 .input(make_tensor<int64_t>({3}, {0, 3, 1}))
                 .run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("index 3"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("[-3, 2]"), std::string::npos) << out.status().message();
  auto neg = NodeTest("Gather", 13)
                 .input(make_tensor<float>({3, 4}, iota_floats(12)))
                 .input(make_tensor<int32_t>({1}, {-4}))
                 .run();
  EXPECT_FALSE(neg.ok());
}

TEST(GatherKernel, Strings) {
  auto out = NodeTest("Gather", 13)
                 .input(make_tensor<std::string>({3}, {"zero", "one", "a string that does not fit inline"}))
                 .input(make_tensor<int64_t>({4}, {2, 0, 2, -2}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<std::string>({4}, {"a string that does not fit inline", "zero",
                                                              "a string that does not fit inline", "one"}));
}

TEST(GatherKernel, BigEmbeddingLookupWithThreads) {
  const int64_t vocab = 1000, hidden = 256, tokens = 300;
  const std::vector<float> table = iota_floats(vocab * hidden);
  std::vector<int64_t> ids(static_cast<size_t>(tokens));
  for (int64_t i = 0; i < tokens; ++i) ids[static_cast<size_t>(i)] = (i * 7919) % vocab;
  auto out = NodeTest("Gather", 13)
                 .input(make_tensor<float>({vocab, hidden}, table))
                 .input(make_tensor<int64_t>({2, tokens / 2}, ids))
                 .threads(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->at(0).shape(), (Shape{2, tokens / 2, hidden}));
  std::vector<float> expected;
  for (int64_t id : ids)
    for (int64_t h = 0; h < hidden; ++h) expected.push_back(table[static_cast<size_t>(id * hidden + h)]);
  EXPECT_EQ(to_vector<float>(out->at(0)), expected);
}

TEST(GatherElementsKernel, SpecExamplesAndNegativeIndices) {
  // test_gather_elements_0: axis 1.
  auto a = NodeTest("GatherElements", 13)
               .input(make_tensor<float>({2, 2}, {1, 2, 3, 4}))
               .input(make_tensor<int64_t>({2, 2}, {0, 0, 1, 0}))
               .attr("axis", 1)
               .run();
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  expect_tensor_eq(a->at(0), make_tensor<float>({2, 2}, {1, 1, 4, 3}));
  // test_gather_elements_1: axis 0, indices smaller than data.
  auto b = NodeTest("GatherElements", 13)
               .input(make_tensor<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}))
               .input(make_tensor<int32_t>({2, 3}, {1, 2, 0, 2, 0, 0}))
               .attr("axis", 0)
               .run();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  expect_tensor_eq(b->at(0), make_tensor<float>({2, 3}, {4, 8, 3, 7, 2, 3}));
  // test_gather_elements_negative_indices.
  auto c = NodeTest("GatherElements", 13)
               .input(make_tensor<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}))
               .input(make_tensor<int64_t>({2, 3}, {-1, -2, 0, -2, 0, 0}))
               .attr("axis", 0)
               .run();
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  expect_tensor_eq(c->at(0), make_tensor<float>({2, 3}, {7, 5, 3, 4, 2, 3}));
  auto bad = NodeTest("GatherElements", 13)
                 .input(make_tensor<float>({2, 2}, {1, 2, 3, 4}))
                 .input(make_tensor<int64_t>({1, 1}, {2}))
                 .run();
  EXPECT_FALSE(bad.ok());
}

TEST(GatherElementsKernel, Reference3DEveryAxis) {
  const Shape ds{3, 4, 5};
  const std::vector<float> data = iota_floats(ds.num_elements());
  for (int64_t axis = 0; axis < 3; ++axis) {
    const Shape is{2, 3, 4};
    std::vector<int64_t> idx(static_cast<size_t>(is.num_elements()));
    for (size_t i = 0; i < idx.size(); ++i)
      idx[i] = static_cast<int64_t>((i * 5 + 1) % static_cast<size_t>(ds[static_cast<size_t>(axis)]));
    auto out = NodeTest("GatherElements", 13)
                   .input(make_tensor<float>(ds, data))
                   .input(make_tensor<int64_t>(is, idx))
                   .attr("axis", axis)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    std::vector<float> expected;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t k = 0; k < 4; ++k) {
          int64_t c[3] = {i, j, k};
          c[axis] = idx[static_cast<size_t>((i * 3 + j) * 4 + k)];
          expected.push_back(data[static_cast<size_t>((c[0] * 4 + c[1]) * 5 + c[2])]);
        }
    EXPECT_EQ(to_vector<float>(out->at(0)), expected) << "axis " << axis;
  }
}

TEST(GatherNDKernel, SpecExamples) {
  auto a = NodeTest("GatherND", 13)
               .input(make_tensor<int32_t>({2, 2}, {0, 1, 2, 3}))
               .input(make_tensor<int64_t>({2, 2}, {0, 0, 1, 1}))
               .run();
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  expect_tensor_eq(a->at(0), make_tensor<int32_t>({2}, {0, 3}));

  auto b = NodeTest("GatherND", 13)
               .input(make_tensor<int32_t>({2, 2}, {0, 1, 2, 3}))
               .input(make_tensor<int64_t>({2, 1}, {1, 0}))
               .run();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  expect_tensor_eq(b->at(0), make_tensor<int32_t>({2, 2}, {2, 3, 0, 1}));

  // test_gathernd_example_int32_batch_dim1.
  auto c = NodeTest("GatherND", 13)
               .input(make_tensor<int32_t>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}))
               .input(make_tensor<int64_t>({2, 1}, {1, 0}))
               .attr("batch_dims", 1)
               .run();
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  expect_tensor_eq(c->at(0), make_tensor<int32_t>({2, 2}, {2, 3, 4, 5}));

  auto d = NodeTest("GatherND", 13)
               .input(make_tensor<float>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}))
               .input(make_tensor<int64_t>({2, 1, 2}, {0, 1, -1, 0}))
               .run();
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  expect_tensor_eq(d->at(0), make_tensor<float>({2, 1, 2}, {2, 3, 4, 5}));

  auto bad = NodeTest("GatherND", 13)
                 .input(make_tensor<float>({2, 2}, {0, 1, 2, 3}))
                 .input(make_tensor<int64_t>({1, 2}, {0, 2}))
                 .run();
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace sy
