// Session: metadata, feeds and their errors, provider names and the
// fallback policy, overridable initializers, and memory reuse across runs.
#include "switchyard/session.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/logging.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"
#include "unit/partition/test_provider.h"

namespace sy::testing {
namespace {

// Collects log lines for the duration of a test.
class LogCapture {
 public:
  LogCapture() {
    set_log_callback([this](LogSeverity severity, std::string_view, std::string_view message) {
      std::lock_guard<std::mutex> lock(mutex_);
      lines_.push_back(std::string(log_severity_name(severity)) + ": " + std::string(message));
    });
  }
  ~LogCapture() { set_log_callback(nullptr); }
  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }
  int count_containing(const std::string& needle) const {
    int n = 0;
    for (const std::string& l : lines())
      if (l.find(needle) != std::string::npos) ++n;
    return n;
  }
  std::string all() const {
    std::string s;
    for (const std::string& l : lines()) s += l + "\n";
    return s;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) {
      old_ = old;
      had_ = true;
    }
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::string old_;
  bool had_ = false;
};

Result<std::unique_ptr<Session>> create(const ModelBuilder& b, const SessionOptions& options = {}) {
  const std::string bytes = b.build();
  return Session::create_from_bytes(bytes.data(), bytes.size(), options);
}

// y = Relu(x + w), z = x * 2;  x: [batch, 4]
ModelBuilder two_output_model() {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"batch", 4});
  b.initializer("w", make_tensor<float>({4}, {1.0f, -1.0f, 2.0f, -2.0f}));
  b.initializer("two", make_tensor<float>({}, {2.0f}));
  b.node("Add", {"x", "w"}, {"a"}, {}, "add");
  b.node("Relu", {"a"}, {"y"}, {}, "relu");
  b.node("Mul", {"x", "two"}, {"z"}, {}, "mul");
  b.output("y", DataType::kFloat, {"batch", 4});
  b.output("z", DataType::kFloat, {"batch", 4});
  return b;
}

Tensor sample_x() { return make_tensor<float>({2, 4}, {0.5f, 0.5f, -3.0f, 3.0f, -1.0f, 2.0f, 1.0f, 1.0f}); }
const std::vector<float> kSampleY = {1.5f, 0.0f, 0.0f, 1.0f, 0.0f, 1.0f, 3.0f, 0.0f};
const std::vector<float> kSampleZ = {1.0f, 1.0f, -6.0f, 6.0f, -2.0f, 4.0f, 2.0f, 2.0f};

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---- creation and metadata ---------------------------------------------------

TEST(SessionTest, MetadataDescribesInputsAndOutputs) {
  auto s = create(two_output_model());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const auto& in = (*s)->inputs();
  ASSERT_EQ(in.size(), 1u);  // initializers are not inputs
  EXPECT_EQ(in[0].name, "x");
  EXPECT_EQ(in[0].dtype, DataType::kFloat);
  EXPECT_EQ(in[0].type, "tensor(float)");
  ASSERT_TRUE(in[0].has_shape);
  ASSERT_EQ(in[0].shape.size(), 2u);
  EXPECT_EQ(in[0].shape[0].value, -1);
  EXPECT_EQ(in[0].shape[0].symbol, "batch");
  EXPECT_EQ(in[0].shape[1].value, 4);
  const auto& out = (*s)->outputs();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "y");
  EXPECT_EQ(out[1].name, "z");
  EXPECT_EQ(out[1].type, "tensor(float)");
  ASSERT_EQ(out[1].shape.size(), 2u);
  EXPECT_EQ(out[1].shape[0].symbol, "batch");
  EXPECT_EQ(out[1].shape[1].value, 4);
  EXPECT_TRUE((*s)->overridable_initializers().empty());
  EXPECT_EQ((*s)->metadata().producer_name, "switchyard-tests");
  EXPECT_EQ((*s)->metadata().opsets.at(""), 17);
}

