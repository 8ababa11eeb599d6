// MelWeightMatrix against the spec's example (all its filters one or two
// bins wide) and a case with wider triangles worked out by hand: 3 bands
// from 100 Hz to 7000 Hz at 16 kHz, dft_length 40 (21 bins). The band
// edges are mel 150.5 + 510.4 e, which are 100, 558.5, 1279.3, 2412.6
// and 4196.6 Hz, at bins floor(41 hz / 16000) = 0, 1, 3, 6, 10.
#include <gtest/gtest.h>

#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::expect_tensor_near;
using testing::make_tensor;
using testing::NodeTest;

template <typename F>
Result<std::vector<Tensor>> run_mel(int64_t bins, int64_t dft_length, int64_t sample_rate, F lower, F upper,
                                    int dtype = 1) {
  return NodeTest("MelWeightMatrix", 17)
      .input(make_tensor<int64_t>({}, {bins}))
      .input(make_tensor<int64_t>({}, {dft_length}))
      .input(make_tensor<int64_t>({}, {sample_rate}))
      .input(make_tensor<F>({}, {lower}))
      .input(make_tensor<F>({}, {upper}))
      .attr("output_datatype", dtype)
      .run();
}

TEST(MelWeightMatrixKernel, SpecExample) {
  auto out = NodeTest("MelWeightMatrix", 17)
                 .input(make_tensor<int32_t>({}, {8}))
                 .input(make_tensor<int32_t>({}, {16}))
                 .input(make_tensor<int32_t>({}, {8192}))
                 .input(make_tensor<float>({}, {0}))
                 .input(make_tensor<float>({}, {4096}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  std::vector<float> want(9 * 8, 0.0f);
  const int ones[][2] = {{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}};
  for (const auto& rc : ones) want[static_cast<size_t>(rc[0] * 8 + rc[1])] = 1.0f;
  expect_tensor_eq(out->at(0), make_tensor<float>({9, 8}, want));
}

TEST(MelWeightMatrixKernel, WideTrianglesWorkedByHand) {
  std::vector<double> want(21 * 3, 0.0);
  auto set = [&](int row, int band, double v) { want[static_cast<size_t>(row * 3 + band)] = v; };
  set(1, 0, 1.0);  // band 0: bins 0, 1, 3
  set(2, 0, 0.5);
  set(2, 1, 0.5);  // band 1: bins 1, 3, 6
  set(3, 1, 1.0);
  set(4, 1, 2.0 / 3);
  set(5, 1, 1.0 / 3);
  set(4, 2, 1.0 / 3);  // band 2: bins 3, 6, 10
  set(5, 2, 2.0 / 3);
  set(6, 2, 1.0);
  set(7, 2, 0.75);
  set(8, 2, 0.5);
  set(9, 2, 0.25);
  auto out = run_mel<double>(3, 40, 16000, 100.0, 7000.0, static_cast<int>(DataType::kDouble));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<double>({21, 3}, want), 1e-15, 1e-15);
  // The same into int64: every weight below 1 truncates to 0.
  auto ints = run_mel<double>(3, 40, 16000, 100.0, 7000.0, static_cast<int>(DataType::kInt64));
  ASSERT_TRUE(ints.ok()) << ints.status().to_string();
  std::vector<int64_t> int_want(21 * 3, 0);
  int_want[1 * 3 + 0] = int_want[3 * 3 + 1] = int_want[6 * 3 + 2] = 1;
  expect_tensor_eq(ints->at(0), make_tensor<int64_t>({21, 3}, int_want));
}

TEST(MelWeightMatrixKernel, EmptyAndErrors) {
  auto empty = run_mel<float>(0, 16, 8000, 0.0f, 4000.0f);
  ASSERT_TRUE(empty.ok()) << empty.status().to_string();
  EXPECT_EQ(empty->at(0).shape(), (Shape{9, 0}));
  EXPECT_FALSE(run_mel<float>(-1, 16, 8000, 0.0f, 4000.0f).ok());
  EXPECT_FALSE(run_mel<float>(4, 0, 8000, 0.0f, 4000.0f).ok());
  EXPECT_FALSE(run_mel<float>(4, 16, 0, 0.0f, 4000.0f).ok());
  // Edges past the Nyquist frequency, below 0 Hz, or not finite put
  // filters outside the matrix.
  EXPECT_FALSE(run_mel<float>(4, 16, 8000, 0.0f, 8000.0f).ok());
  EXPECT_FALSE(run_mel<float>(4, 16, 8000, -300.0f, 4000.0f).ok());
  EXPECT_FALSE(run_mel<float>(4, 16, 8000, -800.0f, 4000.0f).ok());
  EXPECT_FALSE(run_mel<float>(4, 16, 8000, 0.0f, 4000.0f, static_cast<int>(DataType::kBool)).ok());
}

}  // namespace
}  // namespace sy
