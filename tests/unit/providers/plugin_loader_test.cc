// Provider plugins loaded on demand, and every way loading can fail: each
// failure must become the provider's reason, name the cause and the fix,
// and turn into an error under the strict policy.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "providers/plugin_loader.h"
#include "switchyard/doctor.h"
#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"

namespace sy {
namespace {

const ProviderInfo kPlugin{"TestPluginExecutionProvider", "testplugin", true};
const ProviderInfo kBroken{"TestBrokenExecutionProvider", "testbroken", true};

std::string relu_model() {
  testing::ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2});
  b.node("Relu", {"x"}, {"y"}, {}, "relu1");
  b.output("y", DataType::kFloat, {2});
  return b.build();
}

// x -> Relu (plugin) -> Reshape to [3,2] (plugin, shape read on the host)
// -> Add (CPU, no kernel in the plugin) -> y
std::string relu_reshape_add_model() {
  testing::ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3});
  b.initializer("shape", testing::make_tensor<int64_t>({2}, {3, -1}));
  b.initializer("one", testing::make_tensor<float>({1}, {1.0f}));
  b.node("Relu", {"x"}, {"r"}, {}, "relu1");
  b.node("Reshape", {"r", "shape"}, {"s"}, {}, "reshape1");
  b.node("Add", {"s", "one"}, {"y"}, {}, "add1");
  b.output("y", DataType::kFloat, {3, 2});
  return b.build();
}

// x -> Relu -> Reshape [3,2] -> y, all on the test plugin's sim:7 device.
std::string relu_reshape_model() {
  testing::ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3});
  b.initializer("shape", testing::make_tensor<int64_t>({2}, {3, -1}));
  b.node("Relu", {"x"}, {"r"}, {}, "relu1");
  b.node("Reshape", {"r", "shape"}, {"y"}, {}, "reshape1");
  b.output("y", DataType::kFloat, {3, 2});
  return b.build();
}

class PluginLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("SWITCHYARD_PROVIDER_PATH", SY_TEST_PLUGIN_DIR, 1);
    register_plugin_provider(kPlugin, "libsy_test_plugin.so");
    register_plugin_provider(kBroken, "libsy_broken_plugin.so");
  }
  void TearDown() override { unsetenv("SWITCHYARD_PROVIDER_PATH"); }

  Result<std::unique_ptr<Session>> create(const std::string& provider, FallbackPolicy policy = {},
                                          ProviderOptions options = {}, const std::string& bytes = relu_model()) {
    SessionOptions o;
    o.providers = {{provider, options}, {"cpu", {}}};
    o.fallback = policy;
    o.log_level = LogLevel::kFatal;  // keep the test output quiet; the messages are checked below
    return Session::create_from_bytes(bytes.data(), bytes.size(), o);
  }
};

TEST_F(PluginLoaderTest, PluginLoadsAndItsDeclinesAreReported) {
  auto s = create("testplugin");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)->providers(), std::vector<std::string>{"CPUExecutionProvider"});
  const NodeAssignment& a = (*s)->assignment().at(0);
  ASSERT_EQ(a.declined.size(), 1u);
  EXPECT_EQ(a.declined[0].provider, "TestPluginExecutionProvider");
  EXPECT_EQ(a.declined[0].reason, "the test plugin runs no ops");
  auto strict = create("testplugin", FallbackPolicy::strict());
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("fell through"), std::string::npos) << strict.status().message();
}

