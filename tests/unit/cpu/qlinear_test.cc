// The integer matrix ops (MatMulInteger, QLinearMatMul, ConvInteger,
// QLinearConv) against plain loops written from the spec: int32 sums of
// (x - x_zero_point) * (w - w_zero_point), then for the QLinear ops
// round_half_to_even(sum * (x_scale * w_scale / y_scale)) + y_zero_point,
// saturated. Seeded random data over every type pair, zero points at the
// extremes, per-channel parameters, padding with a non-zero x zero point,
// groups, strides, dilations and odd sizes that leave tails in every GEMM
// variant; the GEMM variants themselves; rounding ties; bad parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "providers/cpu/gemm/qgemm.h"
#include "providers/cpu/gemm/qgemm_epilogue.h"
#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

uint32_t next(uint32_t& seed) {
  seed = seed * 1664525u + 1013904223u;
  return seed >> 8;
}

template <typename T>
std::vector<T> random_values(int64_t n, uint32_t& seed) {
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = static_cast<T>(next(seed));
  return v;
}

// The spec's requantization, in its own words: float multiplier, float
// product, rounding half to even (nearbyint in the default mode), saturate.
template <typename T>
T requantize_reference(int32_t acc, float a_scale, float b_scale, float y_scale, int32_t y_zp) {
  const float multiplier = (a_scale * b_scale) / y_scale;
  const float r = std::nearbyint(static_cast<float>(acc) * multiplier);
  const double q = static_cast<double>(r) + y_zp;
  const double lo = std::is_signed_v<T> ? -128 : 0, hi = std::is_signed_v<T> ? 127 : 255;
  return static_cast<T>(std::clamp(q, lo, hi));
}

Tensor scalar_float(float v) { return make_tensor<float>({}, {v}); }

// ---- the GEMM variants -------------------------------------------------------------------

struct RawTiles {
  std::vector<int32_t>* out;
  int64_t ldo;
};

void store_raw(const int32_t* tile, int64_t m0, int64_t rows, int64_t n0, int64_t cols, const void* arg) {
  const auto& r = *static_cast<const RawTiles*>(arg);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      (*r.out)[static_cast<size_t>((m0 + i) * r.ldo + n0 + j)] = tile[i * cpu::kQgemmTileCols + j];
}

TEST(Qgemm, EveryVariantMatchesPlainSums) {
  const cpu::QgemmVariant variants[] = {cpu::QgemmVariant::kPortable, cpu::QgemmVariant::kAvx2,
                                        cpu::QgemmVariant::kAvx512, cpu::QgemmVariant::kAvx512Vnni};
  struct Size {
    int64_t M, K, N;
  };
  // Tails in rows (of 6), k (of 4) and columns (of 16 and 32).
  for (Size s : {Size{1, 1, 1}, Size{7, 13, 37}, Size{12, 64, 32}, Size{25, 130, 100}, Size{6, 3, 16}}) {
    uint32_t seed = static_cast<uint32_t>(s.M * 1000 + s.K * 10 + s.N);
    std::vector<uint8_t> a = random_values<uint8_t>(s.M * s.K, seed);
    std::vector<uint8_t> b = random_values<uint8_t>(s.K * s.N, seed);
    // Extremes, where vpmaddubsw would saturate.
    a[0] = 255;
    b[0] = 0x80;
    std::vector<int32_t> expected(static_cast<size_t>(s.M * s.N));
    for (int64_t m = 0; m < s.M; ++m)
      for (int64_t n = 0; n < s.N; ++n) {
        int32_t acc = 0;
        for (int64_t k = 0; k < s.K; ++k)
          acc += int32_t{a[static_cast<size_t>(m * s.K + k)]} *
                 static_cast<int8_t>(b[static_cast<size_t>(k * s.N + n)]);
        expected[static_cast<size_t>(m * s.N + n)] = acc;
      }
    const int64_t K4 = cpu::qgemm_depth(s.K);
    std::vector<uint8_t> a_rows(static_cast<size_t>(s.M * K4));
    std::vector<int32_t> row_sums(static_cast<size_t>(s.M));
    cpu::qgemm_pack_a(a.data(), s.K, s.M, s.K, 0, a_rows.data(), row_sums.data());
    std::vector<int8_t> packed(static_cast<size_t>(cpu::qgemm_packed_b_bytes(s.K, s.N)));
    std::vector<int32_t> col_sums(static_cast<size_t>(s.N));
    cpu::qgemm_pack_b(b.data(), s.N, 1, s.K, s.N, 0, packed.data(), col_sums.data());
    for (cpu::QgemmVariant v : variants) {
      if (!cpu::qgemm_variant_supported(v)) continue;
      std::vector<int32_t> out(expected.size(), -1);
      RawTiles r{&out, s.N};
      cpu::qgemm_u8s8(a_rows.data(), K4, s.M, packed.data(), s.K, 0, s.N, &store_raw, &r, v);
      EXPECT_EQ(out, expected) << "variant " << static_cast<int>(v) << " M=" << s.M << " K=" << s.K << " N=" << s.N;
    }
  }
}

