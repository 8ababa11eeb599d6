// sgemm against a double-precision triple loop, for every variant this CPU
// runs, odd sizes, transposes, alpha/beta, the epilogue, prepacked operands
// and several threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/thread_pool.h"
#include "providers/cpu/gemm/sgemm.h"
#include "providers/cpu/gemm/sgemm_kernels.h"
#include "testing/isa_variants.h"
#include "testing/test_values.h"

namespace sy::cpu {
namespace {

using sy::testing::test_values;

struct Case {
  int64_t m, n, k;
  bool ta, tb;
  float alpha, beta;
};

// Aligned workspace of the size sgemm asks for.
struct Workspace {
  explicit Workspace(size_t bytes) : mem(bytes / sizeof(float) + 32) {}
  void* get() { return reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(mem.data()) + 63) & ~uintptr_t{63}); }
  std::vector<float> mem;
};

enum class Packing { kNone, kA, kB };

void check(const Case& c, ThreadPool* pool, Packing packing, const GemmEpilogue& ep = {}) {
  const int64_t lda = c.ta ? c.m + 3 : c.k + 2;  // padded leading dims catch stride bugs
  const int64_t ldb = c.tb ? c.k + 1 : c.n + 5;
  const int64_t ldc = c.n + 4;
  const std::vector<float> a = test_values(static_cast<size_t>((c.ta ? c.k : c.m) * lda), 1);
  const std::vector<float> b = test_values(static_cast<size_t>((c.tb ? c.n : c.k) * ldb), 2);
  std::vector<float> out = test_values(static_cast<size_t>(c.m * ldc), 3);
  std::vector<double> expect(out.begin(), out.end());
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < c.k; ++p)
        s += static_cast<double>(c.ta ? a[p * lda + i] : a[i * lda + p]) * (c.tb ? b[j * ldb + p] : b[p * ldb + j]);
      double v = c.alpha * s + (c.beta == 0.0f ? 0.0 : c.beta * expect[i * ldc + j]);
      if (ep.bias != nullptr) v += ep.bias_per_row ? ep.bias[i] : ep.bias[j];
      if (ep.residual != nullptr) v += ep.residual[i * ldc + j];
      if (ep.activation == GemmActivation::kRelu) v = std::max(v, 0.0);
      if (ep.activation == GemmActivation::kClip) v = std::min(std::max(v, double{ep.clip_min}), double{ep.clip_max});
      expect[i * ldc + j] = v;
    }
  }
  const GemmPlan plan = plan_sgemm(c.m, c.n, c.k, pool, packing == Packing::kB, ep.split_rows_only);
  Workspace ws(plan.workspace_bytes);
  if (packing == Packing::kB) {
    PackedMatrix pb = pack_b(c.tb, c.k, c.n, b.data(), ldb);
    sgemm_packed_b(plan, c.ta, c.m, c.n, c.k, c.alpha, a.data(), lda, pb, c.beta, out.data(), ldc, pool, ws.get(), ep);
  } else if (packing == Packing::kA) {
    PackedMatrix pa = pack_a(c.ta, c.m, c.k, a.data(), lda);
    sgemm_packed_a(plan, pa, c.tb, c.m, c.n, c.k, c.alpha, b.data(), ldb, c.beta, out.data(), ldc, pool, ws.get(), ep);
  } else {
    sgemm(plan, c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.beta, out.data(), ldc, pool,
          ws.get(), ep);
  }
  const std::string what = "m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
                           " ta=" + std::to_string(c.ta) + " tb=" + std::to_string(c.tb) + " isa=" +
                           gemm_isa_name(active_gemm_isa());
  int failures = 0;
  for (int64_t i = 0; i < c.m && failures < 5; ++i) {
    for (int64_t j = 0; j < ldc && failures < 5; ++j) {
      const double got = out[i * ldc + j];
      const double want = expect[i * ldc + j];
      if (std::fabs(got - want) > 1e-4 * (1.0 + std::fabs(want)) * std::sqrt(static_cast<double>(c.k) + 1)) {
        ADD_FAILURE() << what << ": C[" << i << "," << j << "] = " << got << ", expected " << want;
        ++failures;
      }
    }
  }
}

