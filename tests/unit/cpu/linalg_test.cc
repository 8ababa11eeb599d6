// Det against a cofactor expansion, MatMulInteger against a plain int32
// loop over (a - a_zero_point) * (b - b_zero_point).
#include <gtest/gtest.h>

#include <cmath>
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

uint32_t next(uint32_t& seed) {
  seed = seed * 1664525u + 1013904223u;
  return seed >> 8;
}

// ---- Det ------------------------------------------------------------------------

double cofactor_det(const std::vector<double>& m, int64_t n) {
  if (n == 0) return 1.0;
  if (n == 1) return m[0];
  double det = 0;
  for (int64_t c = 0; c < n; ++c) {
    std::vector<double> minor;
    for (int64_t i = 1; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (j != c) minor.push_back(m[static_cast<size_t>(i * n + j)]);
    det += (c % 2 == 0 ? 1.0 : -1.0) * m[static_cast<size_t>(c)] * cofactor_det(minor, n - 1);
  }
  return det;
}

TEST(DetKernel, HandComputed) {
  auto out = NodeTest("Det", 22).input(make_tensor<float>({2, 2}, {0, 1, 2, 3})).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({}, {-2}));

  // A zero first pivot needs a row swap. By the first row:
  // [[0,2,1],[3,1,0],[1,1,1]] = 0*(1-0) - 2*(3-0) + 1*(3-1) = -4.
  auto swap = NodeTest("Det", 11).input(make_tensor<double>({3, 3}, {0, 2, 1, 3, 1, 0, 1, 1, 1})).run();
  ASSERT_TRUE(swap.ok()) << swap.status().to_string();
  expect_tensor_near(swap->at(0), make_tensor<double>({}, {-4}));

  // Singular: 0.
  auto singular = NodeTest("Det", 11).input(make_tensor<float>({2, 2}, {1, 2, 2, 4})).run();
  ASSERT_TRUE(singular.ok()) << singular.status().to_string();
  expect_tensor_eq(singular->at(0), make_tensor<float>({}, {0}));
}

TEST(DetKernel, BatchedAgainstCofactorExpansion) {
  uint32_t seed = 11;
  for (int64_t n = 1; n <= 6; ++n) {
    const Shape shape{2, 3, n, n};
    std::vector<double> values(static_cast<size_t>(shape.num_elements()));
    for (double& v : values) v = static_cast<double>(next(seed) % 1000) / 250.0 - 2.0;
    std::vector<double> expected;
    for (int64_t b = 0; b < 6; ++b)
      expected.push_back(cofactor_det(
          std::vector<double>(values.begin() + b * n * n, values.begin() + (b + 1) * n * n), n));
    auto d = NodeTest("Det", 22).input(make_tensor<double>(shape, values)).threads(2).run();
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    expect_tensor_near(d->at(0), make_tensor<double>({2, 3}, expected), 1e-10, 1e-10);

    auto f = NodeTest("Det", 11)
                 .input(make_tensor<float>(shape, std::vector<float>(values.begin(), values.end())))
                 .run();
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    expect_tensor_near(f->at(0), make_tensor<float>({2, 3}, std::vector<float>(expected.begin(), expected.end())), 1e-4,
                       1e-4);
  }
}

TEST(DetKernel, HalfTypesAndEmptyBatch) {
  std::vector<Float16> m;
  for (float v : {2.0f, 1.0f, 1.0f, 3.0f}) m.push_back(Float16{float_to_float16(v)});
  auto h = NodeTest("Det", 11).input(make_tensor<Float16>({1, 2, 2}, m)).run();
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_EQ(float16_to_float(h->at(0).data<Float16>()[0].bits), 5.0f);

  std::vector<BFloat16> bm;
  for (float v : {2.0f, 1.0f, 1.0f, 3.0f}) bm.push_back(BFloat16{float_to_bfloat16(v)});
  auto b = NodeTest("Det", 22).input(make_tensor<BFloat16>({2, 2}, bm)).run();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(bfloat16_to_float(b->at(0).data<BFloat16>()[0].bits), 5.0f);

  auto empty = NodeTest("Det", 11).input(make_tensor<float>({0, 3, 3}, {})).run();
  ASSERT_TRUE(empty.ok()) << empty.status().to_string();
  EXPECT_EQ(empty->at(0).shape(), (Shape{0}));
}

TEST(DetKernel, Errors) {
  EXPECT_FALSE(NodeTest("Det", 11).input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})).run().ok());
  EXPECT_FALSE(NodeTest("Det", 11).input(make_tensor<float>({3}, {1, 2, 3})).run().ok());
}

// ---- MatMulInteger ----------------------------------------------------------------

