// com.switchyard QLinearAdd: each ISA's loop and the kernel against a
// scalar loop that computes what DequantizeLinear -> Add -> [Relu] ->
// QuantizeLinear computes, step by step in float: (x - zp) * scale for
// each side, their sum, the quotient by C's scale, rounding half to even,
// C's zero point, saturation. Random data over both types with zero points
// at the extremes (saturation both ways), scales that make exact ties,
// every run length around the block and vector widths, broadcasting, and
// bad parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "providers/cpu/qlinear_add_simd.h"
#include "schema/fused.h"
#include "testing/isa_variants.h"
#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy {
namespace {

using testing::make_tensor;
using testing::NodeTest;

template <typename T>
std::vector<T> random_values(int64_t n, uint32_t& seed) {
  return testing::random_bytes<T>(static_cast<size_t>(n), seed++);
}

// The unfused graph's value for one element. The products go through
// volatile floats so that no compiler flag fuses them into the sum.
template <typename T>
T reference(T a, T b, const cpu::QLinearAddParams& p, bool relu) {
  const volatile float fa = static_cast<float>(static_cast<int32_t>(a) - p.a_zero_point) * p.a_scale;
  const volatile float fb = static_cast<float>(static_cast<int32_t>(b) - p.b_zero_point) * p.b_scale;
  float sum = fa + fb;
  if (relu) sum = std::max(sum, 0.0f);
  const double q = std::nearbyint(static_cast<double>(sum / p.c_scale)) + p.c_zero_point;
  const double lo = std::is_signed_v<T> ? -128 : 0, hi = std::is_signed_v<T> ? 127 : 255;
  return static_cast<T>(std::clamp(q, lo, hi));
}

template <typename T>
cpu::QLinearAddParams params(float sa, int za, float sb, int zb, float sc, int zc, bool relu) {
  cpu::QLinearAddParams p;
  p.a_scale = sa;
  p.b_scale = sb;
  p.c_scale = sc;
  p.a_zero_point = za;
  p.b_zero_point = zb;
  p.c_zero_point = zc;
  p.lo = std::is_signed_v<T> ? -128 : 0;
  p.hi = std::is_signed_v<T> ? 127 : 255;
  if (relu) p.lo = std::max(p.lo, zc);
  return p;
}

struct Case {
  float sa, sb, sc;
  int za, zb, zc;  // for uint8; int8 takes each minus 128
};

// Ties: scales 1, 1, 2 make every odd sum a tie. Saturation: C's zero
// point at an end, or a C scale much smaller than A's and B's.
const Case kCases[] = {
    {1.0f, 1.0f, 2.0f, 128, 128, 128}, {0.02f, 0.013f, 0.031f, 0, 255, 128},
    {0.05f, 0.05f, 0.01f, 128, 100, 255}, {0.0123f, 0.0456f, 0.0789f, 3, 250, 0},
    {0.5f, 0.25f, 1.5f, 128, 128, 10},
};

template <typename T>
void check_variant(const char* name, void (*fn)(const T*, const T*, bool, int64_t, const cpu::QLinearAddParams&, T*)) {
  const int shift = std::is_signed_v<T> ? 128 : 0;
  uint32_t seed = 99;
  for (const Case& k : kCases)
    for (bool relu : {false, true})
      for (bool b_moves : {true, false})
        for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{255},
                          int64_t{256}, int64_t{257}, int64_t{600}}) {
          const auto p = params<T>(k.sa, k.za - shift, k.sb, k.zb - shift, k.sc, k.zc - shift, relu);
          const std::vector<T> a = random_values<T>(n, seed);
          const std::vector<T> b = random_values<T>(n, seed);
          std::vector<T> c(static_cast<size_t>(n) + 1, T{42});  // one past the end must stay
          fn(a.data(), b.data(), b_moves, n, p, c.data());
          int64_t wrong = 0;
          for (int64_t i = 0; i < n; ++i) {
            const auto u = static_cast<size_t>(i);
            wrong += c[u] != reference(a[u], b[b_moves ? u : 0], p, relu);
          }
          EXPECT_EQ(wrong, 0) << name << " n=" << n << " relu=" << relu << " b_moves=" << b_moves
                              << " sc=" << k.sc;
          EXPECT_EQ(c[static_cast<size_t>(n)], T{42}) << name << " wrote past the run, n=" << n;
        }
}

