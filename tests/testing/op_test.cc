#include "testing/op_test.h"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/environment.h"
#include "switchyard/session.h"
#include "testing/node_test.h"
#include "testing/test_values.h"
#include "unit/partition/test_provider.h"

extern char** environ;

namespace sy::testing {
namespace {

// Set in the child process a CPU configuration reruns itself in, so that a
// cap that did not take is a failure rather than another child.
constexpr const char* kChildVariable = "SY_OP_TEST_CHILD";

std::vector<ProviderRequest> providers_for(const OpTest& test, const ProviderConfig& config) {
  switch (config.kind) {
    case ProviderKind::kSimulatedDevice: return {{"test", {{"ops", test.op()}}}, {"cpu", {}}};
    case ProviderKind::kCuda: return {{"cuda", {}}, {"cpu", {}}};
    case ProviderKind::kCpu: break;
  }
  return {{"cpu", {}}};
}

const char* provider_long_name(ProviderKind kind) {
  switch (kind) {
    case ProviderKind::kSimulatedDevice: return TestProvider::kName;
    case ProviderKind::kCuda: return "CUDAExecutionProvider";
    case ProviderKind::kCpu: break;
  }
  return "CPUExecutionProvider";
}

// The node's assignment line, or nullptr.
const NodeAssignment* find_assignment(const Session& session) {
  for (const NodeAssignment& a : session.assignment())
    if (a.node_name == "node") return &a;
  return nullptr;
}

std::string declines_of(const NodeAssignment& a) {
  std::string out;
  for (const ProviderDecline& d : a.declined) out += (out.empty() ? "" : "; ") + d.provider + ": " + d.reason;
  return out.empty() ? "no reason given" : out;
}

struct ChildRun {
  bool exited_zero = false;
  std::string output;
};

// This test binary run again on one test, its stdout and stderr captured,
// with `extra_env` added and every GTEST_* variable left out (a sharded or
// XML-writing parent must not make the child skip the test or overwrite
// the parent's report).
ChildRun run_this_binary(const std::string& gtest_filter, const std::vector<std::string>& extra_env) {
  ChildRun run;
  char exe[4096] = {};
  const ssize_t len = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) {
    run.output = "cannot read /proc/self/exe";
    return run;
  }
  std::vector<std::string> env_strings = extra_env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("GTEST_", 0) == 0) continue;
    bool overridden = false;
    for (const std::string& x : extra_env)
      if (entry.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0) overridden = true;
    if (!overridden) env_strings.push_back(entry);
  }
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string filter_arg = "--gtest_filter=" + gtest_filter;
  std::string color_arg = "--gtest_color=no";
  char* argv[] = {exe, filter_arg.data(), color_arg.data(), nullptr};

  int fds[2];
  if (::pipe(fds) != 0) {
    run.output = "pipe() failed";
    return run;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, exe, &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    run.output = std::string("posix_spawn failed: ") + std::strerror(spawned);
    return run;
  }
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    run.output.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  run.exited_zero = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return run;
}

}  // namespace

Tolerance tolerance_for(OpClass op_class) {
  // Figures for float32 outputs against a double reference. kFloatArith:
  // a few ulp (2^-24 ~ 6e-8) for FMA contraction and reassociated
  // broadcasts. kTranscendental: the vector exp/tanh/erf polynomials are
  // good to ~1e-6 relative. kAccumulating: sums of up to a few hundred
  // terms in float, blocked in whatever order the kernel likes.
  switch (op_class) {
    case OpClass::kExact: return {0.0, 0.0};
    case OpClass::kFloatArith: return {1e-6, 1e-7};
    case OpClass::kTranscendental: return {1e-5, 1e-6};
    case OpClass::kAccumulating: return {1e-4, 1e-5};
  }
  return {0.0, 0.0};
}

const char* op_class_name(OpClass op_class) {
  switch (op_class) {
    case OpClass::kExact: return "exact";
    case OpClass::kFloatArith: return "float arithmetic";
    case OpClass::kTranscendental: return "transcendental";
    case OpClass::kAccumulating: return "accumulating";
  }
  return "?";
}

