// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against a plain
// double-precision loop over (n, d), the spec's examples and hand-computed
// values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

struct Case {
  int64_t n = 2;
  int64_t c = 3;
  std::vector<int64_t> spatial;  // d1..dk
  std::vector<int64_t> labels;   // N * D values
  std::vector<float> weight;     // empty: none
  std::optional<int64_t> ignore;
  std::string reduction = "mean";

  int64_t inner() const {
    int64_t d = 1;
    for (int64_t s : spatial) d *= s;
    return d;
  }
  Shape scores_shape() const {
    Shape s{n, c};
    for (int64_t d : spatial) s.push_back(d);
    return s;
  }
  Shape labels_shape() const {
    Shape s{n};
    for (int64_t d : spatial) s.push_back(d);
    return s;
  }
};

// The loss (a scalar unless reduction is "none") and, for softmax, the
// log-probabilities, straight from the spec's formulas.
struct Expected {
  std::vector<double> loss;
  std::vector<double> log_prob;
};

Expected reference(const Case& k, const std::vector<float>& x, bool softmax) {
  const int64_t inner = k.inner();
  Expected e;
  e.log_prob.assign(x.begin(), x.end());
  auto at = [&](int64_t n, int64_t c, int64_t d) { return static_cast<size_t>((n * k.c + c) * inner + d); };
  if (softmax) {
    for (int64_t n = 0; n < k.n; ++n)
      for (int64_t d = 0; d < inner; ++d) {
        double mx = -INFINITY;
        for (int64_t c = 0; c < k.c; ++c) mx = std::max(mx, static_cast<double>(x[at(n, c, d)]));
        double sum = 0;
        for (int64_t c = 0; c < k.c; ++c) sum += std::exp(x[at(n, c, d)] - mx);
        for (int64_t c = 0; c < k.c; ++c) e.log_prob[at(n, c, d)] = x[at(n, c, d)] - mx - std::log(sum);
      }
  }
  double total = 0;
  double weights = 0;
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t d = 0; d < inner; ++d) {
      const int64_t t = k.labels[static_cast<size_t>(n * inner + d)];
      double loss = 0;
      if (!(k.ignore && t == *k.ignore)) {
        const double w = k.weight.empty() ? 1.0 : k.weight[static_cast<size_t>(t)];
        loss = -e.log_prob[at(n, t, d)] * w;
        weights += w;
      }
      total += loss;
      if (k.reduction == "none") e.loss.push_back(loss);
    }
  if (k.reduction == "sum") e.loss = {total};
  if (k.reduction == "mean") e.loss = {total / weights};
  return e;
}

template <typename T>
Tensor labels_tensor(const Case& k) {
  std::vector<T> v(k.labels.begin(), k.labels.end());
  return make_tensor<T>(k.labels_shape(), v);
}

