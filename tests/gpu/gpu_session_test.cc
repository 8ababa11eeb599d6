// The CUDA provider through the public Session API: IO binding with inputs
// and outputs in device memory, device memory outside a session, and many
// threads running one session at once (each run on its own stream). Every
// result is checked against the same model run by the CPU provider.
//
// Without a usable CUDA device every test reports "skipped: no CUDA device".
// scripts/gpu_check.sh runs this binary on a lent GPU machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"  // make_tensor

namespace sy::testing {
namespace {

constexpr Device kCuda{DeviceType::kCuda, 0};
constexpr int64_t kInner = 96;
constexpr int64_t kCols = 80;

bool has_cuda() {
  const std::vector<std::string> available = available_providers();
  return std::find(available.begin(), available.end(), "CUDAExecutionProvider") != available.end();
}

// Multiples of 1/8 with small magnitudes: products and sums are exact in
// float (TF32 off), so GPU and CPU results must agree to the last bit up to
// summation order, which exact sums do not see.
std::vector<float> eighths(size_t n, int salt) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>((i * 7 + static_cast<size_t>(salt) * 13) % 17) - 8) * 0.125f;
  return v;
}

// y = Relu(x @ w + b); z = Sigmoid(y) * y. Two outputs, one read by the other.
std::string model_bytes() {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"rows", kInner});
  b.initializer("w", make_tensor<float>({kInner, kCols}, eighths(static_cast<size_t>(kInner * kCols), 1)));
  b.initializer("b", make_tensor<float>({kCols}, eighths(static_cast<size_t>(kCols), 2)));
  b.node("MatMul", {"x", "w"}, {"m"});
  b.node("Add", {"m", "b"}, {"a"});
  b.node("Relu", {"a"}, {"y"});
  b.node("Sigmoid", {"y"}, {"s"});
  b.node("Mul", {"s", "y"}, {"z"});
  b.output("y", DataType::kFloat, {"rows", kCols});
  b.output("z", DataType::kFloat, {"rows", kCols});
  return b.build();
}

std::unique_ptr<Session> make_session(bool cuda) {
  SessionOptions options;
  if (cuda) {
    options.providers = {{"cuda", {{"use_tf32", "0"}}}, {"cpu", {}}};
    options.fallback = FallbackPolicy::strict();
  }
  const std::string bytes = model_bytes();
  auto session = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  EXPECT_TRUE(session.ok()) << session.status().to_string();
  return session.ok() ? std::move(session).value() : nullptr;
}

Tensor input(int64_t rows, int salt) {
  return make_tensor<float>({rows, kInner}, eighths(static_cast<size_t>(rows * kInner), salt));
}

// Largest |a - e| over the elements; +inf on a type or shape mismatch or a NaN.
double max_abs_diff(const Tensor& a, const Tensor& e) {
  if (a.dtype() != DataType::kFloat || e.dtype() != DataType::kFloat || a.shape() != e.shape()) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    const double d = std::fabs(double(a.data<float>()[i]) - double(e.data<float>()[i]));
    if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
  }
  return worst;
}

Tensor to_host(const Tensor& t) {
  auto host = Tensor::allocate(t.dtype(), t.shape());
  EXPECT_TRUE(host.ok());
  EXPECT_TRUE(copy_tensor(t, *host).ok());
  return std::move(host).value();
}

// Sigmoid is not exact: allow a few float ulps at the outputs' scale.
constexpr double kTolerance = 1e-5;

TEST(GpuSessionTest, RunsEveryNodeOnCuda) {
  if (!has_cuda()) GTEST_SKIP() << "skipped: no CUDA device";
  auto session = make_session(true);
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->providers(), std::vector<std::string>{"CUDAExecutionProvider"});
}

TEST(GpuSessionTest, IoBindingKeepsInputsAndOutputsOnTheDevice) {
  if (!has_cuda()) GTEST_SKIP() << "skipped: no CUDA device";
  auto gpu = make_session(true);
  auto cpu = make_session(false);
  ASSERT_NE(gpu, nullptr);
  ASSERT_NE(cpu, nullptr);
  const Tensor x = input(37, 3);
  auto want = cpu->run({{"x", x}});
  ASSERT_TRUE(want.ok()) << want.status().to_string();

  auto device_x = gpu->allocate_tensor(DataType::kFloat, x.shape(), kCuda);
  ASSERT_TRUE(device_x.ok()) << device_x.status().to_string();
  ASSERT_TRUE(gpu->copy_tensor(x, *device_x).ok());
  IoBinding binding;
  ASSERT_TRUE(binding.bind_input("x", *device_x).ok());
  ASSERT_TRUE(binding.bind_output("y", kCuda).ok());
  ASSERT_TRUE(binding.bind_output("z", kCuda).ok());
  for (int run = 0; run < 3; ++run) {
    Status st = gpu->run_with_binding(binding);
    ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_EQ(binding.outputs().size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(binding.outputs()[k].device(), kCuda);
      EXPECT_LE(max_abs_diff(to_host(binding.outputs()[k]), (*want)[k]), kTolerance) << "output " << k << " run " << run;
    }
  }
}

