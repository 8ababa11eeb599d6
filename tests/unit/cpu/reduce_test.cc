// Reductions and ArgMax/ArgMin against a reference that walks every input
// element and adds it to its output by index arithmetic, in double.
#include <climits>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

struct RefOp {
  const char* name;
  double init;
  std::function<double(double, double)> step;  // (acc, x)
  std::function<double(double, int64_t)> finish;
};

const std::vector<RefOp>& ref_ops() {
  static const std::vector<RefOp> ops = {
      {"ReduceSum", 0, [](double a, double x) { return a + x; }, [](double a, int64_t) { return a; }},
      {"ReduceMean", 0, [](double a, double x) { return a + x; },
       [](double a, int64_t n) { return a / static_cast<double>(n); }},
      {"ReduceMax", -INFINITY, [](double a, double x) { return std::max(a, x); }, [](double a, int64_t) { return a; }},
      {"ReduceMin", INFINITY, [](double a, double x) { return std::min(a, x); }, [](double a, int64_t) { return a; }},
      {"ReduceProd", 1, [](double a, double x) { return a * x; }, [](double a, int64_t) { return a; }},
      {"ReduceL1", 0, [](double a, double x) { return a + std::fabs(x); }, [](double a, int64_t) { return a; }},
      {"ReduceL2", 0, [](double a, double x) { return a + x * x; }, [](double a, int64_t) { return std::sqrt(a); }},
      {"ReduceLogSum", 0, [](double a, double x) { return a + x; }, [](double a, int64_t) { return std::log(a); }},
      {"ReduceLogSumExp", 0, [](double a, double x) { return a + std::exp(x); },
       [](double a, int64_t) { return std::log(a); }},
      {"ReduceSumSquare", 0, [](double a, double x) { return a + x * x; }, [](double a, int64_t) { return a; }},
  };
  return ops;
}

Tensor reduce_ref(const RefOp& op, const std::vector<float>& x, const Shape& shape, std::vector<int64_t> axes,
                  bool keepdims) {
  const size_t rank = shape.rank();
  std::vector<bool> red(rank, axes.empty());
  for (int64_t a : axes) red[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(rank) : a)] = true;
  Shape out_full;  // keepdims shape
  for (size_t d = 0; d < rank; ++d) out_full.push_back(red[d] ? 1 : shape[d]);
  const int64_t out_n = out_full.num_elements();
  std::vector<double> acc(static_cast<size_t>(out_n), op.init);
  std::vector<int64_t> count(static_cast<size_t>(out_n), 0);
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    int64_t rem = i;
    int64_t o = 0;
    int64_t ostride = 1;
    for (size_t k = rank; k-- > 0;) {
      const int64_t coord = rem % shape[k];
      rem /= shape[k];
      if (!red[k]) o += coord * ostride;
      ostride *= out_full[k];
    }
    acc[static_cast<size_t>(o)] = op.step(acc[static_cast<size_t>(o)], x[static_cast<size_t>(i)]);
    ++count[static_cast<size_t>(o)];
  }
  Shape out_shape;
  for (size_t d = 0; d < rank; ++d)
    if (!red[d] || keepdims) out_shape.push_back(out_full[d]);
  std::vector<float> y(static_cast<size_t>(out_n));
  for (size_t o = 0; o < y.size(); ++o) y[o] = static_cast<float>(op.finish(acc[o], count[o]));
  return make_tensor<float>(out_shape, y);
}

Result<Tensor> run_reduce(const std::string& op, int opset, const Tensor& x, const std::vector<int64_t>& axes,
                          bool keepdims, int threads = 1) {
  NodeTest t(op, opset);
  t.input(x).attr("keepdims", static_cast<int64_t>(keepdims)).threads(threads);
  const bool axes_input = opset >= (op == "ReduceSum" ? 13 : 18);
  if (axes_input) {
    if (!axes.empty()) t.constant_input(make_tensor<int64_t>({static_cast<int64_t>(axes.size())}, axes));
  } else if (!axes.empty()) {
    t.attr("axes", axes);
  }
  SY_ASSIGN_OR_RETURN(auto out, t.run());
  return out[0];
}