TEST(QLinearAddSimd, EveryVariantMatchesTheUnfusedArithmetic) {
  namespace d = cpu::qlinear_add_detail;
  for (const auto& v : testing::isa_variants(&d::qlinear_add_simd_portable, &d::qlinear_add_simd_avx2,
                                             &d::qlinear_add_simd_avx512)) {
    check_variant<uint8_t>(v.name.c_str(), v.fn().add_u8);
    check_variant<int8_t>(v.name.c_str(), v.fn().add_s8);
  }
}

// Ties round to even: with scales 1, 1 and 2, sums 1, 3, 5, -1, -3, -5
// give 0.5, 1.5, 2.5, ... which round to 0, 2, 2, 0, -2, -2.
TEST(QLinearAddSimd, TiesRoundToEven) {
  const auto p = params<int8_t>(1.0f, 0, 1.0f, 0, 2.0f, 0, false);
  const std::vector<int8_t> a = {1, 2, 3, -1, -2, -3}, b = {0, 1, 2, 0, -1, -2};
  std::vector<int8_t> c(6);
  cpu::qlinear_add_simd().add_s8(a.data(), b.data(), true, 6, p, c.data());
  EXPECT_EQ(c, (std::vector<int8_t>{0, 2, 2, 0, -2, -2}));
}

// ---- the kernel ------------------------------------------------------------------------------

template <typename T>
Tensor scalar(int v) {
  return make_tensor<T>({}, {static_cast<T>(v)});
}
Tensor scalar_float(float v) { return make_tensor<float>({}, {v}); }

NodeTest qlinear_add(bool relu = false) {
  NodeTest t(kQLinearAddOp, 1, kSwitchyardDomain);
  if (relu) t.attr(kActivationAttr, "Relu");
  return t;
}

// A [2, 3, 4, 5] against B of `b_shape`, uint8, through the kernel on 2
// threads, against the reference with numpy broadcasting done by hand.
void check_broadcast(const Shape& b_shape, bool swap, bool relu) {
  const Shape big{2, 3, 4, 5};
  uint32_t seed = static_cast<uint32_t>(b_shape.num_elements() * 7 + swap + relu * 2);
  const std::vector<uint8_t> av = random_values<uint8_t>(big.num_elements(), seed);
  const std::vector<uint8_t> bv = random_values<uint8_t>(b_shape.num_elements(), seed);
  const auto p = params<uint8_t>(0.03f, 120, 0.07f, 135, 0.05f, 128, relu);
  // B's element for output element i: B's dims align with the output's
  // last ones, and a dim of 1 stays at 0.
  auto b_index = [&](int64_t i) {
    const auto offset = static_cast<int>(big.rank() - b_shape.rank());
    int64_t idx = 0, stride = 1;
    for (int d = static_cast<int>(big.rank()) - 1; d >= offset; --d) {
      const int64_t coord = i % big[static_cast<size_t>(d)];
      i /= big[static_cast<size_t>(d)];
      const int64_t dim = b_shape[static_cast<size_t>(d - offset)];
      idx += (dim == 1 ? 0 : coord) * stride;
      stride *= dim;
    }
    return idx;
  };
  std::vector<uint8_t> want(static_cast<size_t>(big.num_elements()));
  for (int64_t i = 0; i < big.num_elements(); ++i)
    want[static_cast<size_t>(i)] = reference(av[static_cast<size_t>(i)], bv[static_cast<size_t>(b_index(i))], p, relu);
  Tensor a = make_tensor<uint8_t>(big, av), b = make_tensor<uint8_t>(b_shape, bv);
  auto t = qlinear_add(relu);
  // Swapped: B's tensor goes in as A, with A's parameters, and the other way round.
  if (!swap) {
    t.input(a).input(scalar_float(p.a_scale)).input(scalar<uint8_t>(p.a_zero_point));
    t.input(b).input(scalar_float(p.b_scale)).input(scalar<uint8_t>(p.b_zero_point));
  } else {
    t.input(b).input(scalar_float(p.b_scale)).input(scalar<uint8_t>(p.b_zero_point));
    t.input(a).input(scalar_float(p.a_scale)).input(scalar<uint8_t>(p.a_zero_point));
  }
  auto out = t.input(scalar_float(p.c_scale)).input(scalar<uint8_t>(p.c_zero_point)).threads(2).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  testing::expect_tensor_eq(out->at(0), make_tensor<uint8_t>(big, want));
}

TEST(QLinearAddKernel, BroadcastsLikeNumpy) {
  for (const Shape& s : {Shape{2, 3, 4, 5}, Shape{}, Shape{1}, Shape{3, 1, 1}, Shape{5}, Shape{2, 1, 4, 1}})
    for (bool swap : {false, true})
      for (bool relu : {false, true}) {
        SCOPED_TRACE(s.to_string() + (swap ? " as A" : " as B") + (relu ? " relu" : ""));
        check_broadcast(s, swap, relu);
      }
}

