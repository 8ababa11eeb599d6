// Placement limits (SessionOptions: require_full_placement, max_partitions,
// min_partition_size, max_copies) with the test-only provider, which here
// claims only Relu: Relu -> Sigmoid -> Relu -> Sigmoid alternates devices.
#include <gtest/gtest.h>

#include <cmath>

#include "unit/partition/test_provider.h"
#include "switchyard/session.h"
#include "testing/model_builder.h"

namespace sy {
namespace {

using testing::ModelBuilder;

std::string alternating_model() {
  ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 3});
  b.node("Relu", {"x"}, {"a"}, {}, "relu1");
  b.node("Sigmoid", {"a"}, {"b"}, {}, "sig1");
  b.node("Relu", {"b"}, {"c"}, {}, "relu2");
  b.node("Sigmoid", {"c"}, {"y"}, {}, "sig2");
  b.output("y", DataType::kFloat, {2, 3});
  return b.build();
}

SessionOptions relu_on_test_provider() {
  testing::register_test_provider();
  SessionOptions o;
  o.providers = {{"test", {{"ops", "Relu"}}}, {"cpu", {}}};
  o.fallback = {FallbackAction::kAllow, FallbackAction::kAllow};
  return o;
}

Result<std::unique_ptr<Session>> create(const SessionOptions& o) {
  const std::string bytes = alternating_model();
  return Session::create_from_bytes(bytes.data(), bytes.size(), o);
}

TEST(PlacementLimits, SummaryCountsPartitionsAndCopies) {
  auto s = create(relu_on_test_provider());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const PlacementSummary& p = (*s)->placement();
  EXPECT_EQ(p.partitions, 4);
  EXPECT_EQ(p.partition_sizes, (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(p.copies_per_run, 4);  // x up, a down, b up, c down
  EXPECT_EQ(p.nodes_per_provider.at("TestExecutionProvider"), 2);
  EXPECT_EQ(p.nodes_per_provider.at("CPUExecutionProvider"), 2);
}

TEST(PlacementLimits, MinPartitionSizeKeepsSmallRunsOnTheNextProvider) {
  SessionOptions o = relu_on_test_provider();
  o.min_partition_size = 2;
  auto s = create(o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)->placement().partitions, 1);
  EXPECT_EQ((*s)->placement().copies_per_run, 0);
  bool found_reason = false;
  for (const NodeAssignment& a : (*s)->assignment()) {
    EXPECT_EQ(a.provider, "CPUExecutionProvider") << a.node_name;
    for (const ProviderDecline& d : a.declined)
      found_reason |= d.reason.find("fewer than min_partition_size 2") != std::string::npos;
  }
  EXPECT_TRUE(found_reason);
  Tensor x = Tensor::allocate(DataType::kFloat, Shape{2, 3}).value();
  for (int i = 0; i < 6; ++i) x.data<float>()[i] = static_cast<float>(i) - 2.5f;
  auto out = (*s)->run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  for (int i = 0; i < 6; ++i) {
    // sigmoid(relu(sigmoid(relu(v))))
    auto sig = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
    const float v = std::max(0.0f, x.data<float>()[i]);
    EXPECT_NEAR(out->at(0).data<float>()[i], sig(std::max(0.0f, sig(v))), 1e-6f);
  }
}

TEST(PlacementLimits, BrokenLimitsAreErrorsUnderStrictAndWarningsOtherwise) {
  struct Case {
    const char* what;
    void (*set)(SessionOptions&);
    const char* message;
  };
  const Case cases[] = {
      {"full placement", [](SessionOptions& o) { o.require_full_placement = true; }, "not on TestExecutionProvider"},
      {"max partitions", [](SessionOptions& o) { o.max_partitions = 2; }, "4 partitions, more than max_partitions 2"},
      {"max copies", [](SessionOptions& o) { o.max_copies = 1; }, "4 device copies per run, more than max_copies 1"},
  };
  for (const Case& c : cases) {
    SessionOptions strict = relu_on_test_provider();
    c.set(strict);
    strict.fallback.node_fallthrough = FallbackAction::kError;
    auto failed = create(strict);
    ASSERT_FALSE(failed.ok()) << c.what;
    EXPECT_NE(failed.status().message().find(c.message), std::string::npos) << c.what << ": " << failed.status().message();

    SessionOptions lenient = relu_on_test_provider();
    c.set(lenient);
    EXPECT_TRUE(create(lenient).ok()) << c.what;
  }
}

}  // namespace
}  // namespace sy