class SgemmIsaTest : public ::testing::TestWithParam<GemmIsa> {
 protected:
  void SetUp() override {
    if (!force_gemm_isa(GetParam())) GTEST_SKIP() << gemm_isa_name(GetParam()) << " not supported by this CPU";
  }
  void TearDown() override { reset_gemm_isa(); }
};

TEST_P(SgemmIsaTest, OddSizesAllTransposes) {
  const int64_t sizes[] = {1, 3, 17, 65, 257};
  for (int64_t m : sizes)
    for (int64_t n : sizes)
      for (int64_t k : {int64_t{1}, int64_t{17}, int64_t{1000}})  // 1000: two blocks of K
        for (int t = 0; t < 4; ++t) {
          if (m * n * k > 257 * 257 * 17 && t != 0) continue;  // keep the big ones to one layout
          check({m, n, k, (t & 1) != 0, (t & 2) != 0, 1.0f, 0.0f}, nullptr, Packing::kNone);
        }
}

TEST_P(SgemmIsaTest, AlphaBeta) {
  check({33, 70, 40, false, false, 0.5f, 2.0f}, nullptr, Packing::kNone);
  check({7, 129, 513, true, false, -1.5f, 1.0f}, nullptr, Packing::kNone);
  check({64, 64, 64, false, true, 2.0f, -0.5f}, nullptr, Packing::kNone);
  // alpha == 0: C = beta * C without touching the product.
  check({5, 9, 4, false, false, 0.0f, 3.0f}, nullptr, Packing::kNone);
}

TEST_P(SgemmIsaTest, EmptyInnerDimension) {
  check({4, 5, 0, false, false, 1.0f, 0.0f}, nullptr, Packing::kNone);
  check({4, 5, 0, false, false, 1.0f, 2.0f}, nullptr, Packing::kNone);
}

TEST_P(SgemmIsaTest, Epilogue) {
  const std::vector<float> bias = test_values(static_cast<size_t>(300), 9);
  GemmEpilogue col;
  col.bias = bias.data();
  check({13, 150, 70, false, false, 1.0f, 0.0f}, nullptr, Packing::kNone, col);
  GemmEpilogue row;
  row.bias = bias.data();
  row.bias_per_row = true;
  row.activation = GemmActivation::kRelu;
  check({200, 67, 1000, false, false, 1.0f, 1.0f}, nullptr, Packing::kNone, row);  // K spans two blocks
  GemmEpilogue clip;
  clip.activation = GemmActivation::kClip;
  clip.clip_min = -0.5f;
  clip.clip_max = 0.75f;
  check({31, 31, 31, true, true, 1.0f, 0.0f}, nullptr, Packing::kNone, clip);
}

TEST_P(SgemmIsaTest, PrepackedOperands) {
  for (int t = 0; t < 4; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    check({37, 130, 520, ta, tb, 1.0f, 0.0f}, nullptr, Packing::kB);
    check({37, 130, 520, ta, tb, 0.5f, 1.0f}, nullptr, Packing::kA);
    check({1, 3, 17, ta, tb, 1.0f, 0.0f}, nullptr, Packing::kB);
    check({3, 1, 17, ta, tb, 1.0f, 0.0f}, nullptr, Packing::kA);
  }
  const std::vector<float> bias = test_values(static_cast<size_t>(200), 4);
  GemmEpilogue ep;
  ep.bias = bias.data();
  ep.bias_per_row = true;
  check({150, 90, 80, false, false, 1.0f, 0.0f}, nullptr, Packing::kA, ep);
}