TEST(Reduce, EveryOpEveryAxisSetBothKeepdimsAndAxesStyles) {
  const Shape shape{2, 3, 4};
  const std::vector<float> x = random_floats(24, 0.5f, 2.0f, 1);  // positive: logs are defined
  const std::vector<std::vector<int64_t>> axis_sets = {{}, {0}, {1}, {2}, {-1}, {0, 2}, {0, 1}, {1, 2}, {0, 1, 2}, {2, 0}};
  for (const RefOp& op : ref_ops()) {
    for (int opset : {13, 18}) {
      for (const auto& axes : axis_sets) {
        for (bool keepdims : {false, true}) {
          auto out = run_reduce(op.name, opset, make_tensor<float>(shape, x), axes, keepdims);
          ASSERT_TRUE(out.ok()) << op.name << ": " << out.status().to_string();
          std::string trace = std::string(op.name) + " opset " + std::to_string(opset) + " axes {";
          for (int64_t a : axes) trace += std::to_string(a) + ",";
          SCOPED_TRACE(trace + "} keepdims " + std::to_string(keepdims));
          expect_tensor_near(*out, reduce_ref(op, x, shape, axes, keepdims), 2e-6, 1e-6);
        }
      }
    }
  }
}

TEST(Reduce, GeneralLayoutsWithOnesAndAlternatingAxes) {
  const Shape shape{3, 1, 4, 2, 5};
  const std::vector<float> x = random_floats(120, -2, 2, 2);
  const RefOp& sum = ref_ops()[0];
  const RefOp& max = ref_ops()[2];
  for (const auto& axes : std::vector<std::vector<int64_t>>{{0, 3}, {2, 4}, {0, 2, 4}, {1}, {1, 3}, {0, 1, 3}}) {
    for (const RefOp* op : {&sum, &max}) {
      auto out = run_reduce(op->name, 18, make_tensor<float>(shape, x), axes, true);
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      SCOPED_TRACE(std::string(op->name) + " " + std::to_string(axes.size()) + " axes, first " + std::to_string(axes[0]));
      expect_tensor_near(*out, reduce_ref(*op, x, shape, axes, true), 1e-5, 1e-6);
    }
  }
}

TEST(Reduce, MultiThreadedBigTensors) {
  const Shape shape{64, 300, 20};
  const std::vector<float> x = random_floats(static_cast<size_t>(shape.num_elements()), -1, 1, 3);
  const RefOp& mean = ref_ops()[1];
  for (const auto& axes : std::vector<std::vector<int64_t>>{{2}, {1}, {0}, {0, 2}, {1, 2}, {}}) {
    auto out = run_reduce("ReduceMean", 18, make_tensor<float>(shape, x), axes, false, 2);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    SCOPED_TRACE(axes.size());
    expect_tensor_near(*out, reduce_ref(mean, x, shape, axes, false), 1e-4, 1e-6);
  }
}

TEST(Reduce, NoopWithEmptyAxes) {
  const Tensor x = make_tensor<float>({2, 2}, {1, 2, 3, 4});
  auto noop = NodeTest("ReduceSum", 13).input(x).attr("noop_with_empty_axes", int64_t{1}).run();
  ASSERT_TRUE(noop.ok()) << noop.status().to_string();
  expect_tensor_eq(noop->at(0), x);
  auto empty_input = NodeTest("ReduceMax", 18)
                         .input(x)
                         .constant_input(Tensor::allocate(DataType::kInt64, Shape{0}).value())
                         .attr("noop_with_empty_axes", int64_t{1})
                         .run();
  ASSERT_TRUE(empty_input.ok()) << empty_input.status().to_string();
  expect_tensor_eq(empty_input->at(0), x);
  auto all = NodeTest("ReduceSum", 13).input(x).run();
  ASSERT_TRUE(all.ok());
  expect_tensor_eq(all->at(0), make_tensor<float>({1, 1}, {10}));
}

TEST(Reduce, AxesAsRuntimeInput) {
  auto out = NodeTest("ReduceSum", 13)
                 .input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                 .input(make_tensor<int64_t>({1}, {-1}))
                 .attr("keepdims", int64_t{0})
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), make_tensor<float>({2}, {6, 15}));
}

