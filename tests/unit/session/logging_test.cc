// Log messages: the public callback receives them with the session's log
// id; levels filter per session and per run.
#include <gtest/gtest.h>

#include <mutex>

#include "providers/provider_factory.h"
#include "switchyard/session.h"
#include "testing/model_builder.h"

namespace sy {
namespace {

struct Captured {
  std::mutex m;
  std::vector<std::tuple<LogLevel, std::string, std::string>> lines;
};

class LoggingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_log_function([this](LogLevel level, const std::string& id, const std::string& msg) {
      std::lock_guard<std::mutex> lock(captured_.m);
      captured_.lines.emplace_back(level, id, msg);
    });
  }
  void TearDown() override { set_log_function(nullptr); }
  Captured captured_;
};

std::string relu_model() {
  testing::ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", DataType::kFloat, {2});
  return b.build();
}

TEST_F(LoggingTest, UnavailableProviderWarningNamesTheSession) {
  const std::string bytes = relu_model();
  SessionOptions o;
  o.providers = {{"cuda", {}}};
  o.log_id = "my-session";
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_FALSE(captured_.lines.empty());
  const auto& [level, id, msg] = captured_.lines.front();
  EXPECT_EQ(level, LogLevel::kWarning);
  EXPECT_EQ(id, "my-session");
  EXPECT_NE(msg.find("CUDAExecutionProvider is not available"), std::string::npos) << msg;
  EXPECT_NE(msg.find("fix:"), std::string::npos) << msg;
}

TEST_F(LoggingTest, SessionLevelErrorSilencesWarnings) {
  const std::string bytes = relu_model();
  SessionOptions o;
  o.providers = {{"cuda", {}}};
  o.log_level = LogLevel::kError;
  ASSERT_TRUE(Session::create_from_bytes(bytes.data(), bytes.size(), o).ok());
  EXPECT_TRUE(captured_.lines.empty());
}

TEST_F(LoggingTest, VerboseRunLevelLogsUnderTheRunTag) {
  const std::string bytes = relu_model();
  SessionOptions o;
  o.log_id = "s1";
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  ASSERT_TRUE(s.ok());
  Tensor x = Tensor::allocate(DataType::kFloat, Shape{2}).value();
  RunOptions quiet;
  ASSERT_TRUE((*s)->run({{"x", x}}, {}, quiet).ok());
  EXPECT_TRUE(captured_.lines.empty());
  RunOptions verbose;
  verbose.log_level = LogLevel::kVerbose;
  verbose.run_tag = "tag7";
  ASSERT_TRUE((*s)->run({{"x", x}}, {}, verbose).ok());
  ASSERT_EQ(captured_.lines.size(), 1u);
  EXPECT_EQ(std::get<1>(captured_.lines[0]), "s1/tag7");
}

// The CUDA provider library checks its own options (the core keeps no
// copy of them); where it is not built, CUDA is unavailable whatever they say.
bool cuda_library_built() {
  for (const ProviderInfo& p : known_providers())
    if (p.name == "CUDAExecutionProvider") return p.built;
  return false;
}

TEST(ProviderOptions, UnknownAndMalformedOptionsListWhatIsAccepted) {
  if (!cuda_library_built()) GTEST_SKIP() << "the CUDA provider library is not built here";
  const std::string bytes = relu_model();
  SessionOptions o;
  o.providers = {{"cuda", {{"devce_id", "0"}}}};
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("unknown option 'devce_id'"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("device_id (an integer >= 0)"), std::string::npos) << s.status().message();

  o.providers = {{"cuda", {{"cudnn_conv_algo_search", "FASTEST"}}}};
  s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("EXHAUSTIVE, HEURISTIC or DEFAULT"), std::string::npos) << s.status().message();

  o.providers = {{"cpu", {{"threads", "2"}}}};
  s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("accepted: none"), std::string::npos) << s.status().message();
}

// The library takes onnxruntime's spellings too, on a machine without a
// GPU as well (the provider is then unavailable, not an error).
TEST(ProviderOptions, CudaOptionsTheLibraryAcceptsAreAccepted) {
  if (!cuda_library_built()) GTEST_SKIP() << "the CUDA provider library is not built here";
  const std::string bytes = relu_model();
  SessionOptions o;
  o.log_level = LogLevel::kFatal;
  o.fallback.unavailable_provider = FallbackAction::kAllow;
  o.providers = {{"cuda", {{"arena_extend_strategy", "1"}, {"use_tf32", "True"}, {"gpu_mem_limit", "1073741824"}}}};
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();

  o.providers = {{"cuda", {{"gpu_mem_limit", "0"}}}};
  s = Session::create_from_bytes(bytes.data(), bytes.size(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("a byte count > 0"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace sy