const std::vector<ProviderConfig>& provider_configs() {
  static const std::vector<ProviderConfig> configs = {
      {"cpu_portable", ProviderKind::kCpu, CpuIsa::kBaseline},
      {"cpu_avx2", ProviderKind::kCpu, CpuIsa::kAvx2},
      {"cpu_avx512", ProviderKind::kCpu, CpuIsa::kAvx512},
      {"test", ProviderKind::kSimulatedDevice, CpuIsa::kBaseline},
      {"cuda", ProviderKind::kCuda, CpuIsa::kBaseline},
  };
  return configs;
}

std::string config_missing_reason(const ProviderConfig& config) {
  switch (config.kind) {
    case ProviderKind::kCpu:
      if (!cpu_supports(config.isa)) return std::string("this CPU has no ") + cpu_isa_name(config.isa);
      return {};
    case ProviderKind::kSimulatedDevice: return {};
    case ProviderKind::kCuda: {
      const std::vector<std::string> available = available_providers();
      if (std::find(available.begin(), available.end(), "CUDAExecutionProvider") == available.end())
        return "CUDAExecutionProvider is not available here";
      return {};
    }
  }
  return "unknown configuration";
}

Tensor float_values(const Shape& shape, uint32_t seed) {
  return make_tensor<float>(shape, test_values(static_cast<size_t>(shape.num_elements()), seed));
}

Tensor float_values(const Shape& shape, uint32_t seed, float lo, float hi) {
  return make_tensor<float>(shape, random_floats(static_cast<size_t>(shape.num_elements()), lo, hi, seed));
}

OpTest::OpTest(std::string op, int opset, std::string variant, std::string domain)
    : op_(std::move(op)), opset_(opset), variant_(std::move(variant)), domain_(std::move(domain)) {}

OpTest& OpTest::input(Tensor t) {
  inputs_.push_back({std::move(t), false});
  return *this;
}

OpTest& OpTest::constant_input(Tensor t) {
  inputs_.push_back({std::move(t), true});
  return *this;
}

OpTest& OpTest::missing_input() {
  inputs_.push_back({Tensor(), false});
  return *this;
}

OpTest& OpTest::attr(AttrSpec a) {
  attrs_.push_back(std::move(a));
  return *this;
}

OpTest& OpTest::op_class(OpClass c) {
  op_class_ = c;
  return *this;
}

OpTest& OpTest::reference(reference::ReferenceFn fn) {
  reference_ = fn;
  return *this;
}

OpTest& OpTest::expected(std::vector<Tensor> outputs) {
  expected_ = std::move(outputs);
  return *this;
}

std::vector<Tensor> OpTest::expected_outputs() const {
  if (reference_ == nullptr) return expected_;
  std::vector<Tensor> values;
  for (const Input& in : inputs_) values.push_back(in.value);
  return reference_(values, attrs_);
}

std::string OpTest::model_bytes(const std::vector<Tensor>& expected) const {
  ModelBuilder b(domain_.empty() ? opset_ : 17);
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Input& in = inputs_[i];
    const std::string name = "in" + std::to_string(i);
    if (!in.value.defined()) {
      names.push_back("");
      continue;
    }
    names.push_back(name);
    if (in.constant) {
      b.initializer(name, in.value);
    } else {
      std::vector<DimSpec> dims;
      for (int64_t d : in.value.shape()) dims.emplace_back(d);
      b.input(name, in.value.dtype(), dims);
    }
  }
  std::vector<std::string> outputs;
  for (size_t i = 0; i < expected.size(); ++i) {
    outputs.push_back("out" + std::to_string(i));
    // No declared shape: a kernel's wrong shape then shows in the comparison.
    b.output_without_shape(outputs.back(), expected[i].dtype());
  }
  if (domain_.empty()) {
    b.node(op_, names, outputs, attrs_, "node");
  } else {
    b.opset_import(domain_, opset_);
    b.domain_node(domain_, op_, names, outputs, attrs_, "node");
  }
  return b.build();
}

void OpTest::run_on(const ProviderConfig& config) const {
  Outcome outcome = Outcome::kRan;
  check_on(config, outcome);
  HarnessTally& tally = harness_tally();
  if (::testing::Test::HasFailure()) {
    ++tally.failed;
  } else if (outcome == Outcome::kProviderAbsent) {
    ++tally.skipped_absent;
  } else if (outcome == Outcome::kNotClaimed) {
    ++tally.not_claimed;
  } else {
    ++tally.passed;
  }
}

