// HannWindow, HammingWindow and BlackmanWindow against hand-computed
// values: lengths 4 (periodic) and 5 (symmetric) put the samples at
// multiples of pi / 2, where the cosines are 1, 0 and -1.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_eq;
using testing::expect_tensor_near;
using testing::make_tensor;
using testing::NodeTest;

Result<std::vector<Tensor>> run_window(const std::string& op, int64_t size, int periodic, int dtype = 1) {
  return NodeTest(op, 17)
      .input(make_tensor<int64_t>({}, {size}))
      .attr("periodic", periodic)
      .attr("output_datatype", dtype)
      .run();
}

void expect_window(const std::string& op, int64_t size, int periodic, const std::vector<float>& want) {
  auto out = run_window(op, size, periodic);
  ASSERT_TRUE(out.ok()) << op << ": " << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({size}, want), 1e-6, 1e-7);
}

TEST(WindowKernel, HannPeriodicAndSymmetric) {
  expect_window("HannWindow", 4, 1, {0, 0.5f, 1, 0.5f});
  expect_window("HannWindow", 5, 0, {0, 0.5f, 1, 0.5f, 0});
}

TEST(WindowKernel, HammingPeriodicAndSymmetric) {
  // 25/46 - 21/46 cos: 4/46 at the ends, 25/46 at quarter turns, 1 in the middle.
  expect_window("HammingWindow", 4, 1, {4.0f / 46, 25.0f / 46, 1, 25.0f / 46});
  expect_window("HammingWindow", 5, 0, {4.0f / 46, 25.0f / 46, 1, 25.0f / 46, 4.0f / 46});
}

TEST(WindowKernel, BlackmanPeriodicAndSymmetric) {
  // 0.42 - 0.5 cos + 0.08 cos(2x): 0 at x = 0, 0.34 at pi / 2, 1 at pi.
  expect_window("BlackmanWindow", 4, 1, {0, 0.34f, 1, 0.34f});
  expect_window("BlackmanWindow", 5, 0, {0, 0.34f, 1, 0.34f, 0});
}

TEST(WindowKernel, OutputTypes) {
  auto d = run_window("HannWindow", 4, 1, static_cast<int>(DataType::kDouble));
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  expect_tensor_near(d->at(0), make_tensor<double>({4}, {0, 0.5, 1, 0.5}), 1e-15, 1e-15);
  // Integers truncate: only the 1 in the middle survives.
  auto i = run_window("HannWindow", 4, 1, static_cast<int>(DataType::kInt32));
  ASSERT_TRUE(i.ok()) << i.status().to_string();
  expect_tensor_eq(i->at(0), make_tensor<int32_t>({4}, {0, 0, 1, 0}));
  auto u = run_window("BlackmanWindow", 5, 0, static_cast<int>(DataType::kUint8));
  ASSERT_TRUE(u.ok()) << u.status().to_string();
  expect_tensor_eq(u->at(0), make_tensor<uint8_t>({5}, {0, 0, 1, 0, 0}));
  auto h = run_window("HammingWindow", 4, 1, static_cast<int>(DataType::kFloat16));
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  ASSERT_EQ(h->at(0).dtype(), DataType::kFloat16);
  EXPECT_NEAR(float16_to_float(h->at(0).data<Float16>()[1].bits), 25.0 / 46, 1e-3);
}

TEST(WindowKernel, EdgeSizesAndErrors) {
  expect_window("HannWindow", 0, 1, {});
  expect_window("HannWindow", 1, 0, {1});  // numpy's hanning(1), not the formula's 0 / 0
  expect_window("HannWindow", 1, 1, {0});
  auto int32_size = NodeTest("HammingWindow", 17).input(make_tensor<int32_t>({1}, {3})).run();
  ASSERT_TRUE(int32_size.ok()) << int32_size.status().to_string();
  EXPECT_EQ(int32_size->at(0).shape(), (Shape{3}));
  EXPECT_FALSE(run_window("HannWindow", -1, 1).ok());
  EXPECT_FALSE(run_window("HannWindow", 4, 2).ok());
  EXPECT_FALSE(run_window("HannWindow", 4, 1, static_cast<int>(DataType::kString)).ok());
  EXPECT_FALSE(run_window("HannWindow", 4, 1, 99).ok());
  EXPECT_FALSE(NodeTest("HannWindow", 17).input(make_tensor<int64_t>({2}, {3, 4})).run().ok());
}

TEST(WindowKernel, StaticShapeFromAConstantSize) {
  NodeTest t("BlackmanWindow", 17);
  t.constant_input(make_tensor<int64_t>({}, {6})).attr("output_datatype", static_cast<int>(DataType::kDouble));
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const ValueType& type = t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type;
  EXPECT_EQ(type.shape_string(), "[6]");
  EXPECT_EQ(type.dtype, DataType::kDouble);
}

}  // namespace
}  // namespace sy