TEST(Qgemm, PackQuadVariantsMatchPackedOffsets) {
  uint32_t seed = 5;
  for (int64_t N : {1, 15, 16, 17, 40, 64, 100, 130}) {
    for (uint8_t flip : {uint8_t{0}, uint8_t{0x80}}) {
      const int64_t K = 7, K4 = cpu::qgemm_depth(K);  // a null row in the second quad
      std::vector<uint8_t> b = random_values<uint8_t>(K * N, seed);
      std::vector<int8_t> expected(static_cast<size_t>(cpu::qgemm_packed_b_bytes(K, N)), 0);
      std::vector<int32_t> expected_sums(static_cast<size_t>(N), 0);
      for (int64_t k = 0; k < K; ++k)
        for (int64_t n = 0; n < N; ++n) {
          const auto v = static_cast<int8_t>(b[static_cast<size_t>(k * N + n)] ^ flip);
          expected[static_cast<size_t>(cpu::qgemm_packed_offset(K4, k, n))] = v;
          expected_sums[static_cast<size_t>(n)] += v;
        }
      std::vector<decltype(&cpu::qgemm_detail::pack_b_quad_portable)> variants = {
          &cpu::qgemm_detail::pack_b_quad_portable};
      if (best_cpu_isa() >= CpuIsa::kAvx2) variants.push_back(&cpu::qgemm_detail::pack_b_quad_avx2);
      if (best_cpu_isa() >= CpuIsa::kAvx512) variants.push_back(&cpu::qgemm_detail::pack_b_quad_avx512);
      for (auto pack : variants) {
        std::vector<int8_t> packed(expected.size(), 0x55);
        std::vector<int32_t> sums(static_cast<size_t>(N), 0);
        for (int64_t k0 = 0; k0 < K4; k0 += 4) {
          const uint8_t* rows[4];
          for (int64_t i = 0; i < 4; ++i) rows[i] = k0 + i < K ? b.data() + (k0 + i) * N : nullptr;
          pack(rows, N, flip, K4, packed.data() + k0 * cpu::kQgemmPanel, sums.data());
        }
        EXPECT_EQ(packed, expected) << "N " << N << " flip " << int{flip};
        EXPECT_EQ(sums, expected_sums) << "N " << N << " flip " << int{flip};
      }
    }
  }
}

// ---- the row epilogue's variants -----------------------------------------------------------