NodeTest loss_node(const Case& k, const std::vector<float>& x, bool softmax, int opset, bool int32_labels) {
  NodeTest t(softmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss", opset);
  t.input(make_tensor<float>(k.scores_shape(), x));
  t.input(int32_labels ? labels_tensor<int32_t>(k) : labels_tensor<int64_t>(k));
  if (!k.weight.empty()) t.input(make_tensor<float>({k.c}, k.weight));
  t.attr("reduction", k.reduction);
  if (k.ignore) t.attr("ignore_index", *k.ignore);
  return t;
}

std::vector<int64_t> cycling_labels(int64_t count, int64_t classes, uint32_t seed) {
  std::vector<int64_t> v(static_cast<size_t>(count));
  uint32_t s = seed * 2654435761u + 3;
  for (auto& t : v) {
    s = s * 1664525u + 1013904223u;
    t = static_cast<int64_t>((s >> 8) % static_cast<uint32_t>(classes));
  }
  return v;
}

void expect_matches(const std::vector<Tensor>& out, const Expected& e, const Case& k, bool softmax, bool log_prob) {
  const Shape loss_shape = k.reduction == "none" ? k.labels_shape() : Shape{};
  std::vector<float> loss(e.loss.begin(), e.loss.end());
  expect_tensor_near(out.at(0), make_tensor<float>(loss_shape, loss), 1e-5, 1e-6);
  if (softmax && log_prob) {
    std::vector<float> lp(e.log_prob.begin(), e.log_prob.end());
    expect_tensor_near(out.at(1), make_tensor<float>(k.scores_shape(), lp), 1e-5, 1e-6);
  }
}

// ---- the spec's examples ------------------------------------------------------

Case spec_example(const std::string& reduction, bool weighted) {
  Case k;
  k.spatial = {2};
  k.labels = {2, 1, 0, 2};
  if (weighted) k.weight = {0.2f, 0.3f, 0.1f};
  k.reduction = reduction;
  return k;
}
const std::vector<float> kSpecInput = {1, 2, 2, 2, 3, 2, 0, 1, 2, 2, 1, 2};

TEST(NegativeLogLikelihoodLoss, SpecExamples) {
  auto none = loss_node(spec_example("none", false), kSpecInput, false, 13, false).run();
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  expect_tensor_near(none->at(0), make_tensor<float>({2, 2}, {-3, -2, 0, -2}));
  auto sum = loss_node(spec_example("sum", true), kSpecInput, false, 13, false).run();
  ASSERT_TRUE(sum.ok()) << sum.status().to_string();
  expect_tensor_near(sum->at(0), make_tensor<float>({}, {-1.1f}));
  auto mean = loss_node(spec_example("mean", true), kSpecInput, false, 13, false).run();
  ASSERT_TRUE(mean.ok()) << mean.status().to_string();
  // -1.1 / (0.1 + 0.3 + 0.2 + 0.1)
  expect_tensor_near(mean->at(0), make_tensor<float>({}, {-1.1f / 0.7f}));
}

// ---- every reduction, weight, ignore_index, label type and rank ----------------

TEST(LossKernels, AgreeWithTheReferenceLoop) {
  const std::vector<std::vector<int64_t>> spatials = {{}, {3}, {2, 1, 3, 2}};
  const std::vector<std::optional<int64_t>> ignores = {std::nullopt, int64_t{1}, int64_t{-5}};
  uint32_t seed = 1;
  for (bool softmax : {false, true})
    for (const auto& spatial : spatials)
      for (const auto& ignore : ignores)
        for (bool weighted : {false, true})
          for (const char* reduction : {"none", "sum", "mean"})
            for (bool int32_labels : {false, true}) {
              Case k;
              k.n = 3;
              k.c = 4;
              k.spatial = spatial;
              k.labels = cycling_labels(k.n * k.inner(), k.c, seed);
              // Put the ignored value at every third position.
              if (ignore)
                for (size_t i = 0; i < k.labels.size(); i += 3) k.labels[i] = *ignore;
              if (weighted) k.weight = {0.5f, 2.0f, 1.0f, 0.25f};
              k.ignore = ignore;
              k.reduction = reduction;
              const std::vector<float> x = test_values(static_cast<size_t>(k.n * k.c * k.inner()), seed++);
              SCOPED_TRACE(std::string(softmax ? "sce" : "nll") + " rank " + std::to_string(spatial.size() + 2) +
                           " ignore " + (ignore ? std::to_string(*ignore) : "none") + " weighted " +
                           std::to_string(weighted) + " " + reduction + " int32 " + std::to_string(int32_labels));
              NodeTest t = loss_node(k, x, softmax, 13, int32_labels);
              if (softmax) t.outputs(2);
              auto out = t.run();
              ASSERT_TRUE(out.ok()) << out.status().to_string();
              expect_matches(*out, reference(k, x, softmax), k, softmax, true);
            }
}

TEST(LossKernels, LargeInputsSplitAmongThreads) {
  // 15000 positions: several reduction blocks, and each op on two threads.
  for (bool softmax : {false, true})
    for (const char* reduction : {"none", "sum", "mean"}) {
      Case k;
      k.n = 3;
      k.c = 5;
      k.spatial = {5000};
      k.labels = cycling_labels(k.n * k.inner(), k.c, 7);
      for (size_t i = 0; i < k.labels.size(); i += 7) k.labels[i] = -100;
      k.ignore = -100;
      k.weight = {1.0f, 0.5f, 2.0f, 1.5f, 0.75f};
      k.reduction = reduction;
      const std::vector<float> x = test_values(static_cast<size_t>(k.n * k.c * k.inner()), 9);
      SCOPED_TRACE(std::string(softmax ? "sce " : "nll ") + reduction);
      auto out = loss_node(k, x, softmax, 13, false).threads(2).run();
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      expect_matches(*out, reference(k, x, softmax), k, softmax, false);
    }
}

// ---- SoftmaxCrossEntropyLoss specifics -------------------------------------------

TEST(SoftmaxCrossEntropyLoss, LargeScoresStayFinite) {
  // log(e^1000 + e^1001 + e^1002) = 1002 + log(1 + e^-1 + e^-2): a naive
  // exp overflows to inf. Labels 0 and 2 lose 2.4076059644 and 0.4076059644.
  Case k;
  k.n = 2;
  k.c = 3;
  k.labels = {0, 2};
  k.reduction = "none";
  const std::vector<float> x = {1000, 1001, 1002, -1000, -999, -998};
  auto out = loss_node(k, x, true, 13, false).outputs(2).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({2}, {2.4076059644f, 0.4076059644f}));
  expect_tensor_near(out->at(1), make_tensor<float>({2, 3}, {-2.4076059644f, -1.4076059644f, -0.4076059644f,
                                                             -2.4076059644f, -1.4076059644f, -0.4076059644f}));
}

