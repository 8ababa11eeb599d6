// Loading, resolving, optimizing, partitioning and planning are linear in
// the size of the graph (issue 32): ten times the nodes may not take much
// more than ten times as long. A step that is quadratic in a value's
// readers, in the number of graph outputs or in a chain's length takes a
// hundred times as long and fails the bound. The bound is loose (30x, plus
// a second for a loaded machine's noise) so that only such a step fails it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"

namespace sy {
namespace {

using testing::make_tensor;
using testing::ModelBuilder;

// One input read by n Relu nodes, whose n outputs one Concat reads.
std::string fan_out(int n) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1});
  std::vector<std::string> relus;
  for (int i = 0; i < n; ++i) {
    relus.push_back("r" + std::to_string(i));
    b.node("Relu", {"x"}, {relus.back()}, {}, relus.back());
  }
  b.node("Concat", relus, {"y"}, {{"axis", int64_t{0}}}, "concat");
  b.output("y", DataType::kFloat, {n});
  return b.build();
}

// n graph outputs, each a Relu of the one input.
std::string many_outputs(int n) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1});
  for (int i = 0; i < n; ++i) {
    const std::string name = "y" + std::to_string(i);
    b.node("Relu", {"x"}, {name}, {}, name);
    b.output(name, DataType::kFloat, {1});
  }
  return b.build();
}

// x -> Relu -> Relu -> ... n times.
std::string chain(int n) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {1});
  for (int i = 0; i < n; ++i)
    b.node("Relu", {i == 0 ? std::string("x") : "t" + std::to_string(i - 1)}, {"t" + std::to_string(i)}, {},
           "c" + std::to_string(i));
  b.output("t" + std::to_string(n - 1), DataType::kFloat, {1});
  return b.build();
}

// Seconds to load the model, create a session and run it once.
double create_and_run_seconds(const std::string& bytes, OptimizationLevel level) {
  SessionOptions options;
  options.optimization_level = level;
  options.intra_op_threads = 1;
  const auto start = std::chrono::steady_clock::now();
  auto session = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  EXPECT_TRUE(session.ok()) << session.status().to_string();
  if (!session.ok()) return 0.0;
  auto out = (*session)->run({{"x", make_tensor<float>({1}, {-2.0f})}});
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  if (out.ok()) {
    EXPECT_EQ(out->front().data<float>()[0], 0.0f);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void expect_linear(const std::function<std::string(int)>& make, int small, const char* what) {
  const std::string small_model = make(small);
  const std::string large_model = make(small * 10);
  for (OptimizationLevel level : {OptimizationLevel::kDisableAll, OptimizationLevel::kAll}) {
    // The faster of two: the machine may be busy.
    const double t_small = std::min(create_and_run_seconds(small_model, level), create_and_run_seconds(small_model, level));
    const double t_large = create_and_run_seconds(large_model, level);
    EXPECT_LT(t_large, 30.0 * t_small + 1.0)
        << what << " at optimization level " << static_cast<int>(level) << ": " << small << " nodes took " << t_small
        << " s, " << small * 10 << " nodes " << t_large << " s";
  }
}

TEST(GraphScalingTest, FanOutIsLinear) { expect_linear(fan_out, 10000, "one input read by N nodes"); }

TEST(GraphScalingTest, GraphOutputsAreLinear) { expect_linear(many_outputs, 10000, "N graph outputs"); }

TEST(GraphScalingTest, ChainIsLinear) { expect_linear(chain, 20000, "a chain of N nodes"); }

}  // namespace
}  // namespace sy