TEST(GpuSessionTest, PreallocatedDeviceOutputIsWrittenInPlace) {
  if (!has_cuda()) GTEST_SKIP() << "skipped: no CUDA device";
  auto gpu = make_session(true);
  auto cpu = make_session(false);
  ASSERT_NE(gpu, nullptr);
  const Tensor x = input(16, 5);
  auto want = cpu->run({{"x", x}}, {"z"});
  ASSERT_TRUE(want.ok());
  auto z = gpu->allocate_tensor(DataType::kFloat, Shape{16, kCols}, kCuda);
  ASSERT_TRUE(z.ok());
  IoBinding binding;
  ASSERT_TRUE(binding.bind_input("x", x).ok());  // a host input: the session copies it
  ASSERT_TRUE(binding.bind_output("z", *z).ok());
  ASSERT_TRUE(gpu->run_with_binding(binding).ok());
  ASSERT_EQ(binding.outputs().size(), 1u);
  EXPECT_EQ(binding.outputs()[0].raw_data(), z->raw_data());
  EXPECT_LE(max_abs_diff(to_host(*z), (*want)[0]), kTolerance);
}

TEST(GpuSessionTest, WrongShapePreallocatedOutputIsAnError) {
  if (!has_cuda()) GTEST_SKIP() << "skipped: no CUDA device";
  auto gpu = make_session(true);
  ASSERT_NE(gpu, nullptr);
  auto z = gpu->allocate_tensor(DataType::kFloat, Shape{3, kCols}, kCuda);
  ASSERT_TRUE(z.ok());
  IoBinding binding;
  ASSERT_TRUE(binding.bind_input("x", input(16, 1)).ok());
  ASSERT_TRUE(binding.bind_output("z", *z).ok());
  const Status st = gpu->run_with_binding(binding);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'z'"), std::string::npos) << st.message();
}

TEST(GpuSessionTest, DeviceTensorOutsideASessionRoundTrips) {
  if (!has_cuda()) GTEST_SKIP() << "skipped: no CUDA device";
  const Tensor x = input(9, 7);
  auto d = allocate_device_tensor(DataType::kFloat, x.shape(), kCuda);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  ASSERT_TRUE(copy_tensor(x, *d).ok());
  EXPECT_EQ(max_abs_diff(to_host(*d), x), 0.0);
}

// Many threads on one session: each run has its own frame and stream, and
// each thread feeds its own values, so a result computed from another
// thread's input, or read before its stream finished, shows.
TEST(GpuSessionTest, ConcurrentRunsOnOneSessionMatchTheCpu) {
  if (!has_cuda()) GTEST_SKIP() << "skipped: no CUDA device";
  auto gpu = make_session(true);
  auto cpu = make_session(false);
  ASSERT_NE(gpu, nullptr);
  constexpr int kThreads = 8;
  constexpr int kRuns = 25;
  std::vector<std::vector<Tensor>> want(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    auto r = cpu->run({{"x", input(64 + t, t)}});
    ASSERT_TRUE(r.ok());
    want[static_cast<size_t>(t)] = std::move(r).value();
  }
  std::atomic<int> bad{0};
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Tensor x = input(64 + t, t);
      for (int r = 0; r < kRuns; ++r) {
        auto out = gpu->run({{"x", x}});
        if (!out.ok()) {
          errors[static_cast<size_t>(t)] = out.status().to_string();
          ++bad;
          return;
        }
        for (size_t k = 0; k < 2; ++k)
          if (max_abs_diff((*out)[k], want[static_cast<size_t>(t)][k]) > kTolerance) {
            errors[static_cast<size_t>(t)] = "run " + std::to_string(r) + " output " + std::to_string(k) + " differs";
            ++bad;
            return;
          }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string& e : errors) EXPECT_TRUE(e.empty()) << e;
  EXPECT_EQ(bad.load(), 0);
}

