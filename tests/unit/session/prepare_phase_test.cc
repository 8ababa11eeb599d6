// The kernels' prepare phase (providers/kernel.h): a step's kernel plans
// for its input shapes once per frame, and again only when they change;
// the GEMM kernels then find every product planned (gemm_plans_missed()
// stays put), and the results are the same as computed by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "providers/cpu/gemm/sgemm.h"
#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"
#include "unit/partition/test_provider.h"

namespace sy::testing {
namespace {

constexpr int64_t kInner = 24;
constexpr int64_t kCols = 40;

std::vector<float> weights() {
  std::vector<float> w(static_cast<size_t>(kInner * kCols));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.25f;
  return w;
}

std::vector<float> input(int64_t rows, int seed) {
  std::vector<float> x(static_cast<size_t>(rows * kInner));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>((i * 5 + seed) % 9) - 4) * 0.5f;
  return x;
}

// x @ w in double: the values are multiples of 1/8, so float sums are exact.
std::vector<float> reference(const std::vector<float>& x, int64_t rows) {
  const std::vector<float> w = weights();
  std::vector<float> y(static_cast<size_t>(rows * kCols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < kCols; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < kInner; ++k)
        acc += static_cast<double>(x[static_cast<size_t>(i * kInner + k)]) * w[static_cast<size_t>(k * kCols + j)];
      y[static_cast<size_t>(i * kCols + j)] = static_cast<float>(acc);
    }
  return y;
}

// y = x @ w (w constant, so prepacked), and g = Gemm(x, w) with alpha 2.
std::string model() {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"rows", kInner});
  b.initializer("w", make_tensor<float>({kInner, kCols}, weights()));
  b.node("MatMul", {"x", "w"}, {"y"}, {}, "matmul");
  b.node("Gemm", {"x", "w"}, {"g"}, {{"alpha", 2.0f}}, "gemm");
  b.output("y", DataType::kFloat, {"rows", kCols});
  b.output("g", DataType::kFloat, {"rows", kCols});
  return b.build();
}

void run_and_check(const Session& session, int64_t rows, int seed) {
  const std::vector<float> x = input(rows, seed);
  auto r = session.run({{"x", make_tensor<float>({rows, kInner}, x)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const std::vector<float> want = reference(x, rows);
  ASSERT_EQ((*r)[0].shape(), (Shape{rows, kCols}));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ((*r)[0].data<float>()[i], want[i]) << "y[" << i << "] for " << rows << " rows";
    ASSERT_EQ((*r)[1].data<float>()[i], 2.0f * want[i]) << "g[" << i << "] for " << rows << " rows";
  }
}

TEST(PreparePhaseTest, PreparesOncePerShapeChange) {
  register_test_provider();
  SessionOptions o;
  o.providers = {{"test", {{"ops", "MatMul,Gemm"}}}};
  const std::string bytes = model();
  auto created = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  TestProvider* tp = TestProvider::last_created();
  ASSERT_NE(tp, nullptr);
  const uint64_t missed = cpu::gemm_plans_missed();
  // Two kernels that prepare: each prepares on the first run and on every
  // change of rows, never on a run with the shapes of the one before.
  const int64_t rows[] = {3, 3, 3, 200, 200, 3, 1};
  const int64_t expected_prepares[] = {2, 2, 2, 4, 4, 6, 8};
  for (size_t i = 0; i < std::size(rows); ++i) {
    run_and_check(**created, rows[i], static_cast<int>(i));
    EXPECT_EQ(tp->kernel_prepares(), expected_prepares[i]) << "after run " << i << " (" << rows[i] << " rows)";
  }
  EXPECT_EQ(tp->kernel_runs(), 2 * static_cast<int64_t>(std::size(rows)));
  EXPECT_EQ(cpu::gemm_plans_missed(), missed) << "a GEMM was planned on the hot path";
}

TEST(PreparePhaseTest, CpuKernelsFindTheirPlansAtEveryThreadCount) {
  for (int threads : {1, 2, 3}) {
    SessionOptions o;
    o.intra_op_threads = threads;
    const std::string bytes = model();
    auto created = Session::create_from_bytes(bytes.data(), bytes.size(), o);
    ASSERT_TRUE(created.ok()) << created.status().to_string();
    const uint64_t missed = cpu::gemm_plans_missed();
    for (int64_t rows : {1, 7, 300, 7})
      run_and_check(**created, rows, static_cast<int>(rows) + threads);
    EXPECT_EQ(cpu::gemm_plans_missed(), missed) << threads << " threads";
  }
}

}  // namespace
}  // namespace sy::testing