TEST(QLinearAddKernel, LargeInt8RunOnThreads) {
  const int64_t n = 3 * 32768 + 77;  // several tasks, a tail
  uint32_t seed = 5;
  const std::vector<int8_t> av = random_values<int8_t>(n, seed), bv = random_values<int8_t>(n, seed);
  const auto p = params<int8_t>(0.011f, -5, 0.017f, 7, 0.02f, -100, true);
  std::vector<int8_t> want(static_cast<size_t>(n));
  for (size_t i = 0; i < want.size(); ++i) want[i] = reference(av[i], bv[i], p, true);
  auto out = qlinear_add(true)
                 .input(make_tensor<int8_t>({n}, av)).input(scalar_float(p.a_scale)).input(scalar<int8_t>(-5))
                 .input(make_tensor<int8_t>({n}, bv)).input(scalar_float(p.b_scale)).input(scalar<int8_t>(7))
                 .input(scalar_float(p.c_scale)).input(scalar<int8_t>(-100))
                 .threads(3)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  testing::expect_tensor_eq(out->at(0), make_tensor<int8_t>({n}, want));
}

// Runs QLinearAdd on uint8 [4] inputs with input `i` replaced by `bad`
// (a run-time input, so the kernel sees it; `constant`: an initializer,
// so the schema's inference sees it first).
Result<std::vector<Tensor>> run_with(size_t i, const Tensor& bad, bool constant = false) {
  std::vector<Tensor> in = {make_tensor<uint8_t>({4}, {1, 2, 3, 4}), scalar_float(0.5f), scalar<uint8_t>(0),
                            make_tensor<uint8_t>({4}, {5, 6, 7, 8}), scalar_float(0.25f), scalar<uint8_t>(3),
                            scalar_float(1.0f), scalar<uint8_t>(9)};
  in[i] = bad;
  auto t = qlinear_add();
  for (size_t k = 0; k < in.size(); ++k) {
    if (k == i && constant)
      t.constant_input(in[k]);
    else
      t.input(in[k]);
  }
  return t.run();
}

void expect_error_naming(const Result<std::vector<Tensor>>& r, const std::string& what) {
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().to_string();
  EXPECT_NE(m.find("QLinearAdd"), std::string::npos) << m;
  EXPECT_NE(m.find(what), std::string::npos) << m;
}

TEST(QLinearAddKernel, BadParametersAreErrorsNamingTheInput) {
  auto good = run_with(1, scalar_float(0.5f));
  ASSERT_TRUE(good.ok()) << good.status().to_string();
  // (x - zp) * s: 0.5, 1, 1.5, 2 + 0.5, 0.75, 1, 1.25 = 1, 1.75, 2.5, 3.25; / 1, round, + 9.
  testing::expect_tensor_eq(good->at(0), make_tensor<uint8_t>({4}, {10, 11, 11, 12}));
  for (bool constant : {false, true}) {
    SCOPED_TRACE(constant ? "constant" : "run-time input");
    expect_error_naming(run_with(6, scalar_float(0.0f), constant), "C_scale");
    expect_error_naming(run_with(1, scalar_float(std::nanf("")), constant), "A_scale");
    expect_error_naming(run_with(5, scalar<int8_t>(3), constant), "B_zero_point");
    expect_error_naming(run_with(7, make_tensor<uint8_t>({2}, {1, 2}), constant), "C_zero_point");
    expect_error_naming(run_with(4, make_tensor<double>({}, {0.25}), constant), "B_scale");
  }
  expect_error_naming(run_with(3, make_tensor<int8_t>({4}, {5, 6, 7, 8})), "input 3");
  expect_error_naming(run_with(3, make_tensor<uint8_t>({3}, {5, 6, 7})), "broadcast");
}

TEST(QLinearAddKernel, UnknownActivationIsAnError) {
  auto t = NodeTest(kQLinearAddOp, 1, kSwitchyardDomain);
  t.attr(kActivationAttr, "Sigmoid");
  for (int k = 0; k < 2; ++k)
    t.input(make_tensor<uint8_t>({2}, {1, 2})).input(scalar_float(1.0f)).input(scalar<uint8_t>(0));
  auto out = t.input(scalar_float(1.0f)).input(scalar<uint8_t>(0)).run();
  expect_error_naming(out, "Sigmoid");
}

}  // namespace
}  // namespace sy