TEST(SessionTest, CreateFromPath) {
  const std::string path = ::testing::TempDir() + "/session_test_model.onnx";
  ASSERT_TRUE(two_output_model().save(path).ok());
  auto s = Session::create(path);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto r = (*s)->run({{"x", sample_x()}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<float>((*r)[0]), kSampleY);
  std::remove(path.c_str());
}

TEST(SessionTest, MissingFileIsNoSuchFile) {
  auto s = Session::create(::testing::TempDir() + "/does_not_exist.onnx");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNoSuchFile) << s.status().to_string();
}

// ---- running -------------------------------------------------------------------

TEST(SessionTest, RunAllOutputsInModelOrder) {
  auto s = create(two_output_model());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto r = (*s)->run({{"x", sample_x()}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 4}));
  EXPECT_EQ(to_vector<float>((*r)[0]), kSampleY);
  EXPECT_EQ(to_vector<float>((*r)[1]), kSampleZ);
}

TEST(SessionTest, RunNamedOutputsInRequestedOrder) {
  auto s = create(two_output_model());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto r = (*s)->run({{"x", sample_x()}}, {"z"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(to_vector<float>((*r)[0]), kSampleZ);
  r = (*s)->run({{"x", sample_x()}}, {"z", "y"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(to_vector<float>((*r)[0]), kSampleZ);
  EXPECT_EQ(to_vector<float>((*r)[1]), kSampleY);
}

TEST(SessionTest, UnknownOutputNameListsOutputs) {
  auto s = create(two_output_model());
  ASSERT_TRUE(s.ok());
  auto r = (*s)->run({{"x", sample_x()}}, {"q"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(r.status().message(), "'q'")) << r.status().message();
  EXPECT_TRUE(contains(r.status().message(), "y, z")) << r.status().message();
}

TEST(SessionTest, SameOutputRequestedTwice) {
  auto s = create(two_output_model());
  ASSERT_TRUE(s.ok());
  auto r = (*s)->run({{"x", sample_x()}}, {"y", "y"});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->size(), 2u);
  ASSERT_TRUE((*r)[1].defined());
  EXPECT_EQ(to_vector<float>((*r)[1]), kSampleY);
}

TEST(SessionTest, OutputsAreFreshHostTensorsEachRun) {
  auto s = create(two_output_model());
  ASSERT_TRUE(s.ok());
  auto r1 = (*s)->run({{"x", sample_x()}});
  ASSERT_TRUE(r1.ok());
  auto r2 = (*s)->run({{"x", make_tensor<float>({1, 4}, {9, 9, 9, 9})}});
  ASSERT_TRUE(r2.ok());
  // The first run's results are untouched by the second.
  EXPECT_EQ(to_vector<float>((*r1)[0]), kSampleY);
  EXPECT_EQ(to_vector<float>((*r2)[1]), (std::vector<float>{18, 18, 18, 18}));
  EXPECT_TRUE((*r2)[0].device().is_cpu());
  EXPECT_TRUE((*r2)[0].owns_memory());
}

// ---- bad feeds ------------------------------------------------------------------

TEST(SessionTest, WrongInputNameListsValidNames) {
  auto s = create(two_output_model());
  ASSERT_TRUE(s.ok());
  auto r = (*s)->run({{"input", sample_x()}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(r.status().message(), "unknown input 'input'")) << r.status().message();
  EXPECT_TRUE(contains(r.status().message(), "inputs are: x")) << r.status().message();
}

TEST(SessionTest, MissingInputNamesItsTypeAndShape) {
  auto s = create(two_output_model());
  ASSERT_TRUE(s.ok());
  auto r = (*s)->run({});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(r.status().message(), "input 'x' (tensor(float) [batch,4]) is required")) << r.status().message();
}

TEST(SessionTest, WrongDtypeSaysExpectedAndReceived) {
  auto s = create(two_output_model());
  ASSERT_TRUE(s.ok());
  auto r = (*s)->run({{"x", make_tensor<int64_t>({1, 4}, {1, 2, 3, 4})}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(r.status().message(), "input 'x'")) << r.status().message();
  EXPECT_TRUE(contains(r.status().message(), "expected tensor(float), got tensor(int64)")) << r.status().message();
}

TEST(SessionTest, WrongRankSaysExpectedAndReceived) {
  auto s = create(two_output_model());
  ASSERT_TRUE(s.ok());
  auto r = (*s)->run({{"x", make_tensor<float>({4}, {1, 2, 3, 4})}});
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  EXPECT_TRUE(contains(m, "input 'x'")) << m;
  EXPECT_TRUE(contains(m, "expected rank 2 [batch,4]")) << m;
  EXPECT_TRUE(contains(m, "got rank 1 [4]")) << m;
}

TEST(SessionTest, WrongFixedDimSaysExpectedAndReceived) {
  auto s = create(two_output_model());
  ASSERT_TRUE(s.ok());
  auto r = (*s)->run({{"x", make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  EXPECT_TRUE(contains(m, "input 'x': dimension 1 must be 4")) << m;
  EXPECT_TRUE(contains(m, "[batch,4]")) << m;
  EXPECT_TRUE(contains(m, "got shape [2,3]")) << m;
}

TEST(SessionTest, AnyBatchSizeIsAccepted) {
  auto s = create(two_output_model());
  ASSERT_TRUE(s.ok());
  for (int64_t batch : {1, 5, 0}) {
    std::vector<float> xv(static_cast<size_t>(batch * 4), -0.25f);
    auto r = (*s)->run({{"x", make_tensor<float>({batch, 4}, xv)}});
    ASSERT_TRUE(r.ok()) << "batch " << batch << ": " << r.status().to_string();
    EXPECT_EQ((*r)[0].shape(), (Shape{batch, 4}));
    for (int64_t i = 0; i < batch; ++i) {
      const float* y = (*r)[0].data<float>() + i * 4;
      EXPECT_EQ(y[0], 0.75f);
      EXPECT_EQ(y[1], 0.0f);
      EXPECT_EQ(y[2], 1.75f);
      EXPECT_EQ(y[3], 0.0f);
    }
  }
}

// ---- provider names and the fallback policy ----------------------------------------

TEST(SessionTest, UnknownProviderSuggestsClosestName) {
  SessionOptions o;
  o.providers = {{"cdua", {}}};
  auto s = create(two_output_model(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(s.status().message(), "unknown execution provider 'cdua'")) << s.status().message();
  EXPECT_TRUE(contains(s.status().message(), "did you mean CUDAExecutionProvider")) << s.status().message();
}

TEST(SessionTest, LongNamesAndAliasesAreCaseInsensitive) {
  for (const char* name : {"cpu", "CPU", "CPUExecutionProvider", "cpuexecutionprovider"}) {
    SessionOptions o;
    o.providers = {{name, {}}};
    auto s = create(two_output_model(), o);
    ASSERT_TRUE(s.ok()) << name << ": " << s.status().to_string();
    EXPECT_EQ((*s)->requested_providers(), (std::vector<std::string>{"CPUExecutionProvider"})) << name;
  }
}

TEST(SessionTest, ProviderListedTwiceIsAnError) {
  SessionOptions o;
  o.providers = {{"cpu", {}}, {"CPUExecutionProvider", {}}};
  auto s = create(two_output_model(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.status().message(), "listed twice")) << s.status().message();
}

TEST(SessionTest, UnavailableProviderWarnsAndFallsBack) {
  // Hide the CUDA provider library so the reason is the same on every machine.
  ScopedEnv no_plugins("SWITCHYARD_PROVIDER_PATH", "/nonexistent-provider-dir");
  LogCapture log;
  SessionOptions o;
  o.providers = {{"cuda", {}}};
  auto s = create(two_output_model(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  // CPU is appended as the last resort, but was not requested.
  EXPECT_EQ((*s)->requested_providers(), (std::vector<std::string>{"CUDAExecutionProvider"}));
  EXPECT_EQ((*s)->providers(), (std::vector<std::string>{"CPUExecutionProvider"}));
  EXPECT_EQ(log.count_containing("WARNING: requested provider CUDAExecutionProvider is not available"), 1)
      << log.all();
  EXPECT_EQ(log.count_containing("not built into this installation"), 1) << log.all();
  // Falling past a provider that cannot load is not a second warning.
  EXPECT_EQ(log.count_containing("fell through"), 0) << log.all();
  // Every node records why CUDA did not take it.
  for (const NodeAssignment& a : (*s)->assignment()) {
    EXPECT_EQ(a.provider, "CPUExecutionProvider");
    ASSERT_EQ(a.declined.size(), 1u);
    EXPECT_EQ(a.declined[0].provider, "CUDAExecutionProvider");
    EXPECT_TRUE(contains(a.declined[0].reason, "unavailable")) << a.declined[0].reason;
  }
  auto r = (*s)->run({{"x", sample_x()}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<float>((*r)[0]), kSampleY);
}

TEST(SessionTest, UnavailableProviderFailsUnderStrictPolicy) {
  ScopedEnv no_plugins("SWITCHYARD_PROVIDER_PATH", "/nonexistent-provider-dir");
  LogCapture log;
  SessionOptions o;
  o.providers = {{"cuda", {}}};
  o.fallback = FallbackPolicy::strict();
  auto s = create(two_output_model(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.status().message(), "CUDAExecutionProvider is not available")) << s.status().message();
  EXPECT_TRUE(contains(s.status().message(), "not built")) << s.status().message();
}

TEST(SessionTest, StrictEnvironmentVariableTurnsStrictOn) {
  ScopedEnv strict("SWITCHYARD_STRICT", "1");
  SessionOptions o;
  o.providers = {{"cuda", {}}};
  auto s = create(two_output_model(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.status().message(), "CUDAExecutionProvider is not available")) << s.status().message();
}

TEST(SessionTest, UnavailableProviderCanBeAllowedSilently) {
  LogCapture log;
  SessionOptions o;
  o.providers = {{"cuda", {}}};
  o.fallback.unavailable_provider = FallbackAction::kAllow;
  auto s = create(two_output_model(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(log.count_containing("WARNING"), 0) << log.all();
}

TEST(SessionTest, FallThroughIsOneSummaryWarning) {
  register_test_provider();
  LogCapture log;
  SessionOptions o;
  o.providers = {{"test", {{"ops", "Add,Mul"}}}};
  auto s = create(two_output_model(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(log.count_containing("WARNING"), 1) << log.all();
  EXPECT_EQ(log.count_containing("TestExecutionProvider -> CPUExecutionProvider: Relu x1"), 1) << log.all();
  // It counts the model's nodes only, not the device copies the partitioner added.
  EXPECT_EQ(log.count_containing("1 of 3 nodes fell through"), 1) << log.all();
}

TEST(SessionTest, ProvidersListsOnlyThoseThatRunNodes) {
  register_test_provider();
  SessionOptions o;
  o.providers = {{"test", {{"ops", "Relu"}}}, {"cpu", {}}};
  o.fallback.node_fallthrough = FallbackAction::kAllow;
  auto s = create(two_output_model(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)->providers(), (std::vector<std::string>{"TestExecutionProvider", "CPUExecutionProvider"}));

  o.providers = {{"test", {{"ops", "Conv"}}}, {"cpu", {}}};
  s = create(two_output_model(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)->providers(), (std::vector<std::string>{"CPUExecutionProvider"}));

  // All nodes on the test provider: CPU is in the chain but runs nothing.
  o.providers = {{"test", {}}};
  s = create(two_output_model(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)->providers(), (std::vector<std::string>{"TestExecutionProvider"}));
  auto r = (*s)->run({{"x", sample_x()}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<float>((*r)[0]), kSampleY);
  EXPECT_EQ(to_vector<float>((*r)[1]), kSampleZ);
}

TEST(SessionTest, DisableEnvironmentVariableTurnsProviderOff) {
  register_test_provider();
  ScopedEnv disable("SWITCHYARD_DISABLE_TEST", "1");
  LogCapture log;
  SessionOptions o;
  o.providers = {{"test", {}}};
  auto s = create(two_output_model(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)->providers(), (std::vector<std::string>{"CPUExecutionProvider"}));
  EXPECT_EQ(log.count_containing("SWITCHYARD_DISABLE_TEST"), 1) << log.all();
}

// ---- overridable initializers, pass-through outputs --------------------------------

ModelBuilder overridable_model() {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {3});
  b.initializer("bias", make_tensor<float>({3}, {10, 20, 30}), /*also_input=*/true);
  b.node("Add", {"x", "bias"}, {"y"}, {}, "add");
  b.output("y", DataType::kFloat, {3});
  return b;
}

TEST(SessionTest, OverridableInitializerDefaultAndOverride) {
  auto s = create(overridable_model());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_EQ((*s)->inputs().size(), 1u);
  EXPECT_EQ((*s)->inputs()[0].name, "x");
  ASSERT_EQ((*s)->overridable_initializers().size(), 1u);
  EXPECT_EQ((*s)->overridable_initializers()[0].name, "bias");
  EXPECT_EQ((*s)->overridable_initializers()[0].type, "tensor(float)");

  auto r = (*s)->run({{"x", make_tensor<float>({3}, {1, 2, 3})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<float>((*r)[0]), (std::vector<float>{11, 22, 33}));
  r = (*s)->run({{"x", make_tensor<float>({3}, {1, 2, 3})}, {"bias", make_tensor<float>({3}, {-1, -2, -3})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<float>((*r)[0]), (std::vector<float>{0, 0, 0}));
  // The override lasts one run only.
  r = (*s)->run({{"x", make_tensor<float>({3}, {1, 2, 3})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<float>((*r)[0]), (std::vector<float>{11, 22, 33}));
  // A bad override is checked like an input.
  r = (*s)->run({{"x", make_tensor<float>({3}, {1, 2, 3})}, {"bias", make_tensor<float>({2}, {1, 2})}});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.status().message(), "'bias'")) << r.status().message();
}

TEST(SessionTest, OverridableInitializerOnSimulatedDevice) {
  register_test_provider();
  SessionOptions o;
  o.providers = {{"test", {}}};
  auto s = create(overridable_model(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  TestProvider* tp = TestProvider::last_created();
  ASSERT_NE(tp, nullptr);
  EXPECT_EQ((*s)->providers(), (std::vector<std::string>{"TestExecutionProvider"}));
  auto r = (*s)->run({{"x", make_tensor<float>({3}, {1, 2, 3})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<float>((*r)[0]), (std::vector<float>{11, 22, 33}));
  r = (*s)->run({{"x", make_tensor<float>({3}, {1, 2, 3})}, {"bias", make_tensor<float>({3}, {5, 5, 5})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<float>((*r)[0]), (std::vector<float>{6, 7, 8}));
  // Not a constant: uploaded on every run, with x.
  EXPECT_EQ(tp->copies_from_host(), 4);
}

TEST(SessionTest, OverriddenShapeInitializerIsNotTreatedAsConstant) {
  // The override may change a value that inference would otherwise have
  // used as a constant (a Reshape target): shapes derived from the default
  // must not be baked into the plan.
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {6});
  b.initializer("target", make_tensor<int64_t>({2}, {2, 3}), /*also_input=*/true);
  b.node("Reshape", {"x", "target"}, {"r"}, {}, "reshape");
  b.node("Shape", {"r"}, {"s"}, {}, "shape");
  b.output_without_shape("r", DataType::kFloat);
  b.output("s", DataType::kInt64, {2});
  auto s = create(b);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  Tensor x = make_tensor<float>({6}, {1, 2, 3, 4, 5, 6});
  auto r = (*s)->run({{"x", x}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(to_vector<int64_t>((*r)[1]), (std::vector<int64_t>{2, 3}));
  r = (*s)->run({{"x", x}, {"target", make_tensor<int64_t>({2}, {3, 2})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(to_vector<int64_t>((*r)[1]), (std::vector<int64_t>{3, 2}));
}

TEST(SessionTest, GraphOutputThatIsAGraphInput) {
  ModelBuilder b;
  b.input("x", DataType::kFloat, {2});
  b.node("Relu", {"x"}, {"y"}, {}, "relu");
  b.output("x", DataType::kFloat, {2});
  b.output("y", DataType::kFloat, {2});
  for (bool with_test_provider : {false, true}) {
    SessionOptions o;
    if (with_test_provider) {
      register_test_provider();
      o.providers = {{"test", {}}};
    }
    auto s = create(b, o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    Tensor x = make_tensor<float>({2}, {-1, 1});
    auto r = (*s)->run({{"x", x}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ASSERT_EQ(r->size(), 2u);
    EXPECT_EQ(to_vector<float>((*r)[0]), (std::vector<float>{-1, 1}));
    EXPECT_NE((*r)[0].raw_data(), x.raw_data()) << "the result must not alias the caller's feed";
    EXPECT_EQ(to_vector<float>((*r)[1]), (std::vector<float>{0, 1}));
  }
}

TEST(SessionTest, GraphOutputThatIsAConstant) {
  ModelBuilder b;
  b.input("x", DataType::kFloat, {2});
  b.initializer("c", make_tensor<float>({2}, {7, 8}));
  b.node("Relu", {"x"}, {"y"}, {}, "relu");
  b.output("y", DataType::kFloat, {2});
  b.output("c", DataType::kFloat, {2});
  auto s = create(b);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  for (int run = 0; run < 2; ++run) {
    auto r = (*s)->run({{"x", make_tensor<float>({2}, {-1, 1})}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ASSERT_EQ(r->size(), 2u);
    EXPECT_EQ(to_vector<float>((*r)[1]), (std::vector<float>{7, 8}));
    // The caller may write to a result without changing the model.
    (*r)[1].data<float>()[0] = -100;
  }
}

TEST(SessionTest, ModelWithoutNodes) {
  ModelBuilder b;
  b.input("x", DataType::kInt64, {"n"});
  b.output("x", DataType::kInt64, {"n"});
  auto s = create(b);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)->providers(), (std::vector<std::string>{"CPUExecutionProvider"}));
  auto r = (*s)->run({{"x", make_tensor<int64_t>({3}, {4, 5, 6})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<int64_t>((*r)[0]), (std::vector<int64_t>{4, 5, 6}));
}

// ---- optimization levels --------------------------------------------------------------

TEST(SessionTest, OptimizationLevelsGiveTheSameResults) {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3});
  b.initializer("w1", make_tensor<float>({3}, {1, 2, 3}));
  b.initializer("w2", make_tensor<float>({3}, {-4, 0.5f, 2}));
  b.node("Mul", {"w1", "w2"}, {"w12"}, {}, "fold_me");
  b.node("Identity", {"x"}, {"xi"}, {}, "identity");
  b.node("Add", {"xi", "w12"}, {"a"}, {}, "add");
  b.node("Shape", {"x"}, {"shape"}, {}, "shape");
  b.node("Relu", {"a"}, {"y"}, {}, "relu");
  b.node("Relu", {"x"}, {"dead"}, {}, "dead");
  b.output("y", DataType::kFloat, {2, 3});
  b.output("shape", DataType::kInt64, {2});
  Tensor x = make_tensor<float>({2, 3}, {1, 1, 1, 5, -5, 0});
  const std::vector<float> expected_y = {0, 2, 7, 1, 0, 6};
  for (OptimizationLevel level : {OptimizationLevel::kDisableAll, OptimizationLevel::kBasic,
                                  OptimizationLevel::kExtended, OptimizationLevel::kAll}) {
    SessionOptions o;
    o.optimization_level = level;
    auto s = create(b, o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    auto r = (*s)->run({{"x", x}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(to_vector<float>((*r)[0]), expected_y) << static_cast<int>(level);
    EXPECT_EQ(to_vector<int64_t>((*r)[1]), (std::vector<int64_t>{2, 3})) << static_cast<int>(level);
    const size_t nodes = (*s)->assignment().size();
    if (level == OptimizationLevel::kDisableAll) {
      EXPECT_EQ(nodes, 6u);
    } else {
      EXPECT_EQ(nodes, 2u) << (*s)->assignment_report();  // Add and Relu
    }
  }
}

// ---- memory reuse ------------------------------------------------------------------------

// A chain that stays on the simulated device: copy in, n Relus, copy out.
ModelBuilder relu_chain(int n) {
  ModelBuilder b;
  b.input("x", DataType::kFloat, {"n"});
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string out = i + 1 == n ? "y" : "r" + std::to_string(i);
    b.node("Relu", {prev}, {out}, {}, "relu" + std::to_string(i));
    prev = out;
  }
  b.output("y", DataType::kFloat, {"n"});
  return b;
}

TEST(SessionTest, SteadyStateAllocatesNothingOnTheDevice) {
  register_test_provider();
  SessionOptions o;
  o.providers = {{"test", {}}};
  auto s = create(relu_chain(6), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  TestProvider* tp = TestProvider::last_created();
  ASSERT_NE(tp, nullptr);
  const CountingAllocator& alloc = tp->counting_allocator();
  const int64_t at_creation = alloc.allocations();

  auto run = [&](int64_t n) {
    std::vector<float> xv(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) xv[static_cast<size_t>(i)] = static_cast<float>(i % 7) - 3.0f;
    auto r = (*s)->run({{"x", make_tensor<float>({n}, xv)}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ((*r)[0].data<float>()[i], std::max(0.0f, xv[static_cast<size_t>(i)]));
  };
  run(1000);
  const int64_t first_run = alloc.allocations() - at_creation;
  // Seven values live on the device (x's copy and six Relu outputs), but
  // no two of them at once beyond a producer and its consumer: two slots.
  EXPECT_EQ(first_run, 2);
  run(1000);
  EXPECT_EQ(alloc.allocations() - at_creation, first_run) << "the second run with the same shapes allocated";
  run(10);  // smaller: fits the buffers already there
  EXPECT_EQ(alloc.allocations() - at_creation, first_run);
  run(5000);  // larger: the slots grow once
  const int64_t after_growth = alloc.allocations();
  run(5000);
  EXPECT_EQ(alloc.allocations(), after_growth);
  // Two slot buffers held by the session's one frame; nothing else.
  EXPECT_EQ(alloc.live(), 2);
}

TEST(SessionTest, MemoryPlanKeepsLongLivedValuesApart) {
  // a lives across three steps while b, c, h0, h1 come and go; the two
  // halves of the Split are alive at once. Shared slots would corrupt them.
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {"n"});
  b.initializer("halves", make_tensor<int64_t>({2}, {2, 2}));
  b.node("Relu", {"x"}, {"a"}, {}, "relu");
  b.node("Neg", {"a"}, {"b"}, {}, "neg");
  b.node("Abs", {"b"}, {"c"}, {}, "abs");
  b.node("Add", {"a", "c"}, {"d"}, {}, "add");
  b.node("Split", {"d", "halves"}, {"h0", "h1"}, {AttrSpec("axis", 0)}, "split");
  b.node("Sub", {"h0", "h1"}, {"y"}, {}, "sub");
  b.output("y", DataType::kFloat, {2});
  for (bool with_test_provider : {false, true}) {
    SessionOptions o;
    o.fallback.node_fallthrough = FallbackAction::kAllow;
    if (with_test_provider) {
      register_test_provider();
      o.providers = {{"test", {{"ops", "Relu,Add,Abs"}}}};
    }
    auto s = create(b, o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    for (int run = 0; run < 2; ++run) {
      auto r = (*s)->run({{"x", make_tensor<float>({4}, {1, -2, 3, 5})}});
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      // a = [1,0,3,5], d = 2a = [2,0,6,10], y = [2-6, 0-10]
      EXPECT_EQ(to_vector<float>((*r)[0]), (std::vector<float>{-4, -10})) << "test provider " << with_test_provider;
    }
  }
}

TEST(SessionTest, SteadyStateWithDeviceConstants) {
  register_test_provider();
  ModelBuilder b;
  b.input("x", DataType::kFloat, {"n", 2});
  b.initializer("w", make_tensor<float>({2, 2}, {1, 0, 0, 1}));
  b.initializer("bias", make_tensor<float>({2}, {1, 1}));
  b.node("MatMul", {"x", "w"}, {"m"}, {}, "matmul");
  b.node("Add", {"m", "bias"}, {"a"}, {}, "add");
  b.node("Relu", {"a"}, {"y"}, {}, "relu");
  b.output("y", DataType::kFloat, {"n", 2});
  SessionOptions o;
  o.providers = {{"test", {}}};
  auto s = create(b, o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  TestProvider* tp = TestProvider::last_created();
  ASSERT_NE(tp, nullptr);
  const int64_t at_creation = tp->counting_allocator().allocations();
  EXPECT_EQ(at_creation, 2);  // w and bias, uploaded once
  Tensor x = make_tensor<float>({3, 2}, {1, -5, 2, 2, -3, 0});
  auto r = (*s)->run({{"x", x}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(to_vector<float>((*r)[0]), (std::vector<float>{2, 0, 3, 3, 0, 1}));
  const int64_t after_first = tp->counting_allocator().allocations();
  for (int i = 0; i < 3; ++i) {
    r = (*s)->run({{"x", x}});
    ASSERT_TRUE(r.ok());
  }
  EXPECT_EQ(tp->counting_allocator().allocations(), after_first);
}

// ---- profiling ------------------------------------------------------------------

TEST(SessionTest, ProfileRecordsHoldEveryNodeOfEveryRunUntilWritten) {
  SessionOptions o;
  o.optimization_level = OptimizationLevel::kDisableAll;  // the three nodes as built
  o.enable_profiling = true;
  o.profile_file_prefix = ::testing::TempDir() + "/records";
  auto s = create(two_output_model(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_TRUE((*s)->profile_records().empty());
  for (int run = 0; run < 2; ++run) ASSERT_TRUE((*s)->run({{"x", sample_x()}}).ok());
  const std::vector<Session::ProfileRecord> records = (*s)->profile_records();
  ASSERT_EQ(records.size(), 6u);
  EXPECT_EQ((*s)->profile_record_count(), 6u);
  std::map<std::string, int> runs_of;
  for (size_t i = 0; i < records.size(); ++i) {
    const Session::ProfileRecord& r = records[i];
    ++runs_of[r.node + "/" + r.op];
    EXPECT_EQ(r.provider, "CPUExecutionProvider");
    EXPECT_GE(r.duration_ns, 0);
    if (i > 0) {
      EXPECT_GE(r.start_ns, records[i - 1].start_ns + records[i - 1].duration_ns) << "oldest first";
    }
  }
  EXPECT_EQ(runs_of, (std::map<std::string, int>{{"add/Add", 2}, {"relu/Relu", 2}, {"mul/Mul", 2}}));
  // end_profiling() writes them and starts afresh.
  auto path = (*s)->end_profiling();
  ASSERT_TRUE(path.ok()) << path.status().to_string();
  std::remove(path->c_str());
  EXPECT_TRUE((*s)->profile_records().empty());
  EXPECT_EQ((*s)->profile_record_count(), 0u);
}

TEST(SessionTest, NoProfileRecordsWhenProfilingIsOff) {
  auto s = create(two_output_model());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_TRUE((*s)->run({{"x", sample_x()}}).ok());
  EXPECT_TRUE((*s)->profile_records().empty());
}

}  // namespace
}  // namespace sy::testing
