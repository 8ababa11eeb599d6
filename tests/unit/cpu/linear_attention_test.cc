// LinearAttention against a double-precision reference of the recurrence as
// the spec writes it: one full state per query head (GQA copies the kv
// head's update), updated step by step.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy {
namespace {

using testing::expect_tensor_near;
using testing::make_tensor;
using testing::NodeTest;

struct Case {
  int64_t batch = 2, steps = 3, hq = 4, hkv = 2, dk = 3, dv = 2;
  std::string rule = "gated_delta";
  bool decay_per_dim = true;
  bool beta_scalar = false;
  bool with_past = false;
  bool half_state = false;  // past_state and present_state in float16, the rest float
  float scale = 0.0f;
  std::vector<float> q, k, v, past, decay, beta;
};

std::vector<float> wave(int64_t n, float amp, float phase) {
  std::vector<float> r(static_cast<size_t>(n));
  for (size_t i = 0; i < r.size(); ++i) r[i] = amp * static_cast<float>(std::sin(0.7 * static_cast<double>(i) + phase));
  return r;
}

void fill(Case& c) {
  c.q = wave(c.batch * c.steps * c.hq * c.dk, 0.8f, 0.1f);
  c.k = wave(c.batch * c.steps * c.hkv * c.dk, 0.6f, 0.9f);
  c.v = wave(c.batch * c.steps * c.hkv * c.dv, 1.1f, 2.0f);
  c.past = wave(c.batch * c.hkv * c.dk * c.dv, 0.5f, 1.3f);
  c.decay = wave(c.batch * c.steps * (c.decay_per_dim ? c.hkv * c.dk : c.hkv), 0.3f, 0.4f);
  for (float& d : c.decay) d -= 0.3f;  // log-space, mostly negative
  c.beta = wave(c.batch * c.steps * (c.beta_scalar ? 1 : c.hkv), 0.4f, 0.2f);
  for (float& b : c.beta) b += 0.5f;
}

// Returns output [B, T, Hq*dv] and the state of each kv head [B, Hkv, dk, dv].
void reference(const Case& c, std::vector<float>& out, std::vector<float>& state_out) {
  const bool gated = c.rule == "gated" || c.rule == "gated_delta";
  const bool delta = c.rule == "delta" || c.rule == "gated_delta";
  const double scale = c.scale != 0.0f ? c.scale : 1.0 / std::sqrt(static_cast<double>(c.dk));
  out.assign(static_cast<size_t>(c.batch * c.steps * c.hq * c.dv), 0.0f);
  state_out.assign(static_cast<size_t>(c.batch * c.hkv * c.dk * c.dv), 0.0f);
  const int64_t group = c.hq / c.hkv;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t hk = 0; hk < c.hkv; ++hk) {
      std::vector<std::vector<double>> s(static_cast<size_t>(c.dk), std::vector<double>(static_cast<size_t>(c.dv)));
      for (int64_t d = 0; d < c.dk; ++d)
        for (int64_t m = 0; m < c.dv; ++m)
          s[d][m] = c.with_past ? c.past[static_cast<size_t>(((b * c.hkv + hk) * c.dk + d) * c.dv + m)] : 0.0;
      for (int64_t t = 0; t < c.steps; ++t) {
        auto kk = [&](int64_t d) { return double{c.k[static_cast<size_t>(((b * c.steps + t) * c.hkv + hk) * c.dk + d)]}; };
        std::vector<double> vv(static_cast<size_t>(c.dv));
        for (int64_t m = 0; m < c.dv; ++m) vv[m] = c.v[static_cast<size_t>(((b * c.steps + t) * c.hkv + hk) * c.dv + m)];
        if (gated)
          for (int64_t d = 0; d < c.dk; ++d) {
            const size_t at = c.decay_per_dim ? static_cast<size_t>(((b * c.steps + t) * c.hkv + hk) * c.dk + d)
                                              : static_cast<size_t>((b * c.steps + t) * c.hkv + hk);
            for (int64_t m = 0; m < c.dv; ++m) s[d][m] *= std::exp(double{c.decay[at]});
          }
        if (delta) {
          const double beta = c.beta[static_cast<size_t>(c.beta_scalar ? b * c.steps + t : (b * c.steps + t) * c.hkv + hk)];
          std::vector<double> corrected(static_cast<size_t>(c.dv));
          for (int64_t m = 0; m < c.dv; ++m) {
            double retrieved = 0;
            for (int64_t d = 0; d < c.dk; ++d) retrieved += s[d][m] * kk(d);
            corrected[m] = beta * (vv[m] - retrieved);
          }
          vv = corrected;
        }
        for (int64_t d = 0; d < c.dk; ++d)
          for (int64_t m = 0; m < c.dv; ++m) s[d][m] += kk(d) * vv[m];
        for (int64_t g = 0; g < group; ++g) {
          const int64_t h = hk * group + g;
          for (int64_t m = 0; m < c.dv; ++m) {
            double acc = 0;
            for (int64_t d = 0; d < c.dk; ++d)
              acc += c.q[static_cast<size_t>(((b * c.steps + t) * c.hq + h) * c.dk + d)] * s[d][m];
            out[static_cast<size_t>(((b * c.steps + t) * c.hq + h) * c.dv + m)] = static_cast<float>(scale * acc);
          }
        }
      }
      for (int64_t d = 0; d < c.dk; ++d)
        for (int64_t m = 0; m < c.dv; ++m)
          state_out[static_cast<size_t>(((b * c.hkv + hk) * c.dk + d) * c.dv + m)] = static_cast<float>(s[d][m]);
    }
}