TEST(Reduce, EmptySetsGiveTheIdentity) {
  const Tensor x = Tensor::allocate(DataType::kFloat, Shape{2, 0, 3}).value();
  struct Case {
    const char* op;
    float expected;
  };
  const float inf = std::numeric_limits<float>::infinity();
  for (const Case& c : {Case{"ReduceSum", 0.0f}, Case{"ReduceProd", 1.0f}, Case{"ReduceMax", -inf},
                        Case{"ReduceMin", inf}, Case{"ReduceL2", 0.0f}, Case{"ReduceLogSumExp", -inf},
                        Case{"ReduceSumSquare", 0.0f}}) {
    auto out = run_reduce(c.op, 18, x, {1}, true);
    ASSERT_TRUE(out.ok()) << c.op << ": " << out.status().to_string();
    expect_tensor_eq(*out, make_tensor<float>({2, 1, 3}, std::vector<float>(6, c.expected)));
  }
  auto mean = run_reduce("ReduceMean", 18, x, {1}, false);
  ASSERT_TRUE(mean.ok());
  EXPECT_TRUE(std::isnan(mean->data<float>()[0]));
  // Reducing a non-empty axis of an empty tensor gives an empty output.
  auto empty_out = run_reduce("ReduceSum", 18, x, {2}, false);
  ASSERT_TRUE(empty_out.ok());
  EXPECT_EQ(empty_out->shape(), (Shape{2, 0}));
}

TEST(Reduce, IntegerTypes) {
  const Tensor x = make_tensor<int32_t>({2, 3}, {1, -2, 3, 4, 5, -7});
  auto sum = run_reduce("ReduceSum", 13, x, {1}, false);
  auto max = run_reduce("ReduceMax", 18, x, {0}, false);
  auto mean = run_reduce("ReduceMean", 18, x, {1}, false);
  auto prod = run_reduce("ReduceProd", 18, x, {}, false);
  ASSERT_TRUE(sum.ok() && max.ok() && mean.ok() && prod.ok()) << sum.status().to_string();
  expect_tensor_eq(*sum, make_tensor<int32_t>({2}, {2, 2}));
  expect_tensor_eq(*max, make_tensor<int32_t>({3}, {4, 5, 3}));
  expect_tensor_eq(*mean, make_tensor<int32_t>({2}, {0, 0}));
  expect_tensor_eq(*prod, make_tensor<int32_t>({}, {840}));
  auto u8 = run_reduce("ReduceMin", 18, make_tensor<uint8_t>({3}, {200, 7, 9}), {}, false);
  ASSERT_TRUE(u8.ok()) << u8.status().to_string();
  expect_tensor_eq(*u8, make_tensor<uint8_t>({}, {7}));
  auto b = run_reduce("ReduceMax", 20, make_bool_tensor({2, 2}, {0, 0, 0, 1}), {1}, false);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  expect_tensor_eq(*b, make_bool_tensor({2}, {0, 1}));
}

TEST(Reduce, LogSumExpDoesNotOverflowAndMaxPropagatesNaN) {
  auto lse = run_reduce("ReduceLogSumExp", 18, make_tensor<float>({2}, {1000.0f, 1000.0f}), {}, false);
  ASSERT_TRUE(lse.ok());
  EXPECT_NEAR(lse->data<float>()[0], 1000.0 + std::log(2.0), 1e-3);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto mx = run_reduce("ReduceMax", 18, make_tensor<float>({3}, {1.0f, nan, 2.0f}), {}, false);
  ASSERT_TRUE(mx.ok());
  EXPECT_TRUE(std::isnan(mx->data<float>()[0]));
}

TEST(Reduce, BadAxesAreErrors) {
  const Tensor x = make_tensor<float>({2, 2}, {1, 2, 3, 4});
  EXPECT_FALSE(run_reduce("ReduceSum", 13, x, {2}, true).ok());
  EXPECT_FALSE(run_reduce("ReduceMean", 13, x, {0, -2}, true).ok());
}

TEST(Reduce, InfersOutputShape) {
  NodeTest t("ReduceMean", 18);
  t.input(make_tensor<float>({2, 3, 4}, std::vector<float>(24, 1.0f)))
      .constant_input(make_tensor<int64_t>({2}, {0, -1}))
      .attr("keepdims", int64_t{0});
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const ValueType& type = t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type;
  ASSERT_TRUE(type.has_shape);
  ASSERT_EQ(type.rank(), 1u);
  EXPECT_EQ(type.dims[0].value, 3);
}

// ---- ArgMax / ArgMin ----------------------------------------------------------------