// The residual (laid out like C, ldc included) goes in with the bias and
// before the activation, once, however many blocks of K there are: K = 1000
// spans two, and with beta = 1 C's old values count too.
TEST_P(SgemmIsaTest, ResidualInEpilogue) {
  const std::vector<float> residual = test_values(static_cast<size_t>(70 * (90 + 4)), 6);
  const std::vector<float> bias = test_values(static_cast<size_t>(90), 7);
  GemmEpilogue ep;
  ep.residual = residual.data();
  check({70, 90, 1000, false, false, 1.0f, 0.0f}, nullptr, Packing::kNone, ep);
  check({70, 90, 17, true, true, 0.5f, 1.0f}, nullptr, Packing::kB, ep);
  ep.bias = bias.data();
  ep.activation = GemmActivation::kRelu;
  check({70, 90, 1000, false, false, 1.0f, 0.0f}, nullptr, Packing::kA, ep);
  ThreadPool pool(2);
  check({70, 90, 1000, false, false, 1.0f, 0.0f}, &pool, Packing::kB, ep);
  check({70, 90, 0, false, false, 1.0f, 0.5f}, nullptr, Packing::kNone, ep);  // K == 0: bias and residual only
}

// A B packed row by row (packed_b_of + pack_b_row, as Winograd's weights
// are) is byte for byte the one pack_b makes: K = 1000 spans two blocks of
// K, N = 70 ends inside a panel, whose padding must be zero.
TEST_P(SgemmIsaTest, PackedRowByRowMatchesPackB) {
  const int64_t k = 1000, n = 70;
  const std::vector<float> b = test_values(static_cast<size_t>(k * n), 8);
  const PackedMatrix whole = pack_b(false, k, n, b.data(), n);
  PackedMatrix rows = packed_b_of(k, n);
  ASSERT_FALSE(rows.empty());
  for (int64_t r = 0; r < k; ++r) pack_b_row(rows, r, b.data() + r * n);
  ASSERT_EQ(rows.byte_size(), whole.byte_size());
  EXPECT_EQ(rows.isa(), whole.isa());
  EXPECT_TRUE(std::equal(rows.data(), rows.data() + rows.byte_size() / sizeof(float), whole.data()));
}

TEST_P(SgemmIsaTest, Threaded) {
  ThreadPool pool(3);
  check({300, 500, 200, false, false, 1.0f, 0.0f}, &pool, Packing::kNone);
  check({1200, 70, 100, true, true, 1.0f, 0.5f}, &pool, Packing::kNone);
  check({10, 2000, 100, false, false, 1.0f, 0.0f}, &pool, Packing::kB);
  check({257, 257, 257, false, false, 1.0f, 0.0f}, &pool, Packing::kA);
}

// Tasks split columns in 16s, so with a prepacked B (panels of 64 columns
// for AVX-512) a task may start and end inside a panel: 160 columns go 80 /
// 80 over 2 threads, 960 as 480 / 480.
TEST_P(SgemmIsaTest, ThreadedPrepackedBSplitInsidePanels) {
  const std::vector<float> bias = test_values(static_cast<size_t>(960), 5);
  GemmEpilogue ep;
  ep.bias = bias.data();
  ep.activation = GemmActivation::kClip;
  ep.clip_min = -0.5f;
  ep.clip_max = 0.75f;
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    check({49, 160, 1000, true, false, 1.0f, 0.0f}, &pool, Packing::kB, ep);
    check({49, 960, 160, true, false, 1.0f, 0.0f}, &pool, Packing::kB, ep);
    check({13, 208, 70, false, true, 1.0f, 0.5f}, &pool, Packing::kB, ep);
  }
}