TEST_F(PluginLoaderTest, PluginRunsNodesOnItsDeviceThroughTheCAbi) {
  auto s = create("testplugin", {}, {{"run_ops", "1"}}, relu_reshape_add_model());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)->providers(), (std::vector<std::string>{"TestPluginExecutionProvider", "CPUExecutionProvider"}));
  const PlacementSummary& p = (*s)->placement();
  EXPECT_EQ(p.nodes_per_provider.at("TestPluginExecutionProvider"), 2);
  EXPECT_EQ(p.nodes_per_provider.at("CPUExecutionProvider"), 1);
  // x to the device, the Reshape result back; the shape stays on the host.
  EXPECT_EQ(p.copies_per_run, 2);
  EXPECT_EQ(p.constant_copies, 0);

  Tensor x = testing::make_tensor<float>({2, 3}, {-1, 2, -3, 4, -5, 6});
  auto out = (*s)->run({{"x", x}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const Tensor& y = (*out)[0];
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_TRUE(y.device().is_cpu());
  const std::vector<float> want = {1, 3, 1, 5, 1, 7};  // relu(x) + 1
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(y.data<float>()[i], want[i]) << i;

  // The declined Add names the plugin's reason.
  bool found = false;
  for (const NodeAssignment& a : (*s)->assignment())
    for (const auto& d : a.declined)
      if (d.reason == "the test plugin has no Add kernel") found = true;
  EXPECT_TRUE(found);
}

TEST_F(PluginLoaderTest, APluginCompilesItsPartitionsThroughTheCAbi) {
  // x -> Relu -> Relu -> Relu -> y: one partition on the plugin, which
  // compiles it into one kernel (the ABI's compile slot).
  testing::ModelBuilder b(17);
  b.input("x", DataType::kFloat, {4});
  b.node("Relu", {"x"}, {"a"}, {}, "relu1");
  b.node("Relu", {"a"}, {"b"}, {}, "relu2");
  b.node("Relu", {"b"}, {"y"}, {}, "relu3");
  b.output("y", DataType::kFloat, {4});
  SessionOptions o;
  o.providers = {{"testplugin", {{"run_ops", "1"}, {"compile", "1"}}}, {"cpu", {}}};
  o.enable_profiling = true;
  o.log_level = LogLevel::kFatal;
  const std::string bytes = b.build();
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)->placement().nodes_per_provider.at("TestPluginExecutionProvider"), 3);
  auto out = (*s)->run({{"x", testing::make_tensor<float>({4}, {-1, 2, -3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const std::vector<float> want = {0, 2, 0, 4};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ((*out)[0].data<float>()[i], want[i]) << i;
  // One plugin kernel ran, for the whole partition.
  int partition_runs = 0, relu_runs = 0;
  for (const Session::ProfileRecord& r : (*s)->profile_records()) {
    if (r.op == "CompiledPartition") ++partition_runs;
    if (r.op == "Relu") ++relu_runs;
  }
  EXPECT_EQ(partition_runs, 1);
  EXPECT_EQ(relu_runs, 0);

  // A partition it does not compile (Relu -> Reshape) gets a kernel per node.
  auto mixed = create("testplugin", {}, {{"run_ops", "1"}, {"compile", "1"}}, relu_reshape_model());
  ASSERT_TRUE(mixed.ok()) << mixed.status().to_string();
  auto y = (*mixed)->run({{"x", testing::make_tensor<float>({2, 3}, {-1, 2, -3, 4, -5, 6})}});
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  EXPECT_EQ((*y)[0].shape(), (Shape{3, 2}));
  EXPECT_EQ((*y)[0].data<float>()[1], 2.0f);
}

TEST_F(PluginLoaderTest, MissingDependencyNamesTheLibraryAndTheFix) {
  auto s = create("testbroken");
  ASSERT_TRUE(s.ok()) << s.status().to_string();  // falls back, with a warning
  const NodeAssignment& a = (*s)->assignment().at(0);
  ASSERT_FALSE(a.declined.empty());
  EXPECT_NE(a.declined[0].reason.find("libsy_missing_dep.so"), std::string::npos) << a.declined[0].reason;

  auto strict = create("testbroken", FallbackPolicy::strict());
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), StatusCode::kUnavailable);
  const std::string& m = strict.status().message();
  EXPECT_NE(m.find("libsy_broken_plugin.so failed to load"), std::string::npos) << m;
  EXPECT_NE(m.find("libsy_missing_dep.so"), std::string::npos) << m;
  EXPECT_NE(m.find("fix: install the library it names, or add the folder holding it to LD_LIBRARY_PATH"),
            std::string::npos)
      << m;
}

TEST_F(PluginLoaderTest, EmptySearchPathSaysWhereItLookedAndWhatToSet) {
  setenv("SWITCHYARD_PROVIDER_PATH", "/nonexistent-provider-dir", 1);
  auto strict = create("testplugin", FallbackPolicy::strict());
  ASSERT_FALSE(strict.ok());
  const std::string& m = strict.status().message();
  EXPECT_NE(m.find("libsy_test_plugin.so not found; searched: /nonexistent-provider-dir"), std::string::npos) << m;
  EXPECT_NE(m.find("SWITCHYARD_PROVIDER_PATH"), std::string::npos) << m;
}

TEST_F(PluginLoaderTest, DisabledByEnvironmentIsReportedAsSuch) {
  setenv("SWITCHYARD_DISABLE_TESTPLUGIN", "1", 1);
  auto strict = create("testplugin", FallbackPolicy::strict());
  unsetenv("SWITCHYARD_DISABLE_TESTPLUGIN");
  ASSERT_FALSE(strict.ok());
  const std::string& m = strict.status().message();
  EXPECT_NE(m.find("disabled by the environment variable SWITCHYARD_DISABLE_TESTPLUGIN=1"), std::string::npos) << m;
  EXPECT_NE(m.find("fix: unset it"), std::string::npos) << m;
}

TEST_F(PluginLoaderTest, PluginOptionErrorsComeFromThePlugin) {
  auto s = create("testplugin", {}, {{"flavour", "x"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("unknown option 'flavour'; accepted: run_ops, compile (0 or 1)"), std::string::npos)
      << s.status().message();
}

TEST_F(PluginLoaderTest, DoctorListsTheOptionsAndLibrariesThePluginStates) {
  // Read from the plugin's ABI table (sy_provider_api.options and
  // .libraries), which the core keeps no copy of.
  const ProviderDiagnosis d = diagnose_provider("TestPluginExecutionProvider");
  EXPECT_EQ(d.options, (std::vector<std::string>{"run_ops (0 or 1)", "compile (0 or 1)"}));
  EXPECT_EQ(d.libraries, (std::vector<std::string>{"libc.so.6"}));
  const std::string text = format_doctor({d});
  EXPECT_NE(text.find("  needs: libc.so.6\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  options: run_ops (0 or 1), compile (0 or 1)\n"), std::string::npos) << text;
}

TEST_F(PluginLoaderTest, IoBindingKeepsInputsAndOutputsOnTheDevice) {
  auto s = create("testplugin", {}, {{"run_ops", "1"}}, relu_reshape_model());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const Device sim{DeviceType::kSimulated, 7};

  Tensor host_x = testing::make_tensor<float>({2, 3}, {-1, 2, -3, 4, -5, 6});
  auto x = (*s)->allocate_tensor(DataType::kFloat, Shape{2, 3}, sim);
  ASSERT_TRUE(x.ok()) << x.status().to_string();
  EXPECT_EQ(x->device(), sim);
  ASSERT_TRUE((*s)->copy_tensor(host_x, *x).ok());

  IoBinding binding;
  ASSERT_TRUE(binding.bind_input("x", *x).ok());
  ASSERT_TRUE(binding.bind_output("y", sim).ok());
  for (int run = 0; run < 3; ++run) {  // the same binding serves many runs
    Status st = (*s)->run_with_binding(binding);
    ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_EQ(binding.outputs().size(), 1u);
    const Tensor& y = binding.outputs()[0];
    EXPECT_EQ(y.device(), sim);
    EXPECT_EQ(y.shape(), (Shape{3, 2}));
    auto back = Tensor::allocate(DataType::kFloat, Shape{3, 2});
    ASSERT_TRUE((*s)->copy_tensor(y, *back).ok());
    const std::vector<float> want = {0, 2, 0, 4, 0, 6};
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(back->data<float>()[i], want[i]) << i;
  }

  // A device output outlives the session that made it.
  Tensor kept = binding.outputs()[0];
  s->reset();
  EXPECT_EQ(kept.data<float>()[1], 2.0f);  // sim:7 memory is host memory
}

// The profile lists every step a run executed: an output bound on the
// device skips its final copy to the host, a plain run does not.
TEST_F(PluginLoaderTest, IoBindingDeviceOutputSkipsTheCopyToTheHost) {
  const std::string bytes = relu_reshape_model();
  SessionOptions o;
  o.providers = {{"testplugin", {{"run_ops", "1"}}}, {"cpu", {}}};
  o.log_level = LogLevel::kFatal;
  o.enable_profiling = true;
  o.profile_file_prefix = ::testing::TempDir() + "sy_iobinding_profile";
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto profile = [&] {
    auto path = (*s)->end_profiling();
    EXPECT_TRUE(path.ok()) << path.status().to_string();
    std::ifstream in(*path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::remove(path->c_str());
    return text;
  };
  const Tensor x = testing::make_tensor<float>({2, 3}, {1, -2, 3, -4, 5, -6});
  ASSERT_TRUE((*s)->run({{"x", x}}).ok());
  EXPECT_NE(profile().find("copy_y@sim:7@cpu"), std::string::npos);

  IoBinding binding;
  ASSERT_TRUE(binding.bind_input("x", x).ok());
  ASSERT_TRUE(binding.bind_output("y", Device{DeviceType::kSimulated, 7}).ok());
  Status st = (*s)->run_with_binding(binding);
  ASSERT_TRUE(st.ok()) << st.to_string();
  const std::string bound = profile();
  EXPECT_NE(bound.find("copy_x@sim:7"), std::string::npos) << bound;
  EXPECT_EQ(bound.find("copy_y@sim:7@cpu"), std::string::npos) << bound;
  EXPECT_EQ(binding.outputs()[0].data<float>()[2], 3.0f);  // sim:7 memory is host memory
}

TEST_F(PluginLoaderTest, IoBindingWritesIntoAPreallocatedHostTensor) {
  auto s = create("testplugin", {}, {{"run_ops", "1"}}, relu_reshape_model());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto out = Tensor::allocate(DataType::kFloat, Shape{3, 2});
  IoBinding binding;
  ASSERT_TRUE(binding.bind_input("x", testing::make_tensor<float>({2, 3}, {1, -2, 3, -4, 5, -6})).ok());
  ASSERT_TRUE(binding.bind_output("y", *out).ok());
  Status st = (*s)->run_with_binding(binding);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(binding.outputs()[0].raw_data(), out->raw_data());
  const std::vector<float> want = {1, 0, 3, 0, 5, 0};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(out->data<float>()[i], want[i]) << i;

  auto wrong = Tensor::allocate(DataType::kFloat, Shape{6});
  ASSERT_TRUE(binding.bind_output("y", *wrong).ok());
  st = (*s)->run_with_binding(binding);
  ASSERT_FALSE(st.ok());
  // Refused before the run, from the declared output.
  EXPECT_NE(st.message().find("output 'y' is declared tensor(float) [3,2] but the tensor bound for it is float[6]"),
            std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace sy