TEST(SoftmaxCrossEntropyLoss, Opset12WithoutLogProbOutput) {
  Case k;
  k.labels = {1, 0};
  k.reduction = "mean";
  const std::vector<float> x = {0, 0, 0, 1, 1, 1};
  auto out = loss_node(k, x, true, 12, false).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->size(), 1u);
  // Uniform over 3 classes: log(3) for every sample.
  expect_tensor_near(out->at(0), make_tensor<float>({}, {1.0986122887f}));
}

// ---- edge cases ----------------------------------------------------------------------

TEST(LossKernels, MeanOfOnlyIgnoredTargetsIsNaN) {
  // 0 / 0, as the ONNX reference (numpy) and PyTorch give.
  Case k;
  k.labels = {-1, -1};
  k.ignore = -1;
  for (bool softmax : {false, true}) {
    auto out = loss_node(k, {1, 2, 3, 4, 5, 6}, softmax, 13, false).run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_TRUE(std::isnan(out->at(0).data<float>()[0]));
  }
  k.reduction = "sum";
  auto sum = loss_node(k, {1, 2, 3, 4, 5, 6}, false, 13, false).run();
  ASSERT_TRUE(sum.ok()) << sum.status().to_string();
  EXPECT_EQ(sum->at(0).data<float>()[0], 0.0f);
}

TEST(LossKernels, IgnoredTargetOutsideTheClassesIsNotRead) {
  // ignore_index 100 with a weight of 3 elements: the weight is not indexed
  // with it, and the sample gives 0.
  Case k;
  k.labels = {100, 2};
  k.ignore = 100;
  k.weight = {1, 1, 4};
  k.reduction = "none";
  auto out = loss_node(k, {1, 2, 3, 4, 5, 6}, false, 22, true).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({2}, {0, -24}));
}

TEST(LossKernels, OutOfRangeLabelsAreAnErrorNamingTheNode) {
  for (bool softmax : {false, true})
    for (int64_t bad : {int64_t{3}, int64_t{-1}, int64_t{1} << 40}) {
      Case k;
      k.labels = {0, bad};
      k.ignore = -100;
      auto out = loss_node(k, {1, 2, 3, 4, 5, 6}, softmax, 13, false).run();
      ASSERT_FALSE(out.ok()) << bad;
      EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << out.status().to_string();
      const std::string& m = out.status().message();
      EXPECT_NE(m.find(softmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss"), std::string::npos) << m;
      EXPECT_NE(m.find("holds " + std::to_string(bad) + " at flat index 1"), std::string::npos) << m;
    }
}

TEST(LossKernels, BadShapesAndAttributesAreErrors) {
  Case k;
  k.labels = {0, 1};
  // Labels of the wrong shape.
  EXPECT_FALSE(NodeTest("NegativeLogLikelihoodLoss", 13)
                   .input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                   .input(make_tensor<int64_t>({3}, {0, 1, 2}))
                   .run()
                   .ok());
  // Weight of the wrong length.
  EXPECT_FALSE(NodeTest("NegativeLogLikelihoodLoss", 13)
                   .input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                   .input(make_tensor<int64_t>({2}, {0, 1}))
                   .input(make_tensor<float>({2}, {1, 2}))
                   .run()
                   .ok());
  // An unknown reduction.
  k.reduction = "max";
  EXPECT_FALSE(loss_node(k, {1, 2, 3, 4, 5, 6}, true, 13, false).run().ok());
  // Scores of rank 1.
  EXPECT_FALSE(NodeTest("SoftmaxCrossEntropyLoss", 13)
                   .input(make_tensor<float>({3}, {1, 2, 3}))
                   .input(make_tensor<int64_t>({}, {0}))
                   .run()
                   .ok());
  // Unknown dims: the same checks at run time.
  EXPECT_FALSE(NodeTest("NegativeLogLikelihoodLoss", 13)
                   .input(make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}))
                   .input(make_tensor<int64_t>({3}, {0, 1, 2}))
                   .dynamic_shapes()
                   .run()
                   .ok());
}

