// ai.onnx.preview FlexAttention against a reference loop in double:
// scores = Q·K^T * scale (+ a per-key bias, masked to -inf where a causal
// mask says so), softmax per row, probabilities times per-key weights, then
// times V, with query head h reading K/V head h / (Hq / Hkv). The bias, mask
// and weights are what the score_mod and prob_mod subgraphs built in the
// tests compute, so the subgraphs' effect is checked, not just that they ran.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"
#include "testing/session_helpers.h"

namespace sy {
namespace {

using testing::AttrSpec;
using testing::make_bool_tensor;
using testing::make_tensor;
using testing::ModelBuilder;
using testing::NodeTest;
using testing::to_vector;

constexpr const char* kPreview = "ai.onnx.preview";

struct Dims {
  int64_t b, hq, hkv, l, s, e, ev;
};

// Deterministic values in [-1, 1).
std::vector<float> values(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t x = 2463534242u + static_cast<uint32_t>(seed) * 7919u;
  for (float& f : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    f = static_cast<float>(x % 2000u) / 1000.0f - 1.0f;
  }
  return v;
}

// bias: added to each score per key position (empty: none); causal: keys
// after the query position get -inf; weights: multiply each probability per
// key position (empty: none).
std::vector<double> reference(const Dims& d, const std::vector<float>& q, const std::vector<float>& k,
                              const std::vector<float>& v, double scale, const std::vector<float>& bias, bool causal,
                              const std::vector<float>& weights) {
  std::vector<double> y(static_cast<size_t>(d.b * d.hq * d.l * d.ev), 0.0);
  std::vector<double> p(static_cast<size_t>(d.s));
  const int64_t group = d.hq / d.hkv;
  for (int64_t b = 0; b < d.b; ++b)
    for (int64_t h = 0; h < d.hq; ++h)
      for (int64_t i = 0; i < d.l; ++i) {
        const int64_t kvh = h / group;
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < d.s; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < d.e; ++c)
            acc += double(q[static_cast<size_t>(((b * d.hq + h) * d.l + i) * d.e + c)]) *
                   double(k[static_cast<size_t>(((b * d.hkv + kvh) * d.s + j) * d.e + c)]);
          double sc = acc * scale;
          if (!bias.empty()) sc += bias[static_cast<size_t>(j)];
          if (causal && j > i) sc = -std::numeric_limits<double>::infinity();
          p[static_cast<size_t>(j)] = sc;
          mx = std::max(mx, sc);
        }
        double sum = 0;
        for (double& x : p) sum += (x = std::exp(x - mx));
        for (int64_t j = 0; j < d.s; ++j) {
          p[static_cast<size_t>(j)] /= sum;
          if (!weights.empty()) p[static_cast<size_t>(j)] *= weights[static_cast<size_t>(j)];
        }
        for (int64_t c = 0; c < d.ev; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < d.s; ++j)
            acc += p[static_cast<size_t>(j)] * double(v[static_cast<size_t>(((b * d.hkv + kvh) * d.s + j) * d.ev + c)]);
          y[static_cast<size_t>(((b * d.hq + h) * d.l + i) * d.ev + c)] = acc;
        }
      }
  return y;
}

template <typename T>
void expect_near(const std::vector<T>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(double(got[i]), want[i], tol) << "at " << i;
}

const Dims kGqa{2, 4, 2, 3, 5, 4, 3};

TEST(FlexAttentionKernel, GroupedQueryHeadsWithDefaultScale) {
  const Dims d = kGqa;
  const auto q = values(d.b * d.hq * d.l * d.e, 1), k = values(d.b * d.hkv * d.s * d.e, 2),
             v = values(d.b * d.hkv * d.s * d.ev, 3);
  auto out = NodeTest("FlexAttention", 1, kPreview)
                 .input(make_tensor<float>({d.b, d.hq, d.l, d.e}, q))
                 .input(make_tensor<float>({d.b, d.hkv, d.s, d.e}, k))
                 .input(make_tensor<float>({d.b, d.hkv, d.s, d.ev}, v))
                 .threads(2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{d.b, d.hq, d.l, d.ev}));
  expect_near(to_vector<float>(out->at(0)), reference(d, q, k, v, 1.0 / std::sqrt(4.0), {}, false, {}), 1e-5);
}