TEST(QgemmEpilogue, EveryVariantMatchesPlainLoop) {
  std::vector<const cpu::QgemmEpilogueSimd*> variants = {&cpu::qgemm_epilogue_detail::simd_portable()};
  if (best_cpu_isa() >= CpuIsa::kAvx2) variants.push_back(&cpu::qgemm_epilogue_detail::simd_avx2());
  if (best_cpu_isa() >= CpuIsa::kAvx512) variants.push_back(&cpu::qgemm_epilogue_detail::simd_avx512());
  constexpr int64_t kT = cpu::kQgemmTileCols;
  uint32_t seed = 77;
  for (int64_t rows : {1, 6})
    for (int64_t cols : {1, 5, 16, 23, 32}) {
      std::vector<int32_t> raw = random_values<int32_t>(rows * kT, seed);
      for (int32_t& r : raw) r %= 2000;
      std::vector<int32_t> col_term(static_cast<size_t>(cols)), row_term(static_cast<size_t>(rows));
      std::vector<float> col_mult(static_cast<size_t>(cols)), row_mult(static_cast<size_t>(rows));
      for (int64_t j = 0; j < cols; ++j) {
        col_term[static_cast<size_t>(j)] = static_cast<int32_t>(next(seed) % 301) - 150;
        col_mult[static_cast<size_t>(j)] = 0.5f + static_cast<float>(next(seed) % 100) / 64.0f;
      }
      for (int64_t i = 0; i < rows; ++i) {
        row_term[static_cast<size_t>(i)] = static_cast<int32_t>(next(seed) % 301) - 150;
        row_mult[static_cast<size_t>(i)] = static_cast<float>(1 + next(seed) % 8) / 32.0f;
      }
      col_mult[0] = 0.5f;  // a tie whenever v is odd
      raw[0] = INT32_MAX;  // wraps when the terms are added
      for (cpu::QgemmOutput kind : {cpu::QgemmOutput::kInt32, cpu::QgemmOutput::kInt8, cpu::QgemmOutput::kUint8})
        for (int mode = 0; mode < 5; ++mode) {
          // 0: row multipliers; 1: column ones; 2: both; 3: a NaN row multiplier; 4: no terms
          std::vector<float> rm = row_mult;
          if (mode == 3) rm[0] = std::nanf("");
          cpu::QgemmTileEpilogue p;
          p.col_term = mode == 4 ? nullptr : col_term.data();
          p.row_term = mode == 4 ? nullptr : row_term.data();
          p.row_mult = mode == 1 ? nullptr : rm.data();
          p.col_mult = mode == 1 || mode == 2 ? col_mult.data() : nullptr;
          p.y_scale = 0.75f;
          p.y_zp = kind == cpu::QgemmOutput::kInt8 ? -3 : 130;
          p.kind = kind;
          const double lo = kind == cpu::QgemmOutput::kInt8 ? -128 : 0, hi = kind == cpu::QgemmOutput::kInt8 ? 127 : 255;
          std::vector<int32_t> expected(static_cast<size_t>(rows * cols));
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) {
              const auto u = [](int32_t x) { return static_cast<uint32_t>(x); };
              const int32_t ct = p.col_term != nullptr ? col_term[static_cast<size_t>(j)] : 0;
              const int32_t rt = p.row_term != nullptr ? row_term[static_cast<size_t>(i)] : 0;
              const auto v = static_cast<int32_t>(u(raw[static_cast<size_t>(i * kT + j)]) - u(ct) + u(rt));
              int32_t& out = expected[static_cast<size_t>(i * cols + j)];
              if (kind == cpu::QgemmOutput::kInt32) {
                out = v;
                continue;
              }
              const float r = rm[static_cast<size_t>(i)], c = col_mult[static_cast<size_t>(j)];
              const float m = mode == 1 ? c : mode == 2 ? (r * c) / p.y_scale : r;
              const float f = static_cast<float>(v) * m;
              out = std::isnan(f) ? static_cast<int32_t>(lo)
                                  : static_cast<int32_t>(
                                        std::clamp(static_cast<double>(std::nearbyint(f)) + p.y_zp, lo, hi));
            }
          for (const cpu::QgemmEpilogueSimd* simd : variants) {
            const int64_t ldo = cols + 3;  // rows apart by more than a row
            std::vector<int32_t> got(static_cast<size_t>(rows * cols));
            if (kind == cpu::QgemmOutput::kInt32) {
              std::vector<int32_t> out(static_cast<size_t>(rows * ldo), -7);
              p.out = out.data();
              p.ldo = ldo;
              simd->tile(p, raw.data(), rows, cols);
              for (int64_t i = 0; i < rows; ++i) {
                for (int64_t j = 0; j < cols; ++j)
                  got[static_cast<size_t>(i * cols + j)] = out[static_cast<size_t>(i * ldo + j)];
                EXPECT_EQ(out[static_cast<size_t>(i * ldo + cols)], -7) << "wrote past row " << i;
              }
            } else {
              std::vector<uint8_t> bytes(static_cast<size_t>(rows * ldo), 0xAB);
              p.out = bytes.data();
              p.ldo = ldo;
              simd->tile(p, raw.data(), rows, cols);
              for (int64_t i = 0; i < rows; ++i) {
                for (int64_t j = 0; j < cols; ++j) {
                  const uint8_t b = bytes[static_cast<size_t>(i * ldo + j)];
                  got[static_cast<size_t>(i * cols + j)] =
                      kind == cpu::QgemmOutput::kInt8 ? static_cast<int8_t>(b) : static_cast<int32_t>(b);
                }
                EXPECT_EQ(bytes[static_cast<size_t>(i * ldo + cols)], 0xAB) << "wrote past row " << i;
              }
            }
            EXPECT_EQ(got, expected) << "rows " << rows << " cols " << cols << " kind " << static_cast<int>(kind)
                                     << " mode " << mode;
          }
        }
    }
}

// ---- QLinearMatMul -------------------------------------------------------------------------