// A channel-blocked C (c_block_stride): element (i, j) at
// C[(j / 16) * stride + i * 16 + j % 16], the layout a 1x1 conv hands to a
// depthwise conv. Floats between the blocks (stride > rows * 16) stay as
// they were.
TEST_P(SgemmIsaTest, ChannelBlockedC) {
  const int64_t m = 29, n = 80, k = 45, stride = m * 16 + 7;
  const std::vector<float> a = test_values(static_cast<size_t>(k * m), 1);  // A^T, k x m
  const std::vector<float> b = test_values(static_cast<size_t>(k * n), 2);
  const std::vector<float> bias = test_values(static_cast<size_t>(n), 4);
  GemmEpilogue ep;
  ep.bias = bias.data();
  ep.activation = GemmActivation::kClip;
  ep.clip_min = -0.5f;
  ep.clip_max = 0.75f;
  ep.c_block_stride = stride;
  const PackedMatrix pb = pack_b(false, k, n, b.data(), n);
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    std::vector<float> out(static_cast<size_t>(n / 16 * stride), -7.0f);
    const GemmPlan plan = plan_sgemm(m, n, k, &pool, true);
    Workspace ws(plan.workspace_bytes);
    sgemm_packed_b(plan, true, m, n, k, 1.0f, a.data(), m, pb, 0.0f, out.data(), 0, &pool, ws.get(), ep);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = bias[static_cast<size_t>(j)];
        for (int64_t p = 0; p < k; ++p) s += static_cast<double>(a[p * m + i]) * b[p * n + j];
        const double want = std::min(std::max(s, -0.5), 0.75);
        ASSERT_NEAR(out[static_cast<size_t>(j / 16 * stride + i * 16 + j % 16)], want, 1e-4)
            << "C[" << i << "," << j << "] threads " << threads;
      }
    for (int64_t blk = 0; blk < n / 16; ++blk)
      for (int64_t q = m * 16; q < stride; ++q) ASSERT_EQ(out[static_cast<size_t>(blk * stride + q)], -7.0f);
  }
  // Gelu, applied per tile after the product, finds its elements block by block too.
  GemmEpilogue gelu;
  gelu.activation = GemmActivation::kGeluErf;
  gelu.c_block_stride = stride;
  ThreadPool pool(2);
  std::vector<float> out(static_cast<size_t>(n / 16 * stride), -7.0f);
  const GemmPlan plan = plan_sgemm(m, n, k, &pool, true);
  Workspace ws(plan.workspace_bytes);
  sgemm_packed_b(plan, true, m, n, k, 1.0f, a.data(), m, pb, 0.0f, out.data(), 0, &pool, ws.get(), gelu);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += static_cast<double>(a[p * m + i]) * b[p * n + j];
      const double want = 0.5 * s * (1.0 + std::erf(s / std::sqrt(2.0)));
      ASSERT_NEAR(out[static_cast<size_t>(j / 16 * stride + i * 16 + j % 16)], want, 1e-4 * (1.0 + std::fabs(want)))
          << "Gelu C[" << i << "," << j << "]";
    }
  for (int64_t blk = 0; blk < n / 16; ++blk)
    for (int64_t q = m * 16; q < stride; ++q) ASSERT_EQ(out[static_cast<size_t>(blk * stride + q)], -7.0f);
}

// A or B read channel-blocked (a conv input in NCHW16c): element (k, j) of
// B at B[(k / 16) * stride + j * 16 + k % 16], likewise A's (i, k). K = 1000
// crosses a K block (two of 512) and ends inside a block of 16; M and N end inside
// micro-tiles and panels.
TEST_P(SgemmIsaTest, ChannelBlockedAOrB) {
  const int64_t m = 29, n = 150, k = 1000;
  const int64_t blocks = (k + 15) / 16;
  const int64_t a_stride = m * 16 + 5, b_stride = n * 16 + 3;
  const std::vector<float> a = test_values(static_cast<size_t>(m * k), 1);  // row-major m x k
  const std::vector<float> b = test_values(static_cast<size_t>(k * n), 2);  // row-major k x n
  std::vector<float> a_blocked(static_cast<size_t>(blocks * a_stride), 1e30f);
  std::vector<float> b_blocked(static_cast<size_t>(blocks * b_stride), 1e30f);  // padding must not be read
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) a_blocked[static_cast<size_t>(p / 16 * a_stride + i * 16 + p % 16)] = a[i * k + p];
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) b_blocked[static_cast<size_t>(p / 16 * b_stride + j * 16 + p % 16)] = b[p * n + j];
  auto check = [&](const std::vector<float>& c, const char* what, int threads) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += static_cast<double>(a[i * k + p]) * b[p * n + j];
        ASSERT_NEAR(c[static_cast<size_t>(i * n + j)], s, 1e-3) << what << " C[" << i << "," << j << "] threads " << threads;
      }
  };
  const PackedMatrix pa = pack_a(false, m, k, a.data(), k);
  const PackedMatrix pb = pack_b(false, k, n, b.data(), n);
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    const GemmPlan plan = plan_sgemm(m, n, k, &pool);
    const GemmPlan packed_b_plan = plan_sgemm(m, n, k, &pool, true);
    Workspace ws(std::max(plan.workspace_bytes, packed_b_plan.workspace_bytes));
    GemmEpilogue eb;
    eb.b_block_stride = b_stride;
    GemmEpilogue ea;
    ea.a_block_stride = a_stride;
    GemmEpilogue both = ea;
    both.b_block_stride = b_stride;
    std::vector<float> c(static_cast<size_t>(m * n), -7.0f);
    sgemm_packed_a(plan, pa, false, m, n, k, 1.0f, b_blocked.data(), 0, 0.0f, c.data(), n, &pool, ws.get(), eb);
    check(c, "blocked B, packed A", threads);
    std::fill(c.begin(), c.end(), -7.0f);
    sgemm_packed_b(packed_b_plan, true, m, n, k, 1.0f, a_blocked.data(), 0, pb, 0.0f, c.data(), n, &pool, ws.get(),
                   ea);
    check(c, "blocked A, packed B", threads);
    std::fill(c.begin(), c.end(), -7.0f);
    sgemm(plan, false, false, m, n, k, 1.0f, a_blocked.data(), 0, b_blocked.data(), 0, 0.0f, c.data(), n, &pool,
          ws.get(), both);
    check(c, "both blocked", threads);
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, SgemmIsaTest, ::testing::Values(GemmIsa::kScalar, GemmIsa::kAvx2, GemmIsa::kAvx512),
                         [](const ::testing::TestParamInfo<GemmIsa>& info) {
                           return std::string(gemm_isa_name(info.param));
                         });

