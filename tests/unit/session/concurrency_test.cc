// One Session, many threads: every run gets its own frame, and results
// never leak between runs. Each thread feeds different values, so a result
// computed from another thread's input is caught.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"
#include "unit/partition/test_provider.h"

namespace sy::testing {
namespace {

constexpr int64_t kInner = 64;
constexpr int64_t kCols = 64;
// Big enough that MatMul and the elementwise kernels split their work
// across the intra-op pool (elementwise splits above 32768 elements).
constexpr int64_t kLargeRows = 520;
constexpr int kThreads = 8;
constexpr int kRunsPerThread = 50;

std::vector<float> weights() {
  std::vector<float> w(static_cast<size_t>(kInner * kCols));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 11) - 5) * 0.125f;
  return w;
}

std::vector<float> bias() {
  std::vector<float> b(static_cast<size_t>(kCols));
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 3) - 1.0f;
  return b;
}

// y = Relu(x @ w + b); z = y * y. Two outputs, one computed from the other,
// so a result overwritten by a later step or another run shows.
ModelBuilder model() {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"rows", kInner});
  b.initializer("w", make_tensor<float>({kInner, kCols}, weights()));
  b.initializer("b", make_tensor<float>({kCols}, bias()));
  b.node("MatMul", {"x", "w"}, {"m"}, {}, "matmul");
  b.node("Add", {"m", "b"}, {"a"}, {}, "add");
  b.node("Relu", {"a"}, {"y"}, {}, "relu");
  b.node("Mul", {"y", "y"}, {"z"}, {}, "square");
  b.output("y", DataType::kFloat, {"rows", kCols});
  b.output("z", DataType::kFloat, {"rows", kCols});
  return b;
}

// Inputs are small integers times 1/8 and the weights are multiples of
// 1/8, so every product and sum is exact in float and any summation order
// gives the same bits.
std::vector<float> input_for(int thread, int run, int64_t rows) {
  std::vector<float> x(static_cast<size_t>(rows * kInner));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(static_cast<int>((i * 7 + static_cast<size_t>(thread * 13 + run * 3)) % 9) - 4) * 0.125f;
  return x;
}

void reference(const std::vector<float>& x, int64_t rows, std::vector<float>& y, std::vector<float>& z) {
  const std::vector<float> w = weights();
  const std::vector<float> b = bias();
  y.assign(static_cast<size_t>(rows * kCols), 0.0f);
  z.assign(y.size(), 0.0f);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < kCols; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < kInner; ++k)
        acc += static_cast<double>(x[static_cast<size_t>(i * kInner + k)]) * w[static_cast<size_t>(k * kCols + j)];
      const float a = static_cast<float>(acc) + b[static_cast<size_t>(j)];
      const float r = a > 0 ? a : 0.0f;
      y[static_cast<size_t>(i * kCols + j)] = r;
      z[static_cast<size_t>(i * kCols + j)] = r * r;
    }
}

struct Config {
  int intra_op_threads;
  bool test_provider;
};

class ConcurrencyTest : public ::testing::TestWithParam<Config> {};

TEST_P(ConcurrencyTest, EightThreadsFiftyRunsEach) {
  const Config config = GetParam();
  SessionOptions o;
  o.intra_op_threads = config.intra_op_threads;
  if (config.test_provider) {
    register_test_provider();
    o.providers = {{"test", {}}};
  }
  const std::string bytes = model().build();
  auto created = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  const Session& session = **created;
  if (config.test_provider) {
    ASSERT_EQ(session.providers(), (std::vector<std::string>{"TestExecutionProvider"}));
  }

  std::atomic<int> failures{0};
  std::atomic<int> checked{0};
  std::vector<std::string> first_error(kThreads);
  auto worker = [&](int t) {
    std::vector<float> ey, ez;
    for (int run = 0; run < kRunsPerThread; ++run) {
      // Shapes differ between threads and runs, so frames see growth too;
      // every fifth run is large enough to use the intra-op pool.
      const int64_t rows = run % 5 == 0 ? kLargeRows + t : 1 + (t + run) % 16;
      const std::vector<float> xv = input_for(t, run, rows);
      reference(xv, rows, ey, ez);
      auto r = session.run({{"x", make_tensor<float>({rows, kInner}, xv)}});
      std::string error;
      if (!r.ok()) {
        error = r.status().to_string();
      } else if (r->size() != 2 || (*r)[0].shape() != Shape{rows, kCols} || (*r)[1].shape() != Shape{rows, kCols}) {
        error = "wrong outputs";
      } else {
        for (size_t i = 0; i < ey.size() && error.empty(); ++i) {
          if ((*r)[0].data<float>()[i] != ey[i])
            error = "y[" + std::to_string(i) + "] = " + std::to_string((*r)[0].data<float>()[i]) + ", expected " +
                    std::to_string(ey[i]);
          else if ((*r)[1].data<float>()[i] != ez[i])
            error = "z[" + std::to_string(i) + "] = " + std::to_string((*r)[1].data<float>()[i]) + ", expected " +
                    std::to_string(ez[i]);
        }
      }
      if (!error.empty()) {
        if (failures.fetch_add(1) == 0 || first_error[static_cast<size_t>(t)].empty())
          first_error[static_cast<size_t>(t)] = "thread " + std::to_string(t) + " run " + std::to_string(run) + ": " + error;
      } else {
        checked.fetch_add(1);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (std::thread& th : threads) th.join();

  for (const std::string& e : first_error) EXPECT_TRUE(e.empty()) << e;
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(checked.load(), kThreads * kRunsPerThread);
  if (config.test_provider) {
    auto* tp = TestProvider::last_created();
    ASSERT_NE(tp, nullptr);
    EXPECT_EQ(tp->kernel_runs(), int64_t{kThreads} * kRunsPerThread * 4);
    EXPECT_EQ(tp->copies_to_host(), int64_t{kThreads} * kRunsPerThread * 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, ConcurrencyTest,
                         ::testing::Values(Config{1, false}, Config{2, false}, Config{1, true}, Config{2, true}),
                         [](const ::testing::TestParamInfo<Config>& info) {
                           return "intra" + std::to_string(info.param.intra_op_threads) +
                                  (info.param.test_provider ? "_test_provider" : "_cpu");
                         });

}  // namespace
}  // namespace sy::testing