TEST(QLinearMatMulKernel, OnnxExample2D) {
  auto out = NodeTest("QLinearMatMul", 21)
                 .input(make_tensor<uint8_t>({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29}))
                 .input(make_tensor<float>({1}, {0.0066f}))
                 .input(make_tensor<uint8_t>({1}, {113}))
                 .input(make_tensor<uint8_t>({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247}))
                 .input(make_tensor<float>({1}, {0.00705f}))
                 .input(make_tensor<uint8_t>({1}, {114}))
                 .input(make_tensor<float>({1}, {0.0107f}))
                 .input(make_tensor<uint8_t>({1}, {118}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<uint8_t>({2, 3}, {168, 115, 255, 1, 66, 151}));
}

// Products of x.5 round to the even neighbour: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2,
// -0.5 -> 0, -1.5 -> -2, -2.5 -> -2.
TEST(QLinearMatMulKernel, TiesRoundToEven) {
  auto out = NodeTest("QLinearMatMul", 10)
                 .input(make_tensor<int8_t>({6, 1}, {1, 3, 5, -1, -3, -5}))
                 .input(scalar_float(1.0f))
                 .input(make_tensor<int8_t>({}, {0}))
                 .input(make_tensor<int8_t>({1, 1}, {1}))
                 .input(scalar_float(1.0f))
                 .input(make_tensor<int8_t>({}, {0}))
                 .input(scalar_float(2.0f))
                 .input(make_tensor<uint8_t>({}, {10}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<uint8_t>({6, 1}, {10, 12, 12, 10, 8, 8}));
}

struct MatMulCase {
  Shape a, b;
  Shape a_param, b_param;  // scale and zero point shapes
  bool constant_b;
  int threads;
};

template <typename TA, typename TB, typename TY>
void check_qlinear_matmul(const MatMulCase& c) {
  uint32_t seed = static_cast<uint32_t>(c.a.num_elements() * 131 + c.b.num_elements() * 7 + sizeof(TA) +
                                        2 * std::is_signed_v<TA> + 4 * std::is_signed_v<TB>);
  const std::vector<TA> a = random_values<TA>(c.a.num_elements(), seed);
  const std::vector<TB> b = random_values<TB>(c.b.num_elements(), seed);
  std::vector<TA> za = random_values<TA>(c.a_param.num_elements(), seed);
  std::vector<TB> zb = random_values<TB>(c.b_param.num_elements(), seed);
  // Zero points at the extremes of their types.
  za[0] = std::numeric_limits<TA>::max();
  zb[zb.size() - 1] = std::numeric_limits<TB>::min();
  std::vector<float> sa, sb;
  for (int64_t i = 0; i < c.a_param.num_elements(); ++i)
    sa.push_back(0.01f + 0.001f * static_cast<float>(next(seed) % 50));
  for (int64_t i = 0; i < c.b_param.num_elements(); ++i)
    sb.push_back(0.02f + 0.001f * static_cast<float>(next(seed) % 50));
  const float sy = 0.5f + 0.01f * static_cast<float>(next(seed) % 100);
  const auto zy = static_cast<TY>(next(seed));
  const int64_t K = c.a[c.a.rank() - 1];
  const int64_t M = c.a.rank() == 1 ? 1 : c.a[c.a.rank() - 2];
  const int64_t N = c.b.rank() == 1 ? 1 : c.b[c.b.rank() - 1];
  const int64_t a_mats = c.a.num_elements() / (M * K);
  const int64_t b_mats = c.b.num_elements() / (K * N);
  const int64_t batch = std::max(a_mats, b_mats);
  auto pick = [](int64_t count, int64_t vec, int64_t matrix, int64_t i) {
    return count == 1 ? 0 : count == vec ? i : matrix * vec + i;
  };
  std::vector<TY> expected;
  for (int64_t bi = 0; bi < batch; ++bi) {
    const int64_t am = a_mats == 1 ? 0 : bi;
    const int64_t bm = b_mats == 1 ? 0 : bi;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        const size_t ai = static_cast<size_t>(pick(c.a_param.num_elements(), M, am, m));
        const size_t bj = static_cast<size_t>(pick(c.b_param.num_elements(), N, bm, n));
        int32_t acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += (int32_t{a[static_cast<size_t>((am * M + m) * K + k)]} - za[ai]) *
                 (int32_t{b[static_cast<size_t>((bm * K + k) * N + n)]} - zb[bj]);
        expected.push_back(requantize_reference<TY>(acc, sa[ai], sb[bj], sy, zy));
      }
  }
  NodeTest t("QLinearMatMul", 21);
  t.input(make_tensor<TA>(c.a, a)).input(make_tensor<float>(c.a_param, sa)).input(make_tensor<TA>(c.a_param, za));
  if (c.constant_b) {
    t.constant_input(make_tensor<TB>(c.b, b));
  } else {
    t.input(make_tensor<TB>(c.b, b));
  }
  t.input(make_tensor<float>(c.b_param, sb)).input(make_tensor<TB>(c.b_param, zb));
  t.input(scalar_float(sy)).input(make_tensor<TY>({}, {zy}));
  auto out = t.threads(c.threads).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<TY>(out->at(0)), expected) << "A " << c.a.to_string() << " B " << c.b.to_string();
}

TEST(QLinearMatMulKernel, TypesGranularitiesAndBatches) {
  const MatMulCase cases[] = {
      {{7, 13}, {13, 37}, {1}, {1}, true, 1},
      {{7, 13}, {13, 37}, {7}, {37}, false, 1},       // per row of a, per column of b
      {{7, 13}, {13, 37}, {}, {1, 37}, true, 2},      // per column only
      {{3, 5, 9}, {9, 20}, {3, 5, 1}, {1}, false, 2},  // per row of every matrix
      {{2, 5, 9}, {2, 9, 20}, {1}, {2, 1, 20}, true, 3},
      {{4, 9}, {3, 9, 33}, {1}, {33}, false, 2},  // a broadcast over b's batch
      {{50, 100}, {100, 70}, {1}, {70}, true, 4},
  };
  for (const MatMulCase& c : cases) {
    check_qlinear_matmul<uint8_t, int8_t, uint8_t>(c);
    check_qlinear_matmul<int8_t, uint8_t, int8_t>(c);
    check_qlinear_matmul<uint8_t, uint8_t, int8_t>(c);
    check_qlinear_matmul<int8_t, int8_t, uint8_t>(c);
  }
}