TEST(MatMulIntegerKernel, OnnxExample) {
  auto out = NodeTest("MatMulInteger", 10)
                 .input(make_tensor<uint8_t>({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}))
                 .input(make_tensor<uint8_t>({3, 2}, {1, 4, 2, 5, 3, 6}))
                 .input(make_tensor<uint8_t>({1}, {12}))
                 .input(make_tensor<uint8_t>({1}, {0}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int32_t>({4, 2}, {-38, -83, -44, -98, -50, -113, -56, -128}));
}

template <typename TA, typename TB>
void check_matmul_integer(const Shape& as, const Shape& bs, const Shape& a_zp_shape, const Shape& b_zp_shape,
                          bool constant_b, int threads) {
  uint32_t seed = static_cast<uint32_t>(as.num_elements() * 31 + bs.num_elements());
  std::vector<TA> a(static_cast<size_t>(as.num_elements()));
  std::vector<TB> b(static_cast<size_t>(bs.num_elements()));
  for (TA& v : a) v = static_cast<TA>(next(seed));
  for (TB& v : b) v = static_cast<TB>(next(seed));
  std::vector<TA> za(static_cast<size_t>(a_zp_shape.num_elements()));
  std::vector<TB> zb(static_cast<size_t>(b_zp_shape.num_elements()));
  for (TA& v : za) v = static_cast<TA>(next(seed));
  for (TB& v : zb) v = static_cast<TB>(next(seed));
  // Reference: 2-D A [M, K] (batch from the leading dims, broadcast with B's).
  const int64_t K = as[as.rank() - 1];
  const int64_t M = as.rank() == 1 ? 1 : as[as.rank() - 2];
  const int64_t N = bs.rank() == 1 ? 1 : bs[bs.rank() - 1];
  const int64_t a_mats = as.num_elements() / (M * K);
  const int64_t b_mats = bs.num_elements() / (K * N);
  const int64_t batch = std::max(a_mats, b_mats);
  std::vector<int32_t> expected;
  for (int64_t bi = 0; bi < batch; ++bi) {
    const int64_t am = a_mats == 1 ? 0 : bi;
    const int64_t bm = b_mats == 1 ? 0 : bi;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        int32_t acc = 0;
        for (int64_t k = 0; k < K; ++k) {
          const int32_t zav = za.empty() ? 0
                              : za.size() == 1 ? za[0]
                              : static_cast<int64_t>(za.size()) == M ? za[static_cast<size_t>(m)]
                                                                     : za[static_cast<size_t>(am * M + m)];
          const int32_t zbv = zb.empty() ? 0
                              : zb.size() == 1 ? zb[0]
                              : static_cast<int64_t>(zb.size()) == N ? zb[static_cast<size_t>(n)]
                                                                     : zb[static_cast<size_t>(bm * N + n)];
          acc += (static_cast<int32_t>(a[static_cast<size_t>((am * M + m) * K + k)]) - zav) *
                 (static_cast<int32_t>(b[static_cast<size_t>((bm * K + k) * N + n)]) - zbv);
        }
        expected.push_back(acc);
      }
  }
  NodeTest t("MatMulInteger", 10);
  t.input(make_tensor<TA>(as, a));
  if (constant_b) {
    t.constant_input(make_tensor<TB>(bs, b));
  } else {
    t.input(make_tensor<TB>(bs, b));
  }
  if (za.empty()) {
    t.missing_input();
  } else {
    t.input(make_tensor<TA>(a_zp_shape, za));
  }
  if (!zb.empty()) {
    if (constant_b) {
      t.constant_input(make_tensor<TB>(b_zp_shape, zb));
    } else {
      t.input(make_tensor<TB>(b_zp_shape, zb));
    }
  }
  auto out = t.threads(threads).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).dtype(), DataType::kInt32);
  EXPECT_EQ(to_vector<int32_t>(out->at(0)), expected);
}

TEST(MatMulIntegerKernel, TypesZeroPointsAndBatches) {
  // Every type pair, scalar zero points.
  check_matmul_integer<uint8_t, uint8_t>({5, 7}, {7, 3}, {1}, {1}, false, 1);
  check_matmul_integer<uint8_t, int8_t>({5, 7}, {7, 3}, {}, {}, false, 1);
  check_matmul_integer<int8_t, uint8_t>({5, 7}, {7, 3}, {}, {1}, false, 1);
  check_matmul_integer<int8_t, int8_t>({5, 7}, {7, 3}, {1}, {}, true, 1);
  // Per-row A and per-column B zero points.
  check_matmul_integer<uint8_t, int8_t>({5, 7}, {7, 3}, {5}, {3}, false, 1);
  check_matmul_integer<uint8_t, uint8_t>({5, 7}, {7, 3}, {5, 1}, {1, 3}, true, 1);
  // Batches: broadcast B, per-matrix zero points, constant B prepacked.
  check_matmul_integer<uint8_t, int8_t>({3, 4, 6}, {6, 5}, {1}, {1}, true, 2);
  check_matmul_integer<int8_t, int8_t>({3, 4, 6}, {3, 6, 5}, {3, 4, 1}, {3, 1, 5}, false, 2);
  check_matmul_integer<uint8_t, uint8_t>({4, 6}, {3, 6, 5}, {}, {}, false, 2);
  // Big enough to run in several chunks.
  check_matmul_integer<uint8_t, int8_t>({2, 64, 100}, {100, 48}, {1}, {48}, false, 4);
}

TEST(MatMulIntegerKernel, VectorOperandsAndErrors) {
  auto out = NodeTest("MatMulInteger", 10)
                 .input(make_tensor<int8_t>({3}, {1, -2, 3}))
                 .input(make_tensor<int8_t>({3}, {4, 5, -6}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<int32_t>({}, {4 - 10 - 18}));

  EXPECT_FALSE(NodeTest("MatMulInteger", 10)
                   .input(make_tensor<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6}))
                   .input(make_tensor<uint8_t>({2, 2}, {1, 2, 3, 4}))
                   .run()
                   .ok());
  // A zero point that fits neither per-tensor nor per-row.
  EXPECT_FALSE(NodeTest("MatMulInteger", 10)
                   .input(make_tensor<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6}))
                   .input(make_tensor<uint8_t>({3, 2}, {1, 2, 3, 4, 5, 6}))
                   .input(make_tensor<uint8_t>({3}, {1, 2, 3}))
                   .run()
                   .ok());
  // Float inputs are not MatMulInteger's.
  EXPECT_FALSE(NodeTest("MatMulInteger", 10)
                   .input(make_tensor<float>({1, 1}, {1}))
                   .input(make_tensor<float>({1, 1}, {1}))
                   .run()
                   .ok());
}

}  // namespace
}  // namespace sy
