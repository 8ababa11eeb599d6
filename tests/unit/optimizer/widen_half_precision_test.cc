// float16 and bfloat16 nodes the CPU has only float kernels for run
// widened (optimizer/widen_half_precision.h): the same model in float32,
// with the same (half-representable) weights and inputs, is the reference,
// and the half result must be its float result rounded once, at the end.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"
#include "testing/session_helpers.h"
#include "testing/test_values.h"

namespace sy {
namespace {

using testing::AttrSpec;
using testing::ModelBuilder;

// `values` rounded to the half type `dtype`, as a tensor of that type and,
// exactly equal, as float.
struct HalfData {
  Tensor half;
  Tensor wide;
};

HalfData half_data(DataType dtype, const Shape& shape, uint32_t seed) {
  std::vector<float> v = testing::test_values(static_cast<size_t>(shape.num_elements()), seed);
  HalfData d{Tensor::allocate(dtype, shape).value(), Tensor::allocate(DataType::kFloat, shape).value()};
  for (size_t i = 0; i < v.size(); ++i) {
    const uint16_t bits = dtype == DataType::kFloat16 ? float_to_float16(v[i]) : float_to_bfloat16(v[i]);
    d.half.data<uint16_t>()[i] = bits;
    d.wide.data<float>()[i] = dtype == DataType::kFloat16 ? float16_to_float(bits) : bfloat16_to_float(bits);
  }
  return d;
}

// y = Conv(Relu(Conv(x, w1, b1)), w2) reshaped to [1, -1], in `dtype`, at
// opset 22 (the first whose Conv takes bfloat16).
std::string conv_chain(DataType dtype, const HalfData& w1, const HalfData& b1, const HalfData& w2) {
  const bool half = dtype != DataType::kFloat;
  ModelBuilder b(22);
  b.input("x", dtype, {1, 4, 6, 6});
  b.initializer("w1", half ? w1.half : w1.wide);
  b.initializer("b1", half ? b1.half : b1.wide);
  b.initializer("w2", half ? w2.half : w2.wide);
  b.initializer("shape", testing::make_tensor<int64_t>({2}, {1, -1}));
  b.node("Conv", {"x", "w1", "b1"}, {"c1"}, {AttrSpec("pads", std::vector<int64_t>{1, 1, 1, 1})}, "conv1");
  b.node("Relu", {"c1"}, {"r"}, {}, "relu");
  b.node("Conv", {"r", "w2"}, {"c2"}, {}, "conv2");
  b.node("Reshape", {"c2", "shape"}, {"y"}, {}, "flatten");
  b.output("y", dtype, {1, 2 * 4 * 4});
  return b.build();
}

void check_widened_chain(DataType dtype) {
  const HalfData x = half_data(dtype, Shape{1, 4, 6, 6}, 1);
  const HalfData w1 = half_data(dtype, Shape{8, 4, 3, 3}, 2);
  const HalfData b1 = half_data(dtype, Shape{8}, 3);
  const HalfData w2 = half_data(dtype, Shape{2, 8, 3, 3}, 4);
  auto reference = testing::create_session(conv_chain(DataType::kFloat, w1, b1, w2));
  auto widened = testing::create_session(conv_chain(dtype, w1, b1, w2));
  ASSERT_TRUE(reference && widened);

  // Every node runs on the CPU, and the chain runs in float from the one
  // Cast of x to the one Cast of y back: no Cast pair in between.
  int casts = 0;
  for (const NodeAssignment& a : widened->assignment()) {
    EXPECT_EQ(a.provider, "CPUExecutionProvider") << a.node_name;
    casts += a.op_type == "Cast" ? 1 : 0;
  }
  EXPECT_EQ(casts, 2) << widened->assignment_report();

  auto want = reference->run({{"x", x.wide}});
  auto got = widened->run({{"x", x.half}});
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(got->at(0).dtype(), dtype);
  ASSERT_EQ(got->at(0).shape(), want->at(0).shape());
  const float* w = want->at(0).data<float>();
  const uint16_t* g = got->at(0).data<uint16_t>();
  for (int64_t i = 0; i < got->at(0).num_elements(); ++i) {
    const uint16_t rounded = dtype == DataType::kFloat16 ? float_to_float16(w[i]) : float_to_bfloat16(w[i]);
    ASSERT_EQ(g[i], rounded) << "element " << i << ": float result " << w[i];
  }
}

TEST(WidenHalfPrecisionTest, AFloat16ConvChainRunsInFloatAndRoundsOnce) { check_widened_chain(DataType::kFloat16); }

TEST(WidenHalfPrecisionTest, ABfloat16ConvChainRunsInFloatAndRoundsOnce) { check_widened_chain(DataType::kBfloat16); }

// With optimizations off the widening still happens (the CPU claimed the
// nodes on that promise); only the dead Casts stay.
TEST(WidenHalfPrecisionTest, WidensWithOptimizationsOff) {
  const HalfData x = half_data(DataType::kFloat16, Shape{1, 4, 6, 6}, 1);
  const HalfData w1 = half_data(DataType::kFloat16, Shape{8, 4, 3, 3}, 2);
  const HalfData b1 = half_data(DataType::kFloat16, Shape{8}, 3);
  const HalfData w2 = half_data(DataType::kFloat16, Shape{2, 8, 3, 3}, 4);
  const std::string bytes = conv_chain(DataType::kFloat16, w1, b1, w2);
  SessionOptions options;
  options.optimization_level = OptimizationLevel::kDisableAll;
  auto s = Session::create_from_bytes(bytes.data(), bytes.size(), options);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto got = (*s)->run({{"x", x.half}});
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(got->at(0).dtype(), DataType::kFloat16);
}

}  // namespace
}  // namespace sy