TEST(QLinearMatMulKernel, Float16Scales) {
  const Float16 s1{float_to_float16(0.0066f)}, s2{float_to_float16(0.00705f)}, s3{float_to_float16(0.0107f)};
  auto out = NodeTest("QLinearMatMul", 21)
                 .input(make_tensor<uint8_t>({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29}))
                 .input(make_tensor<Float16>({1}, {s1}))
                 .input(make_tensor<uint8_t>({1}, {113}))
                 .input(make_tensor<uint8_t>({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247}))
                 .input(make_tensor<Float16>({1}, {s2}))
                 .input(make_tensor<uint8_t>({1}, {114}))
                 .input(make_tensor<Float16>({1}, {s3}))
                 .input(make_tensor<uint8_t>({1}, {118}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<uint8_t>({2, 3}, {168, 115, 255, 1, 66, 151}));
}

// A QLinearMatMul with one input replaced, for the error tests.
Result<std::vector<Tensor>> run_matmul_with(size_t replaced, Tensor value) {
  std::vector<Tensor> in;
  in.push_back(make_tensor<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6}));
  in.push_back(scalar_float(0.5f));
  in.push_back(make_tensor<uint8_t>({}, {1}));
  in.push_back(make_tensor<int8_t>({3, 2}, {1, 2, 3, 4, 5, 6}));
  in.push_back(scalar_float(0.5f));
  in.push_back(make_tensor<int8_t>({}, {0}));
  in.push_back(scalar_float(0.25f));
  in.push_back(make_tensor<uint8_t>({}, {3}));
  in[replaced] = std::move(value);
  NodeTest t("QLinearMatMul", 10);
  for (Tensor& v : in) t.input(std::move(v));
  return t.dynamic_shapes().run();
}

void expect_error_naming(const Result<std::vector<Tensor>>& r, const std::string& op, const std::string& what) {
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().to_string();
  EXPECT_NE(m.find(op), std::string::npos) << m;
  EXPECT_NE(m.find(what), std::string::npos) << m;
}

TEST(QLinearMatMulKernel, BadParametersAreErrors) {
  ASSERT_TRUE(run_matmul_with(1, scalar_float(0.5f)).ok());
  expect_error_naming(run_matmul_with(6, scalar_float(0.0f)), "QLinearMatMul", "y_scale");
  expect_error_naming(run_matmul_with(1, scalar_float(0.0f)), "QLinearMatMul", "a_scale");
  expect_error_naming(run_matmul_with(4, make_tensor<float>({3}, {1, 1, 1})), "QLinearMatMul", "b_scale");
  // Type constraints are checked before the schema's inference, by index.
  expect_error_naming(run_matmul_with(2, make_tensor<int8_t>({}, {1})), "QLinearMatMul", "input 2");
  expect_error_naming(run_matmul_with(7, make_tensor<uint8_t>({2}, {1, 2})), "QLinearMatMul", "y_zero_point");
  expect_error_naming(run_matmul_with(3, make_tensor<int8_t>({2, 2}, {1, 2, 3, 4})), "QLinearMatMul", "");
}

// ---- ConvInteger and QLinearConv -----------------------------------------------------------

struct ConvCase {
  Shape x, w;  // NC(spatial), M(C/group)(kernel)
  int64_t group;
  std::vector<int64_t> strides, dilations, pads;  // pads: begins then ends
  bool per_channel;
  bool constant_w;
  bool bias;
  int threads;
  std::string auto_pad = "NOTSET";
};