// split_rows_only: every task spans all of C's columns, the calling thread
// computes a leading run of rows and the worker the rest (the rows a conv's
// neighbours in a chain split the same way), and the product is right.
TEST(SgemmTest, SplitRowsOnlyKeepsWholeRowsOnOneThread) {
  const int64_t M = 60, N = 960, K = 160;  // split by columns when free to
  const std::vector<float> a = test_values(static_cast<size_t>(M * K), 1);
  const std::vector<float> b = test_values(static_cast<size_t>(K * N), 2);
  const PackedMatrix pb = pack_b(false, K, N, b.data(), N);
  struct Seen {
    std::mutex mu;
    std::thread::id caller;
    std::vector<int> by_caller;  // per element of C: -1 unseen, 1 caller, 0 worker
  } seen;
  seen.caller = std::this_thread::get_id();
  GemmEpilogue ep;
  ep.split_rows_only = true;
  ep.block_done_context = &seen;
  ep.block_done = [](void* ctx, int64_t row0, int64_t rows, int64_t col0, int64_t cols) {
    auto* s = static_cast<Seen*>(ctx);
    std::lock_guard<std::mutex> lock(s->mu);
    for (int64_t r = row0; r < row0 + rows; ++r)
      for (int64_t j = col0; j < col0 + cols; ++j)
        s->by_caller[static_cast<size_t>(r * 960 + j)] = std::this_thread::get_id() == s->caller ? 1 : 0;
  };
  ThreadPool pool(2);
  const GemmPlan plan = plan_sgemm(M, N, K, &pool, true, ep.split_rows_only);
  Workspace ws(plan.workspace_bytes);
  for (int rep = 0; rep < 20; ++rep) {
    seen.by_caller.assign(static_cast<size_t>(M * N), -1);
    std::vector<float> c(static_cast<size_t>(M * N), -7.0f);
    sgemm_packed_b(plan, false, M, N, K, 1.0f, a.data(), K, pb, 0.0f, c.data(), N, &pool, ws.get(), ep);
    for (int64_t r = 0; r < M; ++r)
      for (int64_t j = 0; j < N; ++j)
        ASSERT_EQ(seen.by_caller[static_cast<size_t>(r * N + j)], seen.by_caller[static_cast<size_t>(r * N)])
            << "row " << r << " split between threads at column " << j;
    int64_t i = 0;
    while (i < M && seen.by_caller[static_cast<size_t>(i * N)] == 1) ++i;
    for (; i < M; ++i) ASSERT_EQ(seen.by_caller[static_cast<size_t>(i * N)], 0) << "row " << i << " rep " << rep;
    for (int64_t r = 0; r < M; r += 37)
      for (int64_t j = 0; j < N; j += 13) {
        double s = 0;
        for (int64_t p = 0; p < K; ++p) s += static_cast<double>(a[r * K + p]) * b[p * N + j];
        ASSERT_NEAR(c[static_cast<size_t>(r * N + j)], s, 1e-3) << "C[" << r << "," << j << "]";
      }
  }
}

