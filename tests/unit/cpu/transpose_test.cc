// Transpose against a naive index loop: every 4-D permutation, the blocked
// 2-D path, strings, and a big [B,S,H,D] -> [B,H,S,D] with threads.
#include <gtest/gtest.h>

#include <algorithm>
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

template <typename T>
std::vector<T> reference_transpose(const std::vector<T>& in, const Shape& s, const std::vector<int64_t>& perm) {
  const size_t r = s.rank();
  std::vector<int64_t> in_strides(r, 1);
  for (size_t i = r - 1; i-- > 0;) in_strides[i] = in_strides[i + 1] * s[i + 1];
  std::vector<int64_t> out_dims(r);
  for (size_t i = 0; i < r; ++i) out_dims[i] = s[static_cast<size_t>(perm[i])];
  std::vector<T> out;
  std::vector<int64_t> idx(r, 0);
  for (int64_t n = 0; n < s.num_elements(); ++n) {
    int64_t off = 0;
    for (size_t i = 0; i < r; ++i) off += idx[i] * in_strides[static_cast<size_t>(perm[i])];
    out.push_back(in[static_cast<size_t>(off)]);
    for (size_t i = r; i-- > 0;) {
      if (++idx[i] < out_dims[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

std::vector<float> iota_floats(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST(TransposeKernel, All4DPermutations) {
  const Shape s{2, 3, 4, 5};
  const std::vector<float> in = iota_floats(s.num_elements());
  std::vector<int64_t> perm = {0, 1, 2, 3};
  int count = 0;
  do {
    NodeTest t("Transpose", 13);
    t.input(make_tensor<float>(s, in)).attr("perm", perm);
    auto out = t.run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    Shape expected_shape{s[static_cast<size_t>(perm[0])], s[static_cast<size_t>(perm[1])],
                         s[static_cast<size_t>(perm[2])], s[static_cast<size_t>(perm[3])]};
    EXPECT_EQ(out->at(0).shape(), expected_shape);
    EXPECT_EQ(to_vector<float>(out->at(0)), reference_transpose(in, s, perm))
        << "perm " << perm[0] << perm[1] << perm[2] << perm[3];
    EXPECT_EQ(t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type.static_shape(), expected_shape);
    ++count;
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_EQ(count, 24);
}

TEST(TransposeKernel, All4DPermutationsWithUnitDimsAndEveryElementSize) {
  // Unit dims get dropped and neighbours merged; 1, 2, 8 and 16-byte elements
  // take the same paths as float.
  const Shape s{3, 1, 5, 2};
  std::vector<int64_t> perm = {0, 1, 2, 3};
  std::vector<uint8_t> u8(30);
  std::vector<int16_t> i16(30);
  std::vector<double> f64(30);
  for (int i = 0; i < 30; ++i) {
    u8[static_cast<size_t>(i)] = static_cast<uint8_t>(i * 3);
    i16[static_cast<size_t>(i)] = static_cast<int16_t>(-i * 100);
    f64[static_cast<size_t>(i)] = i * 0.5;
  }
  do {
    auto a = NodeTest("Transpose", 21).input(make_tensor<uint8_t>(s, u8)).attr("perm", perm).run();
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    EXPECT_EQ(to_vector<uint8_t>(a->at(0)), reference_transpose(u8, s, perm));
    auto b = NodeTest("Transpose", 21).input(make_tensor<int16_t>(s, i16)).attr("perm", perm).run();
    ASSERT_TRUE(b.ok()) << b.status().to_string();
    EXPECT_EQ(to_vector<int16_t>(b->at(0)), reference_transpose(i16, s, perm));
    auto c = NodeTest("Transpose", 21).input(make_tensor<double>(s, f64)).attr("perm", perm).run();
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_EQ(to_vector<double>(c->at(0)), reference_transpose(f64, s, perm));
  } while (std::next_permutation(perm.begin(), perm.end()));

  // complex128 (16 bytes): a 2-D transpose through the blocked path.
  Tensor cx = Tensor::allocate(DataType::kComplex128, Shape{2, 3}).value();
  auto* cd = static_cast<double*>(cx.raw_data());
  for (int i = 0; i < 12; ++i) cd[i] = i;
  auto out = NodeTest("Transpose", 13).input(cx).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const auto* od = static_cast<const double*>(out->at(0).raw_data());
  // Element (i, j) of the output is input (j, i): pairs of doubles.
  const int expected_pairs[] = {0, 3, 1, 4, 2, 5};
  for (int e = 0; e < 6; ++e) {
    EXPECT_EQ(od[2 * e], 2.0 * expected_pairs[e]);
    EXPECT_EQ(od[2 * e + 1], 2.0 * expected_pairs[e] + 1);
  }
}

// The default perm (reversed axes) runs on every provider configuration in
// the op harness: tests/unit/harness/op_harness_test.cc, Transpose_default_*.

TEST(TransposeKernel, Large2DBlockedOddSizes) {
  const Shape s{67, 131};
  const std::vector<float> in = iota_floats(s.num_elements());
  auto out = NodeTest("Transpose", 13).input(make_tensor<float>(s, in)).threads(2).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<float>(out->at(0)), reference_transpose(in, s, {1, 0}));
}

TEST(TransposeKernel, Strings) {
  std::vector<std::string> in = {"a", "b", "c", "a string long enough to live on the heap", "e", "f"};
  auto out = NodeTest("Transpose", 13).input(make_tensor<std::string>({2, 3}, in)).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<std::string>(
                                   {3, 2}, {"a", "a string long enough to live on the heap", "b", "e", "c", "f"}));
}

TEST(TransposeKernel, BigAttentionHeadsWithThreads) {
  // [B, S, H, D] -> [B, H, S, D] and back-style [B, H, S, D] -> [B, H, D, S].
  const Shape s{2, 128, 8, 64};
  const std::vector<float> in = iota_floats(s.num_elements());
  for (const std::vector<int64_t>& perm :
       {std::vector<int64_t>{0, 2, 1, 3}, std::vector<int64_t>{0, 1, 3, 2}, std::vector<int64_t>{2, 0, 3, 1}}) {
    auto out = NodeTest("Transpose", 13).input(make_tensor<float>(s, in)).attr("perm", perm).threads(2).run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(to_vector<float>(out->at(0)), reference_transpose(in, s, perm));
  }
}

TEST(TransposeKernel, BadPermIsAnError) {
  auto out = NodeTest("Transpose", 13)
                 .input(make_tensor<float>({2, 3}, iota_floats(6)))
                 .attr("perm", std::vector<int64_t>{0, 0})
                 .run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("perm"), std::string::npos) << out.status().message();
  auto rank = NodeTest("Transpose", 13)
                  .input(make_tensor<float>({2, 3}, iota_floats(6)))
                  .attr("perm", std::vector<int64_t>{0, 2, 1})
                  .run();
  EXPECT_FALSE(rank.ok());
}

}  // namespace
}  // namespace sy