// Sums of (x - x_zp) * (w - w_zp[m]) over each window, padding counting as
// x_zp: [N, M, out...], with the output dims in `out_dims`.
template <typename TX, typename TW>
std::vector<int32_t> conv_reference(const ConvCase& c, const std::vector<TX>& x, const std::vector<TW>& w, TX x_zp,
                                    const std::vector<TW>& w_zp, const std::vector<int64_t>& pads,
                                    std::vector<int64_t>& out_dims) {
  const size_t rank = c.x.rank() - 2;
  const int64_t N = c.x[0], C = c.x[1], M = c.w[0], Cg = C / c.group, Mg = M / c.group;
  std::vector<int64_t> in(rank), k(rank), s(rank), d(rank);
  out_dims.assign(rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    in[i] = c.x[i + 2];
    k[i] = c.w[i + 2];
    s[i] = c.strides.empty() ? 1 : c.strides[i];
    d[i] = c.dilations.empty() ? 1 : c.dilations[i];
    out_dims[i] = (in[i] + pads[i] + pads[i + rank] - (k[i] - 1) * d[i] - 1) / s[i] + 1;
  }
  int64_t out_size = 1, k_size = 1, in_size = 1;
  for (size_t i = 0; i < rank; ++i) {
    out_size *= out_dims[i];
    k_size *= k[i];
    in_size *= in[i];
  }
  std::vector<int32_t> y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t g = m / Mg;
      const int32_t wz = w_zp.size() == 1 ? w_zp[0] : w_zp[static_cast<size_t>(m)];
      for (int64_t p = 0; p < out_size; ++p) {
        std::vector<int64_t> o(rank);
        for (int64_t rem = p, i = static_cast<int64_t>(rank) - 1; i >= 0; --i) {
          o[static_cast<size_t>(i)] = rem % out_dims[static_cast<size_t>(i)];
          rem /= out_dims[static_cast<size_t>(i)];
        }
        int32_t acc = 0;
        for (int64_t cc = 0; cc < Cg; ++cc)
          for (int64_t t = 0; t < k_size; ++t) {
            int64_t idx = 0;
            bool inside = true;
            for (int64_t rem = t, i = static_cast<int64_t>(rank) - 1; i >= 0; --i) {
              const size_t u = static_cast<size_t>(i);
              const int64_t ki = rem % k[u];
              rem /= k[u];
              const int64_t pos = o[u] * s[u] + ki * d[u] - pads[u];
              inside = inside && pos >= 0 && pos < in[u];
            }
            if (inside) {
              for (size_t i = 0; i < rank; ++i) {
                int64_t ki = t;
                for (size_t j = rank - 1; j > i; --j) ki /= k[j];
                ki %= k[i];
                idx = idx * in[i] + o[i] * s[i] + ki * d[i] - pads[i];
              }
            }
            const int32_t xv =
                inside ? int32_t{x[static_cast<size_t>((n * C + g * Cg + cc) * in_size + idx)]} : int32_t{x_zp};
            acc += (xv - x_zp) * (int32_t{w[static_cast<size_t>((m * Cg + cc) * k_size + t)]} - wz);
          }
        y.push_back(acc);
      }
    }
  return y;
}

// The pads of a case: its own, or SAME_UPPER's (the odd one at the end).
std::vector<int64_t> case_pads(const ConvCase& c) {
  const size_t rank = c.x.rank() - 2;
  if (c.auto_pad != "SAME_UPPER") return c.pads.empty() ? std::vector<int64_t>(2 * rank, 0) : c.pads;
  std::vector<int64_t> pads(2 * rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t s = c.strides.empty() ? 1 : c.strides[i];
    const int64_t d = c.dilations.empty() ? 1 : c.dilations[i];
    const int64_t out = (c.x[i + 2] + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (out - 1) * s + (c.w[i + 2] - 1) * d + 1 - c.x[i + 2]);
    pads[i] = total / 2;
    pads[i + rank] = total - total / 2;
  }
  return pads;
}

void add_window_attributes(NodeTest& t, const ConvCase& c) {
  t.attr("group", c.group);
  if (!c.strides.empty()) t.attr("strides", c.strides);
  if (!c.dilations.empty()) t.attr("dilations", c.dilations);
  if (!c.pads.empty()) t.attr("pads", c.pads);
  if (c.auto_pad != "NOTSET") t.attr("auto_pad", c.auto_pad);
}

