// OpTest: the single-node harness. One op test (an op, its inputs and
// attributes, and a reference) runs through a real Session once per
// provider configuration, and every run is compared with the reference
// under the tolerance of the op's class.
//
// Provider configurations (provider_configs()):
//   cpu_portable, cpu_avx2, cpu_avx512  the CPU provider with its kernels
//       dispatching to that ISA variant. The variant is picked once per
//       process (best_cpu_isa(), capped by SWITCHYARD_MAX_ISA), so a
//       configuration below this process's ISA reruns the test in a child
//       process of the test binary with SWITCHYARD_MAX_ISA set. Skipped
//       where the CPU lacks the variant.
//   test  the simulated device (tests/unit/partition/test_provider.h),
//       "test" with ops=<the op>, then cpu: inputs are copied to the device
//       and back, so it checks the copies around the CPU kernel too.
//   cuda  "cuda,cpu"; skipped where available_providers() has no CUDA.
// A device configuration must really run the node: the session's
// assignment is checked, and a node that fell through to the CPU is
// reported as "not claimed" (a skip naming the provider's reason), never
// counted as a pass.
//
// Adding an op test:
//   1. Write the reference in tests/reference/<family>.cc, the family being
//      the src/schema/<family>.cc that declares the op, and declare it in
//      tests/reference/reference.h. Double precision, plain loops, straight
//      from the spec; never call the kernels under test.
//   2. Add a case to harness_cases() in tests/unit/harness/op_harness_test.cc:
//        OpTest("Softmax", 13, "rows_tail")
//            .input(float_values({3, 37}, /*seed=*/1))
//            .attr({"axis", -1})
//            .op_class(OpClass::kAccumulating)
//            .reference(reference::softmax);
//      Use odd sizes, so the vector tails of every ISA variant run.
//   ctest then lists OpHarness/OpHarnessTest.Run/Softmax_rows_tail_<config>
//   for each configuration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "reference/reference.h"
#include "switchyard/tensor.h"
#include "testing/model_builder.h"

namespace sy::testing {

// How closely an output must match the reference; tolerance_for() below
// is the one table of figures.
enum class OpClass {
  kExact,           // data movement, selection, Relu, Max: the same bits
  kFloatArith,      // one correctly rounded operation per element: Add, Div
  kTranscendental,  // exp, tanh, erf, sigmoid: polynomial approximations
  kAccumulating,    // long sums: MatMul, Gemm, Conv, reductions, Softmax, norms
};

struct Tolerance {
  double rtol;
  double atol;
};
Tolerance tolerance_for(OpClass op_class);
const char* op_class_name(OpClass op_class);

enum class ProviderKind { kCpu, kSimulatedDevice, kCuda };

struct ProviderConfig {
  std::string name;  // part of the gtest name: cpu_avx2, test, cuda
  ProviderKind kind;
  CpuIsa isa;  // for kCpu: the ISA variant the kernels must dispatch to
};

// Every configuration the harness knows, present here or not.
const std::vector<ProviderConfig>& provider_configs();
// Empty when `config` can run on this machine; otherwise why not.
std::string config_missing_reason(const ProviderConfig& config);

// Deterministic float inputs: multiples of 1/500 in [-2, 2] (test_values),
// or uniform in [lo, hi).
Tensor float_values(const Shape& shape, uint32_t seed);
Tensor float_values(const Shape& shape, uint32_t seed, float lo, float hi);

class OpTest {
 public:
  // `variant` tells this case from the op's other cases: [A-Za-z0-9_].
  OpTest(std::string op, int opset, std::string variant, std::string domain = "");

  // A runtime input: a graph input, fed at run time.
  OpTest& input(Tensor t);
  // A constant input: an initializer, which kernels may prepack.
  OpTest& constant_input(Tensor t);
  // An omitted optional input.
  OpTest& missing_input();
  OpTest& attr(AttrSpec a);
  OpTest& op_class(OpClass c);
  // Where the expected outputs come from: a reference kernel, or the
  // outputs themselves.
  OpTest& reference(reference::ReferenceFn fn);
  OpTest& expected(std::vector<Tensor> outputs);

  // "<op>_<variant>".
  std::string name() const { return op_ + "_" + variant_; }
  const std::string& op() const { return op_; }
  // The expected outputs (the reference's, computed on each call).
  std::vector<Tensor> expected_outputs() const;

  // Runs the case on `config` inside the current gtest test: failures are
  // gtest failures, an absent or unclaiming provider a GTEST_SKIP.
  void run_on(const ProviderConfig& config) const;

 private:
  struct Input {
    Tensor value;  // undefined: an omitted optional input
    bool constant = false;
  };
  enum class Outcome { kRan, kProviderAbsent, kNotClaimed };
  std::string model_bytes(const std::vector<Tensor>& expected) const;
  // run_on's checks; GTEST_SKIP and ASSERT_* return from here.
  void check_on(const ProviderConfig& config, Outcome& outcome) const;
  void rerun_in_child(const ProviderConfig& config, Outcome& outcome) const;

  std::string op_;
  int opset_;
  std::string variant_;
  std::string domain_;
  std::vector<Input> inputs_;
  std::vector<AttrSpec> attrs_;
  OpClass op_class_ = OpClass::kExact;
  reference::ReferenceFn reference_ = nullptr;
  std::vector<Tensor> expected_;
};

// What the runs in this process came to; the harness prints it when the
// test program ends.
struct HarnessTally {
  int passed = 0;
  int failed = 0;
  int skipped_absent = 0;  // provider not present on this machine
  int not_claimed = 0;     // provider present, node fell through
};
HarnessTally& harness_tally();

}  // namespace sy::testing