// The same with IO binding: one binding per thread, outputs on the device.
TEST(GpuSessionTest, ConcurrentIoBindingRuns) {
  if (!has_cuda()) GTEST_SKIP() << "skipped: no CUDA device";
  auto gpu = make_session(true);
  auto cpu = make_session(false);
  ASSERT_NE(gpu, nullptr);
  constexpr int kThreads = 4;
  constexpr int kRuns = 20;
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Tensor x = input(40 + t, 10 + t);
      auto want = cpu->run({{"x", x}}, {"y"});
      auto dx = gpu->allocate_tensor(DataType::kFloat, x.shape(), kCuda);
      if (!want.ok() || !dx.ok() || !gpu->copy_tensor(x, *dx).ok()) {
        ++bad;
        return;
      }
      IoBinding binding;
      ASSERT_TRUE(binding.bind_input("x", *dx).ok());
      ASSERT_TRUE(binding.bind_output("y", kCuda).ok());
      for (int r = 0; r < kRuns; ++r) {
        if (!gpu->run_with_binding(binding).ok() || max_abs_diff(to_host(binding.outputs()[0]), (*want)[0]) > kTolerance) {
          ++bad;
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

// x [2, 16, 8, 8] -> Conv 3x3 -> Add(x) -> Relu -> y and
// y -> Conv 1x1 -> Clip(0, 0.5) -> u: the optimizer makes two FusedConvs,
// one with a residual and Relu, one with Clip.
std::string conv_block_bytes() {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 16, 8, 8});
  b.initializer("w1", make_tensor<float>({16, 16, 3, 3}, eighths(16 * 16 * 9, 4)));
  b.initializer("b1", make_tensor<float>({16}, eighths(16, 5)));
  b.initializer("w2", make_tensor<float>({8, 16, 1, 1}, eighths(8 * 16, 6)));
  b.initializer("lo", make_tensor<float>({}, {0.0f}));
  b.initializer("hi", make_tensor<float>({}, {0.5f}));
  b.node("Conv", {"x", "w1", "b1"}, {"c1"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  b.node("Add", {"c1", "x"}, {"s"});
  b.node("Relu", {"s"}, {"y"});
  b.node("Conv", {"y", "w2"}, {"c2"});
  b.node("Clip", {"c2", "lo", "hi"}, {"u"});
  b.output("y", DataType::kFloat, {2, 16, 8, 8});
  b.output("u", DataType::kFloat, {2, 8, 8, 8});
  return b.build();
}

TEST(GpuSessionTest, FusedConvRunsOnCudaAndMatchesTheCpu) {
  if (!has_cuda()) GTEST_SKIP() << "skipped: no CUDA device";
  const std::string bytes = conv_block_bytes();
  SessionOptions options;
  options.providers = {{"cuda", {{"use_tf32", "0"}}}, {"cpu", {}}};
  options.fallback = FallbackPolicy::strict();
  auto gpu = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
  int fused = 0;
  for (const NodeAssignment& a : (*gpu)->assignment()) {
    EXPECT_EQ(a.provider, "CUDAExecutionProvider") << a.node_name << " " << a.op_type;
    fused += a.op_type == "FusedConv" ? 1 : 0;
  }
  EXPECT_EQ(fused, 2) << (*gpu)->assignment_report();
  auto cpu = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
  const Tensor x = make_tensor<float>({2, 16, 8, 8}, eighths(2 * 16 * 64, 7));
  auto got = (*gpu)->run({{"x", x}});
  auto want = (*cpu)->run({{"x", x}});
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  for (size_t k = 0; k < 2; ++k) EXPECT_LE(max_abs_diff((*got)[k], (*want)[k]), kTolerance) << "output " << k;
}

TEST(GpuSessionTest, AChannelBlockedFusedConvStaysOnTheCpuWithItsReason) {
  if (!has_cuda()) GTEST_SKIP() << "skipped: no CUDA device";
  // What the CPU-only optimizer writes for a 1x1 -> 1x1 pair: the first
  // hands its Y over in NCHW16c, which cuDNN cannot read.
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1, 16, 6, 6});
  b.initializer("w1", make_tensor<float>({16, 16, 1, 1}, eighths(256, 8)));
  b.initializer("w2", make_tensor<float>({16, 16, 1, 1}, eighths(256, 9)));
  b.opset_import("com.switchyard", 1);
  b.domain_node("com.switchyard", "FusedConv", {"x", "w1"}, {"h"}, {{"output_layout", "NCHW16c"}}, "first");
  b.domain_node("com.switchyard", "FusedConv", {"h", "w2"}, {"y"}, {{"input_layout", "NCHW16c"}}, "second");
  b.output("y", DataType::kFloat, {1, 16, 6, 6});
  const std::string bytes = b.build();
  SessionOptions options;
  options.optimization_level = OptimizationLevel::kDisableAll;
  options.providers = {{"cuda", {{"use_tf32", "0"}}}, {"cpu", {}}};
  options.fallback.node_fallthrough = FallbackAction::kAllow;
  auto gpu = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
  ASSERT_EQ((*gpu)->assignment().size(), 2u) << (*gpu)->assignment_report();
  for (const NodeAssignment& a : (*gpu)->assignment()) {
    EXPECT_EQ(a.provider, "CPUExecutionProvider") << a.node_name;
    ASSERT_EQ(a.declined.size(), 1u) << a.node_name;
    EXPECT_EQ(a.declined[0].provider, "CUDAExecutionProvider");
    EXPECT_NE(a.declined[0].reason.find("NCHW16c (the CUDA Conv takes NCHW only)"), std::string::npos)
        << a.declined[0].reason;
  }
  options.providers = {};
  auto cpu = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
  const Tensor x = make_tensor<float>({1, 16, 6, 6}, eighths(16 * 36, 10));
  auto got = (*gpu)->run({{"x", x}});
  auto want = (*cpu)->run({{"x", x}});
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  EXPECT_EQ(max_abs_diff((*got)[0], (*want)[0]), 0.0);
}

}  // namespace
}  // namespace sy::testing