template <typename TX, typename TW, typename TY>
void check_qlinear_conv(const ConvCase& c) {
  uint32_t seed = static_cast<uint32_t>(c.x.num_elements() * 17 + c.w.num_elements() + 2 * std::is_signed_v<TX> +
                                        4 * std::is_signed_v<TW>);
  const int64_t M = c.w[0];
  const std::vector<TX> x = random_values<TX>(c.x.num_elements(), seed);
  const std::vector<TW> w = random_values<TW>(c.w.num_elements(), seed);
  // x's zero point away from 0, so that padding with 0 would show.
  const auto x_zp = static_cast<TX>(std::is_signed_v<TX> ? 100 : 200);
  std::vector<TW> w_zp = random_values<TW>(c.per_channel ? M : 1, seed);
  w_zp[0] = std::numeric_limits<TW>::min();
  std::vector<float> w_scale;
  for (int64_t i = 0; i < (c.per_channel ? M : 1); ++i)
    w_scale.push_back(0.001f + 0.0005f * static_cast<float>(next(seed) % 40));
  const float x_scale = 0.02f, y_scale = 0.3f + 0.01f * static_cast<float>(next(seed) % 30);
  const auto y_zp = static_cast<TY>(next(seed));
  std::vector<int32_t> bias;
  for (int64_t i = 0; i < M && c.bias; ++i) bias.push_back(static_cast<int32_t>(next(seed) % 20001) - 10000);
  std::vector<int64_t> out_dims;
  const std::vector<int32_t> acc = conv_reference<TX, TW>(c, x, w, x_zp, w_zp, case_pads(c), out_dims);
  int64_t out_size = 1;
  for (int64_t v : out_dims) out_size *= v;
  std::vector<TY> expected;
  for (size_t i = 0; i < acc.size(); ++i) {
    const size_t m = static_cast<size_t>(static_cast<int64_t>(i) / out_size % M);
    const int32_t sum = acc[i] + (c.bias ? bias[m] : 0);
    expected.push_back(requantize_reference<TY>(sum, x_scale, w_scale[c.per_channel ? m : 0], y_scale, y_zp));
  }
  const Shape param{c.per_channel ? M : 1};
  NodeTest t("QLinearConv", 10);
  t.input(make_tensor<TX>(c.x, x)).input(scalar_float(x_scale)).input(make_tensor<TX>({}, {x_zp}));
  if (c.constant_w) {
    t.constant_input(make_tensor<TW>(c.w, w));
  } else {
    t.input(make_tensor<TW>(c.w, w));
  }
  t.input(make_tensor<float>(param, w_scale)).input(make_tensor<TW>(param, w_zp));
  t.input(scalar_float(y_scale)).input(make_tensor<TY>({}, {y_zp}));
  if (c.bias) t.input(make_tensor<int32_t>({M}, bias));
  add_window_attributes(t, c);
  auto out = t.threads(c.threads).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<TY>(out->at(0)), expected) << "x " << c.x.to_string() << " w " << c.w.to_string();
}

template <typename TX, typename TW>
void check_conv_integer(const ConvCase& c) {
  uint32_t seed = static_cast<uint32_t>(c.x.num_elements() * 29 + c.w.num_elements() + std::is_signed_v<TX>);
  const int64_t M = c.w[0];
  const std::vector<TX> x = random_values<TX>(c.x.num_elements(), seed);
  const std::vector<TW> w = random_values<TW>(c.w.num_elements(), seed);
  const auto x_zp = static_cast<TX>(std::is_signed_v<TX> ? -128 : 255);
  std::vector<TW> w_zp = random_values<TW>(c.per_channel ? M : 1, seed);
  std::vector<int64_t> out_dims;
  const std::vector<int32_t> expected = conv_reference<TX, TW>(c, x, w, x_zp, w_zp, case_pads(c), out_dims);
  NodeTest t("ConvInteger", 10);
  t.input(make_tensor<TX>(c.x, x));
  if (c.constant_w) {
    t.constant_input(make_tensor<TW>(c.w, w));
  } else {
    t.input(make_tensor<TW>(c.w, w));
  }
  t.input(make_tensor<TX>({}, {x_zp})).input(make_tensor<TW>({c.per_channel ? M : 1}, w_zp));
  add_window_attributes(t, c);
  auto out = t.threads(c.threads).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).dtype(), DataType::kInt32);
  EXPECT_EQ(to_vector<int32_t>(out->at(0)), expected) << "x " << c.x.to_string() << " w " << c.w.to_string();
}

std::vector<ConvCase> conv_cases() {
  return {
      {{1, 3, 7, 9}, {5, 3, 3, 3}, 1, {}, {}, {1, 1, 1, 1}, true, true, true, 1},
      {{2, 4, 8, 7}, {6, 2, 3, 2}, 2, {2, 1}, {1, 2}, {2, 0, 1, 1}, true, false, true, 2},  // groups, asymmetric
      {{1, 6, 5, 5}, {6, 1, 3, 3}, 6, {}, {}, {1, 1, 1, 1}, false, true, false, 1},        // depthwise
      {{1, 5, 11}, {7, 5, 4}, 1, {3}, {2}, {2, 3}, true, true, true, 1},                 // 1-D
      {{1, 2, 4, 5, 3}, {3, 2, 2, 3, 2}, 1, {}, {}, {1, 0, 1, 0, 1, 1}, true, false, false, 1},  // 3-D
      {{1, 3, 9, 10}, {4, 3, 3, 3}, 1, {2, 2}, {}, {}, false, true, true, 1, "SAME_UPPER"},
      {{2, 16, 20, 20}, {40, 16, 3, 3}, 1, {}, {}, {1, 1, 1, 1}, true, true, true, 4},  // several blocks and tasks
      {{1, 20, 17, 19}, {24, 20, 1, 1}, 1, {}, {}, {}, true, true, true, 2},       // 1x1 reading x as is, 2 blocks
      {{1, 8, 9, 9}, {4, 8, 1, 1}, 1, {2, 2}, {}, {}, true, true, false, 1},       // 1x1 with stride
      {{1, 3, 13, 14}, {5, 3, 3, 2}, 1, {3, 2}, {2, 3}, {2, 1, 0, 3}, true, true, true, 1},  // dilated, strided, padded
      {{1, 16, 5, 5}, {100, 16, 3, 3}, 1, {}, {}, {1, 1, 1, 1}, true, true, true, 3},  // one block, rows split
      {{1, 4, 300}, {6, 4, 3}, 1, {}, {2}, {3, 1}, true, true, true, 2},  // 1-D grid, dilated, 2 blocks
      {{2, 3, 20, 21}, {5, 3, 5, 3}, 1, {}, {1, 2}, {2, 0, 1, 3}, false, false, true, 2},  // grid, asymmetric pads
  };
}