TEST(FlexAttentionKernel, DoubleWithExplicitScale) {
  const Dims d{1, 2, 1, 4, 3, 2, 5};
  const auto q = values(d.b * d.hq * d.l * d.e, 4), k = values(d.b * d.hkv * d.s * d.e, 5),
             v = values(d.b * d.hkv * d.s * d.ev, 6);
  auto to_d = [](const std::vector<float>& f) { return std::vector<double>(f.begin(), f.end()); };
  auto out = NodeTest("FlexAttention", 1, kPreview)
                 .input(make_tensor<double>({d.b, d.hq, d.l, d.e}, to_d(q)))
                 .input(make_tensor<double>({d.b, d.hkv, d.s, d.e}, to_d(k)))
                 .input(make_tensor<double>({d.b, d.hkv, d.s, d.ev}, to_d(v)))
                 .attr("scale", 1.75f)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near(to_vector<double>(out->at(0)), reference(d, q, k, v, 1.75, {}, false, {}), 1e-12);
}

TEST(FlexAttentionKernel, Float16InputsSoftmaxInFloat) {
  const Dims d{1, 2, 2, 3, 4, 8, 2};
  // Values rounded to float16 first, so the reference sees the same inputs.
  auto half = [](std::vector<float> f, std::vector<Float16>& h) {
    for (float& x : f) {
      h.push_back(Float16{float_to_float16(x)});
      x = float16_to_float(h.back().bits);
    }
    return f;
  };
  std::vector<Float16> qh, kh, vh;
  const auto q = half(values(d.b * d.hq * d.l * d.e, 7), qh), k = half(values(d.b * d.hkv * d.s * d.e, 8), kh),
             v = half(values(d.b * d.hkv * d.s * d.ev, 9), vh);
  auto out = NodeTest("FlexAttention", 1, kPreview)
                 .input(make_tensor<Float16>({d.b, d.hq, d.l, d.e}, qh))
                 .input(make_tensor<Float16>({d.b, d.hkv, d.s, d.e}, kh))
                 .input(make_tensor<Float16>({d.b, d.hkv, d.s, d.ev}, vh))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  std::vector<float> got;
  for (Float16 x : to_vector<Float16>(out->at(0))) got.push_back(float16_to_float(x.bits));
  expect_near(got, reference(d, q, k, v, 1.0 / std::sqrt(8.0), {}, false, {}), 2e-3);
}

TEST(FlexAttentionKernel, RejectsHeadsThatDoNotGroup) {
  auto out = NodeTest("FlexAttention", 1, kPreview)
                 .input(make_tensor<float>({1, 3, 1, 2}, values(6, 1)))
                 .input(make_tensor<float>({1, 2, 1, 2}, values(4, 2)))
                 .input(make_tensor<float>({1, 2, 1, 2}, values(4, 3)))
                 .run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().to_string().find("multiple"), std::string::npos) << out.status().to_string();
}

// Y = FlexAttention(Q, K, V) with these attributes, run through a session
// (the modifier subgraphs are compiled by one).
std::vector<float> run_model(const Dims& d, const std::vector<float>& q, const std::vector<float>& k,
                             const std::vector<float>& v, std::vector<AttrSpec> attrs) {
  ModelBuilder b(26);
  b.opset_import(kPreview, 1);
  b.input("Q", DataType::kFloat, {d.b, d.hq, d.l, d.e});
  b.input("K", DataType::kFloat, {d.b, d.hkv, d.s, d.e});
  b.input("V", DataType::kFloat, {d.b, d.hkv, d.s, d.ev});
  b.domain_node(kPreview, "FlexAttention", {"Q", "K", "V"}, {"Y"}, std::move(attrs), "flex");
  b.output("Y", DataType::kFloat, {d.b, d.hq, d.l, d.ev});
  auto s = testing::create_session(b.build());
  if (s == nullptr) return {};
  auto y = s->run({{"Q", make_tensor<float>({d.b, d.hq, d.l, d.e}, q)},
                   {"K", make_tensor<float>({d.b, d.hkv, d.s, d.e}, k)},
                   {"V", make_tensor<float>({d.b, d.hkv, d.s, d.ev}, v)}});
  EXPECT_TRUE(y.ok()) << y.status().to_string();
  return y.ok() ? testing::tensor_values<float>(y->at(0)) : std::vector<float>{};
}