// block_done sees every element of C exactly once, after its last update:
// each reported block is copied out at the time of the call and must then
// already hold the final values.
TEST(SgemmTest, BlockDoneReportsEachFinalBlockOnce) {
  const int64_t M = 150, N = 200, K = 1000;  // several row blocks, column panels and K blocks
  const std::vector<float> a = test_values(static_cast<size_t>(M * K), 1);
  const std::vector<float> b = test_values(static_cast<size_t>(K * N), 2);
  const std::vector<float> bias = test_values(static_cast<size_t>(N), 3);
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    std::vector<float> c(static_cast<size_t>(M * N), 0.0f);
    struct Seen {
      const std::vector<float>* c;
      int64_t n;
      std::mutex mutex;
      std::vector<int> count;
      std::vector<float> at_call;
      static void block(void* self, int64_t r0, int64_t rows, int64_t c0, int64_t cols) {
        Seen& s = *static_cast<Seen*>(self);
        std::lock_guard<std::mutex> lock(s.mutex);
        for (int64_t i = r0; i < r0 + rows; ++i)
          for (int64_t j = c0; j < c0 + cols; ++j) {
            ++s.count[static_cast<size_t>(i * s.n + j)];
            s.at_call[static_cast<size_t>(i * s.n + j)] = (*s.c)[static_cast<size_t>(i * s.n + j)];
          }
      }
    } seen;
    seen.c = &c;
    seen.n = N;
    seen.count.assign(c.size(), 0);
    seen.at_call.assign(c.size(), 0.0f);
    GemmEpilogue ep;
    ep.bias = bias.data();
    ep.activation = GemmActivation::kRelu;
    ep.block_done = &Seen::block;
    ep.block_done_context = &seen;
    const GemmPlan plan = plan_sgemm(M, N, K, &pool);
    Workspace ws(plan.workspace_bytes);
    sgemm(plan, false, false, M, N, K, 1.0f, a.data(), K, b.data(), N, 0.0f, c.data(), N, &pool, ws.get(), ep);
    for (size_t i = 0; i < c.size(); ++i) {
      ASSERT_EQ(seen.count[i], 1) << "element " << i << ", " << threads << " threads";
      ASSERT_EQ(seen.at_call[i], c[i]) << "element " << i << " changed after its block was reported";
    }
    // And the product itself is right.
    for (int64_t i = 0; i < M; i += 37)
      for (int64_t j = 0; j < N; j += 23) {
        double s = bias[static_cast<size_t>(j)];
        for (int64_t p = 0; p < K; ++p) s += static_cast<double>(a[static_cast<size_t>(i * K + p)]) * b[static_cast<size_t>(p * N + j)];
        EXPECT_NEAR(c[static_cast<size_t>(i * N + j)], std::max(s, 0.0), 1e-3 * (1.0 + std::fabs(s)));
      }
  }
}

TEST(SgemmTest, WorkspaceGrowsWithThreadsNotWithShape) {
  ThreadPool pool(4);
  EXPECT_EQ(plan_sgemm(0, 10, 10, nullptr).workspace_bytes, 64u);
  const size_t one = plan_sgemm(2048, 2048, 2048, nullptr).workspace_bytes;
  EXPECT_GT(one, 64u);
  EXPECT_LT(one, size_t{4} << 20);  // blocks, not whole matrices
  EXPECT_GT(plan_sgemm(2048, 2048, 2048, &pool).workspace_bytes, one);
}

