// The op test harness's cases (tests/testing/op_test.h): each runs on every
// provider configuration, so ctest lists one test per (case, configuration),
// e.g. OpHarness/OpHarnessTest.Run/Conv_group2_cpu_avx2. Shapes are odd on
// purpose, so that the vector tails of every ISA variant run.
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "testing/node_test.h"
#include "testing/op_test.h"

namespace sy::testing {
namespace {

namespace ref = sy::reference;

Tensor int64s(const Shape& shape, const std::vector<int64_t>& values) { return make_tensor<int64_t>(shape, values); }

std::vector<OpTest> build_cases() {
  std::vector<OpTest> c;
  // elementwise (src/schema/elementwise.cc)
  c.push_back(OpTest("Add", 14, "same_67").input(float_values({67}, 1)).input(float_values({67}, 2))
                  .op_class(OpClass::kFloatArith).reference(ref::add));
  c.push_back(OpTest("Add", 14, "broadcast").input(float_values({2, 3, 17}, 3)).input(float_values({3, 1}, 4))
                  .op_class(OpClass::kFloatArith).reference(ref::add));
  c.push_back(OpTest("Sub", 14, "row_broadcast").input(float_values({4, 33}, 5)).input(float_values({33}, 6))
                  .op_class(OpClass::kFloatArith).reference(ref::sub));
  c.push_back(OpTest("Mul", 14, "scalar_constant").input(float_values({37}, 7)).constant_input(float_values({1}, 8))
                  .op_class(OpClass::kFloatArith).reference(ref::mul));
  c.push_back(OpTest("Div", 14, "column_broadcast").input(float_values({5, 19}, 9))
                  .input(float_values({5, 1}, 10, 0.5f, 2.0f))
                  .op_class(OpClass::kFloatArith).reference(ref::div));
  c.push_back(OpTest("Relu", 14, "odd").input(float_values({131}, 11)).op_class(OpClass::kExact).reference(ref::relu));
  c.push_back(OpTest("Sigmoid", 13, "odd").input(float_values({3, 43}, 12, -8.0f, 8.0f))
                  .op_class(OpClass::kTranscendental).reference(ref::sigmoid));
  c.push_back(OpTest("Tanh", 13, "odd").input(float_values({131}, 13, -5.0f, 5.0f))
                  .op_class(OpClass::kTranscendental).reference(ref::tanh));
  c.push_back(OpTest("Exp", 13, "odd").input(float_values({131}, 14, -10.0f, 10.0f))
                  .op_class(OpClass::kTranscendental).reference(ref::exp));
  c.push_back(OpTest("Erf", 13, "odd").input(float_values({131}, 15, -3.0f, 3.0f))
                  .op_class(OpClass::kTranscendental).reference(ref::erf));
  c.push_back(OpTest("Where", 16, "broadcast").input(make_bool_tensor({4, 1}, {1, 0, 0, 1}))
                  .input(float_values({4, 23}, 16)).input(float_values({23}, 17))
                  .op_class(OpClass::kExact).reference(ref::where));
  // normalization (src/schema/normalization.cc)
  c.push_back(OpTest("Softmax", 13, "last_axis").input(float_values({3, 37}, 18, -6.0f, 6.0f))
                  .op_class(OpClass::kAccumulating).reference(ref::softmax));
  c.push_back(OpTest("Softmax", 13, "middle_axis").input(float_values({2, 5, 7}, 19)).attr({"axis", 1})
                  .op_class(OpClass::kAccumulating).reference(ref::softmax));
  c.push_back(OpTest("LayerNormalization", 17, "rows_45").input(float_values({3, 45}, 20))
                  .constant_input(float_values({45}, 21)).constant_input(float_values({45}, 22))
                  .attr({"epsilon", 1e-5f}).op_class(OpClass::kAccumulating).reference(ref::layer_normalization));
  // matmul (src/schema/matmul.cc)
  c.push_back(OpTest("MatMul", 13, "odd").input(float_values({3, 17}, 23)).input(float_values({17, 13}, 24))
                  .op_class(OpClass::kAccumulating).reference(ref::matmul));
  c.push_back(OpTest("MatMul", 13, "batch_broadcast").input(float_values({2, 5, 9}, 25))
                  .input(float_values({9, 11}, 26)).op_class(OpClass::kAccumulating).reference(ref::matmul));
  c.push_back(OpTest("MatMul", 13, "constant_b").input(float_values({7, 33}, 27))
                  .constant_input(float_values({33, 19}, 28)).op_class(OpClass::kAccumulating)
                  .reference(ref::matmul));
  c.push_back(OpTest("Gemm", 13, "transB_alpha_beta").input(float_values({5, 9}, 29))
                  .constant_input(float_values({11, 9}, 30)).constant_input(float_values({11}, 31))
                  .attr({"transB", 1}).attr({"alpha", 0.5f}).attr({"beta", 2.0f})
                  .op_class(OpClass::kAccumulating).reference(ref::gemm));
  c.push_back(OpTest("Gemm", 13, "transA").input(float_values({9, 6}, 32)).input(float_values({9, 7}, 33))
                  .attr({"transA", 1}).op_class(OpClass::kAccumulating).reference(ref::gemm));
  // nn (src/schema/nn.cc)
  c.push_back(OpTest("Conv", 11, "pads_strides").input(float_values({1, 3, 9, 11}, 34))
                  .constant_input(float_values({4, 3, 3, 3}, 35)).constant_input(float_values({4}, 36))
                  .attr({"pads", std::vector<int64_t>{1, 1, 1, 1}}).attr({"strides", std::vector<int64_t>{2, 2}})
                  .op_class(OpClass::kAccumulating).reference(ref::conv));
  c.push_back(OpTest("Conv", 11, "group2").input(float_values({1, 4, 7, 8}, 37))
                  .constant_input(float_values({6, 2, 3, 2}, 38))
                  .attr({"group", 2}).attr({"pads", std::vector<int64_t>{1, 0, 1, 1}})
                  .op_class(OpClass::kAccumulating).reference(ref::conv));
  c.push_back(OpTest("Conv", 11, "depthwise").input(float_values({2, 5, 10, 9}, 39))
                  .constant_input(float_values({5, 1, 3, 3}, 40)).constant_input(float_values({5}, 41))
                  .attr({"group", 5}).attr({"pads", std::vector<int64_t>{1, 1, 1, 1}})
                  .op_class(OpClass::kAccumulating).reference(ref::conv));
  c.push_back(OpTest("Conv", 11, "pointwise_wide").input(float_values({1, 19, 5, 7}, 42))
                  .constant_input(float_values({21, 19, 1, 1}, 43))
                  .op_class(OpClass::kAccumulating).reference(ref::conv));
  c.push_back(OpTest("MaxPool", 12, "3x3_stride2").input(float_values({1, 3, 9, 10}, 44))
                  .attr({"kernel_shape", std::vector<int64_t>{3, 3}}).attr({"strides", std::vector<int64_t>{2, 2}})
                  .attr({"pads", std::vector<int64_t>{1, 1, 1, 1}})
                  .op_class(OpClass::kExact).reference(ref::max_pool));
  c.push_back(OpTest("AveragePool", 11, "exclude_pad").input(float_values({1, 2, 8, 11}, 45))
                  .attr({"kernel_shape", std::vector<int64_t>{3, 2}}).attr({"pads", std::vector<int64_t>{1, 1, 1, 0}})
                  .op_class(OpClass::kAccumulating).reference(ref::average_pool));
  c.push_back(OpTest("AveragePool", 11, "include_pad").input(float_values({1, 3, 7, 9}, 46))
                  .attr({"kernel_shape", std::vector<int64_t>{3, 3}}).attr({"strides", std::vector<int64_t>{2, 2}})
                  .attr({"pads", std::vector<int64_t>{1, 1, 1, 1}}).attr({"count_include_pad", 1})
                  .op_class(OpClass::kAccumulating).reference(ref::average_pool));
  // reduce (src/schema/reduce.cc)
  c.push_back(OpTest("ReduceMean", 13, "middle_keepdims").input(float_values({3, 29, 5}, 47))
                  .attr({"axes", std::vector<int64_t>{1}}).op_class(OpClass::kAccumulating)
                  .reference(ref::reduce_mean));
  c.push_back(OpTest("ReduceSum", 13, "outer_axes").input(float_values({4, 3, 7}, 48))
                  .constant_input(int64s({2}, {0, -1})).attr({"keepdims", 0})
                  .op_class(OpClass::kAccumulating).reference(ref::reduce_sum));
  c.push_back(OpTest("ReduceSum", 13, "last_axis").input(float_values({5, 67}, 49))
                  .constant_input(int64s({1}, {1})).op_class(OpClass::kAccumulating).reference(ref::reduce_sum));
  // tensor (src/schema/tensor.cc)
  c.push_back(OpTest("Transpose", 13, "rotate").input(float_values({3, 5, 17}, 50))
                  .attr({"perm", std::vector<int64_t>{2, 0, 1}}).op_class(OpClass::kExact).reference(ref::transpose));
  // The default perm reverses the axes (moved here from transpose_test.cc).
  c.push_back(OpTest("Transpose", 13, "default_perm_2x3").input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                  .op_class(OpClass::kExact).expected({make_tensor<float>({3, 2}, {1, 4, 2, 5, 3, 6})}));
  c.push_back(OpTest("Transpose", 1, "default_perm_3d_opset1").input(float_values({2, 3, 4}, 51))
                  .op_class(OpClass::kExact).reference(ref::transpose));
  c.push_back(OpTest("Transpose", 13, "blocked_67x131").input(float_values({67, 131}, 59))
                  .op_class(OpClass::kExact).reference(ref::transpose));
  c.push_back(OpTest("Concat", 13, "middle_axis").input(float_values({2, 3, 5}, 52)).input(float_values({2, 4, 5}, 53))
                  .constant_input(float_values({2, 1, 5}, 54)).attr({"axis", 1})
                  .op_class(OpClass::kExact).reference(ref::concat));
  c.push_back(OpTest("Gather", 13, "rows").input(float_values({7, 13}, 55))
                  .constant_input(int64s({2, 3}, {0, 6, -1, 3, 3, -7})).op_class(OpClass::kExact)
                  .reference(ref::gather));
  c.push_back(OpTest("Gather", 13, "columns").input(float_values({3, 11, 2}, 56)).input(int64s({4}, {10, 0, -2, 5}))
                  .attr({"axis", 1}).op_class(OpClass::kExact).reference(ref::gather));
  c.push_back(OpTest("Slice", 13, "steps").input(float_values({5, 19}, 57)).constant_input(int64s({2}, {1, -15}))
                  .constant_input(int64s({2}, {4, 100})).constant_input(int64s({2}, {0, 1}))
                  .constant_input(int64s({2}, {1, 2})).op_class(OpClass::kExact).reference(ref::slice));
  c.push_back(OpTest("Slice", 13, "negative_step").input(float_values({6, 7, 3}, 58))
                  .constant_input(int64s({1}, {-2})).constant_input(int64s({1}, {-100}))
                  .constant_input(int64s({1}, {1})).constant_input(int64s({1}, {-2}))
                  .op_class(OpClass::kExact).reference(ref::slice));
  return c;
}

const std::vector<OpTest>& harness_cases() {
  static const std::vector<OpTest> cases = build_cases();
  return cases;
}

struct HarnessParam {
  size_t test;    // index into harness_cases()
  size_t config;  // index into provider_configs()
};

std::vector<HarnessParam> all_params() {
  std::vector<HarnessParam> params;
  for (size_t t = 0; t < harness_cases().size(); ++t)
    for (size_t c = 0; c < provider_configs().size(); ++c) params.push_back({t, c});
  return params;
}

// What gtest prints for a failing case's parameter.
void PrintTo(const HarnessParam& p, std::ostream* os) {
  *os << harness_cases()[p.test].name() << " on " << provider_configs()[p.config].name;
}

class OpHarnessTest : public ::testing::TestWithParam<HarnessParam> {};

TEST_P(OpHarnessTest, Run) {
  harness_cases()[GetParam().test].run_on(provider_configs()[GetParam().config]);
}

INSTANTIATE_TEST_SUITE_P(OpHarness, OpHarnessTest, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<HarnessParam>& info) {
                           return harness_cases()[info.param.test].name() + "_" +
                                  provider_configs()[info.param.config].name;
                         });

// Case names are gtest names: unique, and every case has something to
// compare with.
TEST(OpHarnessCases, AreNamedUniquelyAndHaveExpectedOutputs) {
  std::set<std::string> names;
  for (const OpTest& t : harness_cases()) {
    EXPECT_TRUE(names.insert(t.name()).second) << "duplicate case " << t.name();
    EXPECT_FALSE(t.expected_outputs().empty()) << t.name();
  }
}

// The line the harness ends with when any of its cases ran in this process.
class TallyPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    const HarnessTally& t = harness_tally();
    const int total = t.passed + t.failed + t.skipped_absent + t.not_claimed;
    if (total == 0) return;
    std::cout << "harness: " << harness_cases().size() << " op tests x " << provider_configs().size()
              << " provider configurations; " << total << " cases: " << t.passed + t.failed << " run (" << t.passed
              << " passed, " << t.failed << " failed), " << t.skipped_absent << " skipped (provider not present), "
              << t.not_claimed << " not claimed\n";
  }
};

[[maybe_unused]] const auto* const kTallyPrinter = ::testing::AddGlobalTestEnvironment(new TallyPrinter);

}  // namespace
}  // namespace sy::testing