TEST(LossKernels, InfersOutputShapes) {
  Case k;
  k.spatial = {4};
  k.labels = cycling_labels(8, 3, 1);
  const std::vector<float> x = test_values(24, 1);
  k.reduction = "none";
  NodeTest none = loss_node(k, x, true, 13, false);
  none.outputs(2);
  ASSERT_TRUE(none.run().ok());
  EXPECT_EQ(none.graph().values[static_cast<size_t>(none.graph().outputs[0])].type.shape_string(), "[2,4]");
  EXPECT_EQ(none.graph().values[static_cast<size_t>(none.graph().outputs[1])].type.shape_string(), "[2,3,4]");
  k.reduction = "sum";
  NodeTest sum = loss_node(k, x, false, 13, false);
  ASSERT_TRUE(sum.run().ok());
  EXPECT_EQ(sum.graph().values[static_cast<size_t>(sum.graph().outputs[0])].type.shape_string(), "[]");
}

// ---- other float types -----------------------------------------------------------

TEST(LossKernels, DoubleScores) {
  auto out = NodeTest("SoftmaxCrossEntropyLoss", 13)
                 .input(make_tensor<double>({1, 2}, {0.0, std::log(3.0)}))
                 .input(make_tensor<int32_t>({1}, {1}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // p = [1/4, 3/4]: loss -log(3/4).
  EXPECT_NEAR(out->at(0).data<double>()[0], -std::log(0.75), 1e-15);
}

Tensor half_tensor(DataType dtype, const Shape& shape, const std::vector<float>& v) {
  Tensor t = Tensor::allocate(dtype, shape).value();
  for (size_t i = 0; i < v.size(); ++i)
    t.data<uint16_t>()[i] = dtype == DataType::kFloat16 ? float_to_float16(v[i]) : float_to_bfloat16(v[i]);
  return t;
}

float half_value(const Tensor& t, size_t i) {
  const uint16_t bits = t.data<uint16_t>()[i];
  return t.dtype() == DataType::kFloat16 ? float16_to_float(bits) : bfloat16_to_float(bits);
}

TEST(LossKernels, HalfTypes) {
  // NLL 22 takes bfloat16 and float16: weighted mean of -x at the labels,
  // (2 * 1.5 + 1 * -0.5) / (2 + 1) = 2.5 / 3; SCE 13 likewise, with
  // uniform scores log(2) per sample.
  for (DataType dtype : {DataType::kFloat16, DataType::kBfloat16}) {
    auto nll = NodeTest("NegativeLogLikelihoodLoss", 22)
                   .input(half_tensor(dtype, {2, 2}, {-1.5f, 0.25f, 3.0f, 0.5f}))
                   .input(make_tensor<int64_t>({2}, {0, 1}))
                   .input(half_tensor(dtype, {2}, {2.0f, 1.0f}))
                   .run();
    ASSERT_TRUE(nll.ok()) << nll.status().to_string();
    EXPECT_EQ(nll->at(0).dtype(), dtype);
    EXPECT_NEAR(half_value(nll->at(0), 0), 2.5f / 3.0f, 4e-3);
    auto sce = NodeTest("SoftmaxCrossEntropyLoss", 13)
                   .input(half_tensor(dtype, {2, 2}, {0.5f, 0.5f, -2.0f, -2.0f}))
                   .input(make_tensor<int32_t>({2}, {0, 1}))
                   .outputs(2)
                   .run();
    ASSERT_TRUE(sce.ok()) << sce.status().to_string();
    EXPECT_NEAR(half_value(sce->at(0), 0), 0.6931472f, 4e-3);
    EXPECT_NEAR(half_value(sce->at(1), 3), -0.6931472f, 4e-3);
  }
  // Before opset 22, NLL does not take bfloat16.
  EXPECT_FALSE(NodeTest("NegativeLogLikelihoodLoss", 13)
                   .input(half_tensor(DataType::kBfloat16, {1, 2}, {1, 2}))
                   .input(make_tensor<int64_t>({1}, {0}))
                   .run()
                   .ok());
}

}  // namespace
}  // namespace sy::testing