// The single-threaded bound covers every smaller call's plan, including a
// K whose blocks are deeper than a larger K's (768 deep, against 769's two
// blocks of 400) -- the case a bound taken from the largest shape missed.
TEST(SgemmTest, SingleThreadedBoundCoversSmallerCalls) {
  for (int64_t m : {1, 6, 7, 100, 144, 300})
    for (int64_t n : {1, 17, 64, 65, 1000, 1100})
      for (int64_t k : {1, 16, 768, 769, 1536, 1600}) {
        const size_t bound = sgemm_workspace_bound(m, n, k);
        for (int64_t mm : {int64_t{1}, m / 2 + 1, m})
          for (int64_t nn : {int64_t{1}, n / 2 + 1, n})
            for (int64_t kk : {int64_t{1}, std::min<int64_t>(k, 768), k}) {
              ASSERT_LE(plan_sgemm(mm, nn, kk, nullptr).workspace_bytes, bound)
                  << mm << "x" << nn << "x" << kk << " under the bound of " << m << "x" << n << "x" << k;
              ASSERT_LE(plan_sgemm_one_task(mm, nn, kk).workspace_bytes, bound);
            }
      }
}

// GemmPlans hands back what prepare() planned, and plans anything else on
// the spot, counted as a miss.
TEST(SgemmTest, PlansFoundOrCountedAsMissed) {
  ThreadPool pool(3);
  GemmPlans plans;
  plans.add(300, 200, 100, &pool);
  plans.add(300, 200, 100, &pool);  // once only
  plans.add(300, 200, 100, &pool, true);
  plans.add(300, 200, 100, nullptr);
  EXPECT_EQ(plans.size(), 3u);
  const uint64_t before = gemm_plans_missed();
  const GemmPlan found = plans.get(300, 200, 100, &pool, true);
  EXPECT_TRUE(found.b_prepacked);
  EXPECT_EQ(found.threads, 3);
  EXPECT_EQ(gemm_plans_missed(), before);
  const GemmPlan spot = plans.get(300, 200, 99, &pool);
  EXPECT_EQ(gemm_plans_missed(), before + 1);
  EXPECT_EQ(spot.K, 99);
  EXPECT_EQ(spot.threads, 3);
}

// Each micro-kernel variant's clamp (a fused Relu or Clip) on products
// that are NaN, infinite, -0.0 or denormal: the result is the reference
// std::min(std::max(x, lo), hi), which keeps NaN as a separate Relu does.
// One k step of A = 1 makes each product the B value itself.
TEST(SgemmTest, MicroKernelClampKeepsNaN) {
  using gemm_detail::kMr;
  auto variants = sy::testing::isa_variants<gemm_detail::MicroKernel>(
      &gemm_detail::micro_kernel_scalar, &gemm_detail::micro_kernel_avx2, &gemm_detail::micro_kernel_avx512);
  const int nrs[] = {gemm_detail::kNrScalar, gemm_detail::kNrAvx2, gemm_detail::kNrAvx512};
  for (size_t k = 0; k < variants.size(); ++k) {
    const int nr = nrs[k];
    const std::vector<float> a(kMr, 1.0f);
    std::vector<float> b = sy::testing::test_values(static_cast<size_t>(nr), 3);
    sy::testing::sprinkle_nonfinite(b, 3, 1);
    for (const auto& [lo, hi] : {std::pair{0.0f, std::numeric_limits<float>::infinity()}, std::pair{-0.5f, 0.75f}}) {
      std::vector<float> c(static_cast<size_t>(kMr * nr), 42.0f);
      gemm_detail::MicroTile t{};
      t.a = a.data();
      t.b = b.data();
      t.c = c.data();
      t.ldc = nr;
      t.c_step16 = 16;
      t.kc = 1;
      t.mr = kMr;
      t.nr = nr;
      t.alpha = 1.0f;
      t.clamp = true;
      t.lo = lo;
      t.hi = hi;
      variants[k].fn(t);
      for (int i = 0; i < kMr; ++i)
        for (int j = 0; j < nr; ++j) {
          const float want = std::min(std::max(b[static_cast<size_t>(j)], lo), hi);
          ASSERT_TRUE(sy::testing::same_or_both_nan(c[static_cast<size_t>(i * nr + j)], want))
              << variants[k].name << " [" << lo << ", " << hi << "] at " << i << ", " << j << ": "
              << c[static_cast<size_t>(i * nr + j)] << " want " << want;
        }
    }
  }
}

}  // namespace
}  // namespace sy::cpu