void OpTest::check_on(const ProviderConfig& config, Outcome& outcome) const {
  const std::string missing = config_missing_reason(config);
  if (!missing.empty()) {
    outcome = Outcome::kProviderAbsent;
    GTEST_SKIP() << "provider not present: " << missing;
  }
  if (config.kind == ProviderKind::kCpu && config.isa != best_cpu_isa()) {
    rerun_in_child(config, outcome);
    return;
  }
  const std::vector<Tensor> expected = expected_outputs();
  ASSERT_FALSE(expected.empty()) << name() << ": neither a reference nor expected outputs";

  register_test_provider();
  SessionOptions options;
  options.providers = providers_for(*this, config);
  options.intra_op_threads = 1;
  // The op's kernel is under test, not the optimizer's rewrites of it.
  options.optimization_level = OptimizationLevel::kDisableAll;
  options.fallback.unavailable_provider = FallbackAction::kAllow;
  options.fallback.node_fallthrough = FallbackAction::kAllow;
  const std::string bytes = model_bytes(expected);
  auto session = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  ASSERT_TRUE(session.ok()) << session.status().to_string();

  const NodeAssignment* assigned = find_assignment(**session);
  ASSERT_NE(assigned, nullptr) << (*session)->assignment_report();
  const std::string wanted = provider_long_name(config.kind);
  if (assigned->provider != wanted) {
    ASSERT_TRUE(config.kind != ProviderKind::kCpu) << "the node ran on " << assigned->provider << ", not the CPU";
    outcome = Outcome::kNotClaimed;
    GTEST_SKIP() << "not claimed by " << wanted << ": " << declines_of(*assigned);
  }

  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i].value.defined() && !inputs_[i].constant)
      feeds.emplace_back("in" + std::to_string(i), inputs_[i].value);
  const bool simulated = config.kind == ProviderKind::kSimulatedDevice;
  const int64_t runs_before = simulated ? TestProvider::last_created()->kernel_runs() : 0;
  auto outputs = (*session)->run(feeds);
  ASSERT_TRUE(outputs.ok()) << outputs.status().to_string();
  if (simulated) {
    EXPECT_EQ(TestProvider::last_created()->kernel_runs(), runs_before + 1) << "the simulated device ran no kernel";
  }
  ASSERT_EQ(outputs->size(), expected.size());
  const Tolerance tol = tolerance_for(op_class_);
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(name() + " on " + config.name + ", output " + std::to_string(i) + ", " + op_class_name(op_class_) +
                 " tolerance");
    expect_tensor_near(outputs->at(i), expected[i], tol.rtol, tol.atol);
  }
}

void OpTest::rerun_in_child(const ProviderConfig& config, Outcome& outcome) const {
  const char* cap = cpu_isa_cap_value(config.isa);
  ASSERT_TRUE(env_value(kChildVariable).empty())
      << "SWITCHYARD_MAX_ISA=" << cap << " did not cap the kernels: they dispatch to " << cpu_isa_name(best_cpu_isa());
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string filter = std::string(info->test_suite_name()) + "." + info->name();
  const ChildRun run =
      run_this_binary(filter, {std::string("SWITCHYARD_MAX_ISA=") + cap, std::string(kChildVariable) + "=1"});
  // A skip is a pass of no test; a filter that matched nothing passes none.
  const bool skipped = run.output.find("[  SKIPPED ] 1 test") != std::string::npos;
  const bool passed = run.exited_zero && (skipped || run.output.find("[  PASSED  ] 1 test") != std::string::npos);
  ASSERT_TRUE(passed) << "in the child process under SWITCHYARD_MAX_ISA=" << cap << ":\n" << run.output;
  if (skipped) {
    outcome = Outcome::kNotClaimed;
    GTEST_SKIP() << "in the child process under SWITCHYARD_MAX_ISA=" << cap << ":\n" << run.output;
  }
}

HarnessTally& harness_tally() {
  static HarnessTally tally;
  return tally;
}

}  // namespace sy::testing