// A float16 tensor of `values`, which are rounded to float16 in place.
Tensor half_tensor(const Shape& shape, std::vector<float>& values) {
  Tensor t = Tensor::allocate(DataType::kFloat16, shape).value();
  for (size_t i = 0; i < values.size(); ++i) {
    t.data<uint16_t>()[i] = float_to_float16(values[i]);
    values[i] = float16_to_float(t.data<uint16_t>()[i]);
  }
  return t;
}

void check(Case c) {
  fill(c);
  const bool gated = c.rule == "gated" || c.rule == "gated_delta";
  const bool delta = c.rule == "delta" || c.rule == "gated_delta";
  NodeTest t("LinearAttention", 27);
  t.input(make_tensor<float>({c.batch, c.steps, c.hq * c.dk}, c.q));
  t.input(make_tensor<float>({c.batch, c.steps, c.hkv * c.dk}, c.k));
  t.input(make_tensor<float>({c.batch, c.steps, c.hkv * c.dv}, c.v));
  const Shape state_shape{c.batch, c.hkv, c.dk, c.dv};
  if (c.with_past)
    t.input(c.half_state ? half_tensor(state_shape, c.past) : make_tensor<float>(state_shape, c.past));
  else if (gated || delta)
    t.missing_input();
  if (gated)
    t.input(make_tensor<float>({c.batch, c.steps, c.decay_per_dim ? c.hkv * c.dk : c.hkv}, c.decay));
  else if (delta)
    t.missing_input();
  if (delta) t.input(make_tensor<float>({c.batch, c.steps, c.beta_scalar ? 1 : c.hkv}, c.beta));
  t.attr("q_num_heads", c.hq).attr("kv_num_heads", c.hkv).attr("update_rule", c.rule);
  if (c.scale != 0.0f) t.attr("scale", c.scale);
  t.outputs(2);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  std::vector<float> want_out, want_state;
  reference(c, want_out, want_state);
  expect_tensor_near(out->at(0), make_tensor<float>({c.batch, c.steps, c.hq * c.dv}, want_out), 1e-5, 1e-6);
  if (c.half_state)
    expect_tensor_near(out->at(1), half_tensor(state_shape, want_state), 1e-3, 1e-4);
  else
    expect_tensor_near(out->at(1), make_tensor<float>(state_shape, want_state), 1e-5, 1e-6);
}

TEST(LinearAttentionKernel, EveryRuleWithAndWithoutPast) {
  for (const char* rule : {"linear", "gated", "delta", "gated_delta"})
    for (bool past : {false, true}) {
      SCOPED_TRACE(std::string(rule) + (past ? " with past" : ""));
      Case c;
      c.rule = rule;
      c.with_past = past;
      check(c);
    }
}

TEST(LinearAttentionKernel, PerHeadDecayScalarBetaScaleAndMqa) {
  Case per_head;
  per_head.decay_per_dim = false;
  per_head.beta_scalar = true;
  per_head.scale = 0.25f;
  per_head.with_past = true;
  check(per_head);
  Case mqa;
  mqa.hkv = 1;
  mqa.hq = 3;
  mqa.steps = 5;
  check(mqa);
}

TEST(LinearAttentionKernel, Float16StateWithFloatActivations) {
  // S may differ from T: present_state takes past_state's type.
  Case c;
  c.with_past = true;
  c.half_state = true;
  check(c);
}

TEST(LinearAttentionKernel, RejectsMissingDecayAndBadHeads) {
  auto no_decay = NodeTest("LinearAttention", 27)
                      .input(make_tensor<float>({1, 1, 2}, {1, 2}))
                      .input(make_tensor<float>({1, 1, 2}, {1, 2}))
                      .input(make_tensor<float>({1, 1, 2}, {1, 2}))
                      .attr("q_num_heads", 1)
                      .attr("kv_num_heads", 1)
                      .attr("update_rule", "gated")
                      .run();
  EXPECT_FALSE(no_decay.ok());
  auto bad_heads = NodeTest("LinearAttention", 27)
                       .input(make_tensor<float>({1, 1, 6}, {1, 2, 3, 4, 5, 6}))
                       .input(make_tensor<float>({1, 1, 6}, {1, 2, 3, 4, 5, 6}))
                       .input(make_tensor<float>({1, 1, 6}, {1, 2, 3, 4, 5, 6}))
                       .attr("q_num_heads", 3)
                       .attr("kv_num_heads", 2)
                       .attr("update_rule", "linear")
                       .run();
  EXPECT_FALSE(bad_heads.ok());
}

}  // namespace
}  // namespace sy