TEST(QLinearConvKernel, TypesGroupsPaddingAndPerChannel) {
  for (const ConvCase& c : conv_cases()) {
    check_qlinear_conv<uint8_t, int8_t, uint8_t>(c);
    check_qlinear_conv<int8_t, uint8_t, int8_t>(c);
    check_qlinear_conv<uint8_t, uint8_t, uint8_t>(c);
    check_qlinear_conv<int8_t, int8_t, int8_t>(c);
  }
}

TEST(ConvIntegerKernel, TypesGroupsPaddingAndPerChannel) {
  for (const ConvCase& c : conv_cases()) {
    check_conv_integer<uint8_t, int8_t>(c);
    check_conv_integer<int8_t, uint8_t>(c);
    check_conv_integer<uint8_t, uint8_t>(c);
    check_conv_integer<int8_t, int8_t>(c);
  }
}

// The ONNX example: per-channel w zero point, padding with x's zero point.
TEST(ConvIntegerKernel, OnnxExampleWithPadding) {
  auto out = NodeTest("ConvInteger", 10)
                 .input(make_tensor<uint8_t>({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10}))
                 .input(make_tensor<uint8_t>({2, 1, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1}))
                 .input(make_tensor<uint8_t>({}, {1}))
                 .input(make_tensor<uint8_t>({2}, {0, 1}))
                 .attr("pads", std::vector<int64_t>{1, 1, 1, 1})
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  std::vector<int32_t> expected = {1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9};
  expected.resize(32, 0);  // the second filter is all its zero point
  expect_tensor_eq(out->at(0), make_tensor<int32_t>({1, 2, 4, 4}, expected));
}

// A QLinearConv (x [1, 2, 3, 3], w [2, 2, 1, 1]) with one input replaced.
Result<std::vector<Tensor>> run_conv_with(size_t replaced, Tensor value) {
  std::vector<Tensor> in;
  in.push_back(make_tensor<uint8_t>({1, 2, 3, 3}, std::vector<uint8_t>(18, 7)));
  in.push_back(scalar_float(0.5f));
  in.push_back(make_tensor<uint8_t>({}, {1}));
  in.push_back(make_tensor<int8_t>({2, 2, 1, 1}, {1, 2, 3, 4}));
  in.push_back(make_tensor<float>({2}, {0.5f, 0.25f}));
  in.push_back(make_tensor<int8_t>({2}, {0, 1}));
  in.push_back(scalar_float(0.25f));
  in.push_back(make_tensor<uint8_t>({}, {3}));
  in.push_back(make_tensor<int32_t>({2}, {10, -10}));
  in[replaced] = std::move(value);
  NodeTest t("QLinearConv", 10);
  for (Tensor& v : in) t.input(std::move(v));
  return t.dynamic_shapes().run();
}

TEST(QLinearConvKernel, BadParametersAreErrors) {
  ASSERT_TRUE(run_conv_with(1, scalar_float(0.5f)).ok());
  expect_error_naming(run_conv_with(1, scalar_float(0.0f)), "QLinearConv", "x_scale");
  expect_error_naming(run_conv_with(4, make_tensor<float>({2}, {0.5f, 0.0f})), "QLinearConv", "w_scale");
  expect_error_naming(run_conv_with(4, make_tensor<float>({3}, {1, 1, 1})), "QLinearConv", "w_scale");
  expect_error_naming(run_conv_with(5, make_tensor<int8_t>({3}, {0, 0, 0})), "QLinearConv", "w_zero_point");
  expect_error_naming(run_conv_with(5, make_tensor<uint8_t>({2}, {0, 0})), "QLinearConv", "input 5");
  expect_error_naming(run_conv_with(2, make_tensor<uint8_t>({2}, {1, 1})), "QLinearConv", "x_zero_point");
  expect_error_naming(run_conv_with(8, make_tensor<int32_t>({3}, {1, 2, 3})), "QLinearConv", "B");
  expect_error_naming(run_conv_with(0, make_tensor<uint8_t>({1, 3, 3, 3}, std::vector<uint8_t>(27, 7))), "QLinearConv",
                      "channels");
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
