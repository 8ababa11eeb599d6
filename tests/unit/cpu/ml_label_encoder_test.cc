// LabelEncoder 1, 2 and 4 against hand-written mappings.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;

TEST(MlLabelEncoder, Version1MapsStringsToIndicesAndBack) {
  const std::vector<std::string> classes = {"cat", "dog", "eel"};
  auto to_index = NodeTest("LabelEncoder", 1, "ai.onnx.ml")
                      .attr("classes_strings", classes)
                      .attr("default_int64", int64_t{-7})
                      .input(make_tensor<std::string>({4}, {"eel", "cat", "cow", "dog"}))
                      .run();
  ASSERT_TRUE(to_index.ok()) << to_index.status().to_string();
  EXPECT_EQ(to_vector<int64_t>(to_index->at(0)), (std::vector<int64_t>{2, 0, -7, 1}));
  auto to_string = NodeTest("LabelEncoder", 1, "ai.onnx.ml")
                       .attr("classes_strings", classes)
                       .input(make_tensor<int64_t>({2, 2}, {1, 5, -1, 0}))
                       .run();
  ASSERT_TRUE(to_string.ok()) << to_string.status().to_string();
  EXPECT_EQ(to_string->at(0).shape(), (Shape{2, 2}));
  EXPECT_EQ(to_vector<std::string>(to_string->at(0)), (std::vector<std::string>{"dog", "_Unused", "_Unused", "cat"}));
}

TEST(MlLabelEncoder, Version2IntToStringAndFloatToInt) {
  auto ints = NodeTest("LabelEncoder", 2, "ai.onnx.ml")
                  .attr("keys_int64s", std::vector<int64_t>{3, 1})
                  .attr("values_strings", std::vector<std::string>{"three", "one"})
                  .attr("default_string", "?")
                  .input(make_tensor<int64_t>({3}, {1, 2, 3}))
                  .run();
  ASSERT_TRUE(ints.ok()) << ints.status().to_string();
  EXPECT_EQ(to_vector<std::string>(ints->at(0)), (std::vector<std::string>{"one", "?", "three"}));
  auto floats = NodeTest("LabelEncoder", 2, "ai.onnx.ml")
                    .attr("keys_floats", std::vector<float>{0.5f, -0.0f})
                    .attr("values_int64s", std::vector<int64_t>{10, 20})
                    .input(make_tensor<float>({3}, {0.5f, 0.0f, 0.25f}))
                    .run();
  ASSERT_TRUE(floats.ok()) << floats.status().to_string();
  // 0.0 equals the key -0.0; the default is -1.
  EXPECT_EQ(to_vector<int64_t>(floats->at(0)), (std::vector<int64_t>{10, 20, -1}));
}

TEST(MlLabelEncoder, Version4NanKeysRepeatedKeysAndTensors) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = NodeTest("LabelEncoder", 4, "ai.onnx.ml")
                 .attr("keys_floats", std::vector<float>{nan, 1, 1})
                 .attr("values_floats", std::vector<float>{100, 2, 3})
                 .input(make_tensor<float>({3}, {-nan, 1, 7}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const std::vector<float> y = to_vector<float>(out->at(0));
  EXPECT_EQ(y[0], 100);  // any NaN matches the NaN key
  EXPECT_EQ(y[1], 3);    // the last of a repeated key wins
  EXPECT_TRUE(y[2] == 0 && std::signbit(y[2]));  // default_float is -0.0
  auto tensors = NodeTest("LabelEncoder", 4, "ai.onnx.ml")
                     .attr("keys_tensor", make_tensor<int32_t>({2}, {5, 6}))
                     .attr("values_tensor", make_tensor<double>({2}, {0.5, 0.25}))
                     .attr("default_tensor", make_tensor<double>({1}, {9}))
                     .input(make_tensor<int32_t>({3}, {6, 0, 5}))
                     .run();
  ASSERT_TRUE(tensors.ok()) << tensors.status().to_string();
  EXPECT_EQ(to_vector<double>(tensors->at(0)), (std::vector<double>{0.25, 9, 0.5}));
}

TEST(MlLabelEncoder, RejectsMismatchedKeysAndInputs) {
  auto wrong_type = NodeTest("LabelEncoder", 2, "ai.onnx.ml")
                        .attr("keys_strings", std::vector<std::string>{"a"})
                        .attr("values_int64s", std::vector<int64_t>{1})
                        .input(make_tensor<int64_t>({1}, {1}))
                        .run();
  ASSERT_FALSE(wrong_type.ok());
  auto lengths = NodeTest("LabelEncoder", 2, "ai.onnx.ml")
                     .attr("keys_strings", std::vector<std::string>{"a", "b"})
                     .attr("values_int64s", std::vector<int64_t>{1})
                     .input(make_tensor<std::string>({1}, {"a"}))
                     .run();
  ASSERT_FALSE(lengths.ok());
  EXPECT_NE(lengths.status().to_string().find("as many"), std::string::npos) << lengths.status().to_string();
}

}  // namespace
}  // namespace sy