// A modifier x -> x op c, c a float[S] initializer of the body; its input
// declared without a shape, which the schema seeds.
ModelBuilder per_key(const std::string& op, const std::vector<float>& c) {
  ModelBuilder body(26);
  body.input_without_shape("x", DataType::kFloat);
  body.initializer("c", make_tensor<float>({static_cast<int64_t>(c.size())}, c));
  body.node(op, {"x", "c"}, {"y"});
  body.output_without_shape("y", DataType::kFloat);
  return body;
}

TEST(FlexAttentionKernel, ScoreModAddsAPerKeyBias) {
  const Dims d = kGqa;
  const auto q = values(d.b * d.hq * d.l * d.e, 11), k = values(d.b * d.hkv * d.s * d.e, 12),
             v = values(d.b * d.hkv * d.s * d.ev, 13);
  const std::vector<float> bias{0.0f, 1.5f, -2.0f, 0.25f, 3.0f};
  // Twice, so the kept frame is reused.
  for (int round = 0; round < 2; ++round) {
    const auto y = run_model(d, q, k, v, {AttrSpec("score_mod", per_key("Add", bias))});
    expect_near(y, reference(d, q, k, v, 0.5, bias, false, {}), 1e-5);
  }
}

TEST(FlexAttentionKernel, ScoreModCausalMaskWithWhere) {
  const Dims d{1, 2, 1, 4, 4, 3, 2};
  const auto q = values(d.b * d.hq * d.l * d.e, 14), k = values(d.b * d.hkv * d.s * d.e, 15),
             v = values(d.b * d.hkv * d.s * d.ev, 16);
  std::vector<int> keep;
  for (int64_t i = 0; i < d.l; ++i)
    for (int64_t j = 0; j < d.s; ++j) keep.push_back(j <= i ? 1 : 0);
  ModelBuilder body(26);
  body.input_without_shape("x", DataType::kFloat);
  body.initializer("keep", make_bool_tensor({d.l, d.s}, keep));
  body.initializer("ninf", make_tensor<float>({}, {-std::numeric_limits<float>::infinity()}));
  body.node("Where", {"keep", "x", "ninf"}, {"y"});
  body.output_without_shape("y", DataType::kFloat);
  const auto y = run_model(d, q, k, v, {AttrSpec("score_mod", body), AttrSpec("scale", 0.8f)});
  expect_near(y, reference(d, q, k, v, 0.8f, {}, true, {}), 1e-5);
}

TEST(FlexAttentionKernel, ProbModAfterScoreMod) {
  const Dims d = kGqa;
  const auto q = values(d.b * d.hq * d.l * d.e, 17), k = values(d.b * d.hkv * d.s * d.e, 18),
             v = values(d.b * d.hkv * d.s * d.ev, 19);
  const std::vector<float> bias{-1.0f, 0.5f, 0.0f, 2.0f, 1.0f};
  const std::vector<float> weights{2.0f, 0.0f, 1.0f, 0.5f, 3.0f};
  const auto y = run_model(d, q, k, v,
                           {AttrSpec("score_mod", per_key("Add", bias)), AttrSpec("prob_mod", per_key("Mul", weights))});
  expect_near(y, reference(d, q, k, v, 0.5, bias, false, weights), 1e-5);
}

}  // namespace
}  // namespace sy