TEST(ArgMax, AxesKeepdimsAndTies) {
  const Tensor x = make_tensor<float>({2, 3}, {1, 5, 5, 7, 2, 7});
  auto a1 = NodeTest("ArgMax", 13).input(x).attr("axis", int64_t{1}).run();
  ASSERT_TRUE(a1.ok()) << a1.status().to_string();
  expect_tensor_eq(a1->at(0), make_tensor<int64_t>({2, 1}, {1, 0}));
  auto last = NodeTest("ArgMax", 13).input(x).attr("axis", int64_t{-1}).attr("select_last_index", int64_t{1}).run();
  ASSERT_TRUE(last.ok());
  expect_tensor_eq(last->at(0), make_tensor<int64_t>({2, 1}, {2, 2}));
  auto a0 = NodeTest("ArgMax", 13).input(x).attr("keepdims", int64_t{0}).run();
  ASSERT_TRUE(a0.ok());
  expect_tensor_eq(a0->at(0), make_tensor<int64_t>({3}, {1, 0, 1}));
  auto mn = NodeTest("ArgMin", 13).input(x).attr("axis", int64_t{1}).attr("keepdims", int64_t{0}).run();
  ASSERT_TRUE(mn.ok());
  expect_tensor_eq(mn->at(0), make_tensor<int64_t>({2}, {0, 1}));
  auto ints = NodeTest("ArgMin", 13).input(make_tensor<int64_t>({4}, {3, -9, 4, -9})).attr("select_last_index", int64_t{1}).run();
  ASSERT_TRUE(ints.ok());
  expect_tensor_eq(ints->at(0), make_tensor<int64_t>({1}, {3}));
}

TEST(ArgMax, MultiThreadedMiddleAxisMatchesReference) {
  const Shape shape{16, 50, 300};
  const std::vector<float> x = random_floats(static_cast<size_t>(shape.num_elements()), -1, 1, 4);
  auto out = NodeTest("ArgMax", 13).input(make_tensor<float>(shape, x)).attr("axis", int64_t{1}).threads(2).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  std::vector<int64_t> ref;
  for (int64_t o = 0; o < 16; ++o)
    for (int64_t i = 0; i < 300; ++i) {
      int64_t best = 0;
      for (int64_t a = 1; a < 50; ++a)
        if (x[static_cast<size_t>((o * 50 + a) * 300 + i)] > x[static_cast<size_t>((o * 50 + best) * 300 + i)]) best = a;
      ref.push_back(best);
    }
  expect_tensor_eq(out->at(0), make_tensor<int64_t>({16, 1, 300}, ref));
}

// Integer reductions wrap like numpy's (np.sum(..., dtype=np.int32) of
// [INT32_MAX, 1] is INT32_MIN; np.prod of int64 [2^62, 4] is 0).
TEST(Reduce, IntegerOverflowWraps) {
  auto sum = run_reduce("ReduceSum", 13, make_tensor<int32_t>({2}, {INT32_MAX, 1}), {}, false);
  ASSERT_TRUE(sum.ok()) << sum.status().to_string();
  expect_tensor_eq(*sum, make_tensor<int32_t>({}, {INT32_MIN}));
  auto sum64 = run_reduce("ReduceSum", 13, make_tensor<int64_t>({3}, {int64_t{1} << 62, int64_t{1} << 62, int64_t{1} << 62}),
                          {}, false);
  ASSERT_TRUE(sum64.ok()) << sum64.status().to_string();
  expect_tensor_eq(*sum64, make_tensor<int64_t>({}, {-4611686018427387904}));
  auto prod = run_reduce("ReduceProd", 18, make_tensor<int64_t>({2}, {int64_t{1} << 62, 4}), {}, false);
  ASSERT_TRUE(prod.ok()) << prod.status().to_string();
  expect_tensor_eq(*prod, make_tensor<int64_t>({}, {0}));
  // 3^40 wrapped to 32 bits: np.prod([3] * 40, dtype=np.int32) == 689956897.
  auto prod32 = run_reduce("ReduceProd", 18, make_tensor<int32_t>({40}, std::vector<int32_t>(40, 3)), {}, false);
  ASSERT_TRUE(prod32.ok()) << prod32.status().to_string();
  expect_tensor_eq(*prod32, make_tensor<int32_t>({}, {689956897}));
  auto l1 = run_reduce("ReduceL1", 18, make_tensor<int64_t>({2}, {INT64_MIN, 1}), {}, false);
  ASSERT_TRUE(l1.ok()) << l1.status().to_string();
  expect_tensor_eq(*l1, make_tensor<int64_t>({}, {INT64_MIN + 1}));
}

}  // namespace
}  // namespace sy::testing
