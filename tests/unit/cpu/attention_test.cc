// Attention (opsets 23 to 25) against a plain double-precision reference
// written here: every score, bias and softmax spelled out per element.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

size_t at(int64_t i) { return static_cast<size_t>(i); }

// The reference, on 4-D data: q [B,Hq,S,D], k [B,Hkv,T,D], v [B,Hkv,T,Dv],
// where k and v already hold any cached keys in front.
struct Reference {
  int64_t B = 1, Hq = 1, Hkv = 1, S = 1, T = 1, D = 1, Dv = 1;
  std::vector<float> q, k, v;
  double scale = 0.0;  // 0: 1 / sqrt(D)
  double softcap = 0.0;
  // The additive bias of key j for query row i (mask, causal, padding...):
  // -inf masks the key. Empty: no bias.
  std::function<double(int64_t b, int64_t h, int64_t i, int64_t j)> bias;

  // Filled by run(), each [B,Hq,S,T]: the four qk_matmul_output modes.
  std::vector<double> raw, capped, biased, probs;

  // Y as [B,Hq,S,Dv].
  std::vector<float> run() {
    const double sc = scale != 0.0 ? scale : 1.0 / std::sqrt(static_cast<double>(D));
    const int64_t group = Hq / Hkv;
    raw.assign(at(B * Hq * S * T), 0.0);
    capped = biased = probs = raw;
    std::vector<float> y(at(B * Hq * S * Dv));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hq; ++h)
        for (int64_t i = 0; i < S; ++i) {
          const int64_t g = h / group;
          const int64_t row = ((b * Hq + h) * S + i) * T;
          bool all_masked = true;
          for (int64_t j = 0; j < T; ++j) {
            double dot = 0.0;
            for (int64_t c = 0; c < D; ++c)
              dot += static_cast<double>(q[at(((b * Hq + h) * S + i) * D + c)]) *
                     static_cast<double>(k[at(((b * Hkv + g) * T + j) * D + c)]);
            double s = sc * dot;
            raw[at(row + j)] = s;
            if (softcap != 0.0) s = softcap * std::tanh(s / softcap);
            capped[at(row + j)] = s;
            const double bj = bias ? bias(b, h, i, j) : 0.0;
            if (bj != -kInf) all_masked = false;
            biased[at(row + j)] = s + bj;
          }
          if (!all_masked) {
            double mx = -kInf;
            for (int64_t j = 0; j < T; ++j) mx = std::max(mx, biased[at(row + j)]);
            double sum = 0.0;
            for (int64_t j = 0; j < T; ++j) sum += std::exp(biased[at(row + j)] - mx);
            for (int64_t j = 0; j < T; ++j) probs[at(row + j)] = std::exp(biased[at(row + j)] - mx) / sum;
          }
          for (int64_t c = 0; c < Dv; ++c) {
            double acc = 0.0;
            for (int64_t j = 0; j < T; ++j)
              acc += probs[at(row + j)] * static_cast<double>(v[at(((b * Hkv + g) * T + j) * Dv + c)]);
            y[at(((b * Hq + h) * S + i) * Dv + c)] = static_cast<float>(acc);
          }
        }
    return y;
  }
};

// [B,H,N,d] -> [B,N,H*d]
std::vector<float> to_3d(const std::vector<float>& x, int64_t B, int64_t H, int64_t N, int64_t d) {
  std::vector<float> out(x.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < d; ++c)
          out[at(((b * N + n) * H + h) * d + c)] = x[at(((b * H + h) * N + n) * d + c)];
  return out;
}

// Keys [0, P) of `past` and [0, L) of `cur` along dim 2 of [B,H,*,d].
std::vector<float> concat_keys(const std::vector<float>& past, const std::vector<float>& cur, int64_t B, int64_t H,
                               int64_t P, int64_t L, int64_t d) {
  std::vector<float> out;
  for (int64_t bh = 0; bh < B * H; ++bh) {
    out.insert(out.end(), past.begin() + bh * P * d, past.begin() + (bh + 1) * P * d);
    out.insert(out.end(), cur.begin() + bh * L * d, cur.begin() + (bh + 1) * L * d);
  }
  return out;
}

std::vector<double> as_doubles(const std::vector<float>& v) { return {v.begin(), v.end()}; }

Tensor make_doubles(const Shape& shape, const std::vector<double>& values) { return make_tensor<double>(shape, values); }

// A reference with random q, k, v of the given sizes.
Reference random_case(int64_t B, int64_t Hq, int64_t Hkv, int64_t S, int64_t T, int64_t D, int64_t Dv,
                      uint32_t seed) {
  Reference r;
  r.B = B;
  r.Hq = Hq;
  r.Hkv = Hkv;
  r.S = S;
  r.T = T;
  r.D = D;
  r.Dv = Dv;
  r.q = random_floats(at(B * Hq * S * D), -1.0f, 1.0f, seed);
  r.k = random_floats(at(B * Hkv * T * D), -1.0f, 1.0f, seed + 1);
  r.v = random_floats(at(B * Hkv * T * Dv), -1.0f, 1.0f, seed + 2);
  return r;
}

TEST(Attention, FourDWithBertStyleFloatMask) {
  // B=2, H=3, S=L=16, D=8; mask [B,1,1,L] with padding at the end of batch 1.
  Reference r = random_case(2, 3, 3, 16, 16, 8, 8, 10);
  std::vector<float> mask(32, 0.0f);
  for (int j = 11; j < 16; ++j) mask[at(16 + j)] = -10000.0f;
  r.bias = [&](int64_t b, int64_t, int64_t, int64_t j) { return static_cast<double>(mask[at(b * 16 + j)]); };
  const std::vector<float> expected = r.run();
  auto out = NodeTest("Attention", 23)
                 .input(make_tensor<float>({2, 3, 16, 8}, r.q))
                 .input(make_tensor<float>({2, 3, 16, 8}, r.k))
                 .input(make_tensor<float>({2, 3, 16, 8}, r.v))
                 .input(make_tensor<float>({2, 1, 1, 16}, mask))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({2, 3, 16, 8}, expected), 1e-5, 1e-6);
}

TEST(Attention, BertShapeTwelveHeads) {
  // BERT-base's attention: B=1, H=12, S=L=128, D=64, mask [1,1,1,128].
  Reference r = random_case(1, 12, 12, 128, 128, 64, 64, 20);
  std::vector<float> mask(128, 0.0f);
  for (int j = 100; j < 128; ++j) mask[at(j)] = -10000.0f;
  r.bias = [&](int64_t, int64_t, int64_t, int64_t j) { return static_cast<double>(mask[at(j)]); };
  const std::vector<float> expected = r.run();
  for (int threads : {1, 2}) {
    auto out = NodeTest("Attention", 23)
                   .input(make_tensor<float>({1, 12, 128, 64}, r.q))
                   .input(make_tensor<float>({1, 12, 128, 64}, r.k))
                   .input(make_tensor<float>({1, 12, 128, 64}, r.v))
                   .input(make_tensor<float>({1, 1, 1, 128}, mask))
                   .threads(threads)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    SCOPED_TRACE("threads " + std::to_string(threads));
    expect_tensor_near(out->at(0), make_tensor<float>({1, 12, 128, 64}, expected), 1e-4, 1e-5);
  }
}

TEST(Attention, LargeScoresKeepKeysBehindAFiniteMask) {
  // The kernel skips keys whose -10000 bias puts them out of reach of the
  // row's max. Here the masked keys' scores are 10000 (q = k = 100 on one
  // axis, scale 1), so after the bias they tie with the open keys and take
  // half of each row's weight: they must not be skipped.
  constexpr int64_t T = 8;
  Reference r;
  r.S = 4;
  r.T = T;
  r.D = 2;
  r.Dv = 3;
  r.scale = 1.0;
  r.q = {100, 0, 100, 0, 100, 0, 100, 0};
  r.k.assign(at(T * 2), 0.0f);
  for (int64_t j = 0; j < T; ++j) r.k[at(j * 2 + (j < 2 || j >= 6 ? 0 : 1))] = j < 2 || j >= 6 ? 100.0f : 1e-3f;
  r.v = random_floats(at(T * 3), -1.0f, 1.0f, 31);
  std::vector<float> mask(T, 0.0f);
  for (int64_t j : {0, 1, 6, 7}) mask[at(j)] = -10000.0f;
  r.bias = [&](int64_t, int64_t, int64_t, int64_t j) { return static_cast<double>(mask[at(j)]); };
  const std::vector<float> expected = r.run();
  ASSERT_NEAR(r.probs[0], 0.125, 1e-3);  // key 0: masked, yet an eighth of row 0's weight
  auto out = NodeTest("Attention", 23)
                 .attr("scale", 1.0f)
                 .input(make_tensor<float>({1, 1, 4, 2}, r.q))
                 .input(make_tensor<float>({1, 1, T, 2}, r.k))
                 .input(make_tensor<float>({1, 1, T, 3}, r.v))
                 .input(make_tensor<float>({1, 1, 1, T}, mask))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 1, 4, 3}, expected), 1e-5, 1e-6);
}

TEST(Attention, BoolMaskWithAFullyMaskedRowGivesZeros) {
  // mask [S, L]: True attends. Row 2 has no True: its output is 0, not NaN.
  Reference r = random_case(1, 2, 2, 4, 5, 8, 6, 30);
  const std::vector<int> mask = {1, 0, 1, 1, 0,   //
                                 0, 0, 0, 0, 1,   //
                                 0, 0, 0, 0, 0,   //
                                 1, 1, 1, 1, 1};
  r.bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return mask[at(i * 5 + j)] ? 0.0 : -kInf; };
  const std::vector<float> expected = r.run();
  for (int opset : {23, 24, 25}) {
    auto out = NodeTest("Attention", opset)
                   .input(make_tensor<float>({1, 2, 4, 8}, r.q))
                   .input(make_tensor<float>({1, 2, 5, 8}, r.k))
                   .input(make_tensor<float>({1, 2, 5, 6}, r.v))
                   .input(make_bool_tensor({4, 5}, mask))
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    SCOPED_TRACE("opset " + std::to_string(opset));
    expect_tensor_near(out->at(0), make_tensor<float>({1, 2, 4, 6}, expected), 1e-5, 1e-6);
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t c = 0; c < 6; ++c) EXPECT_EQ(out->at(0).data<float>()[at((h * 4 + 2) * 6 + c)], 0.0f);
  }
}

TEST(Attention, CausalIsBottomRightAlignedWithThePast) {
  // No cache: query i attends keys j <= i (top-left for S < L).
  Reference r = random_case(2, 3, 3, 4, 6, 8, 8, 40);
  r.bias = [](int64_t, int64_t, int64_t i, int64_t j) { return j <= i ? 0.0 : -kInf; };
  const std::vector<float> expected = r.run();
  auto out = NodeTest("Attention", 23)
                 .input(make_tensor<float>({2, 3, 4, 8}, r.q))
                 .input(make_tensor<float>({2, 3, 6, 8}, r.k))
                 .input(make_tensor<float>({2, 3, 6, 8}, r.v))
                 .attr("is_causal", 1)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({2, 3, 4, 8}, expected), 1e-5, 1e-6);

  // With a cache of P = 5 keys: query i attends keys j <= i + 5.
  const int64_t P = 5, L = 3;
  Reference c = random_case(1, 2, 2, 3, P + L, 4, 4, 41);
  c.bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return j <= i + P ? 0.0 : -kInf; };
  const std::vector<float> past_k = random_floats(at(2 * P * 4), -1, 1, 42);
  const std::vector<float> past_v = random_floats(at(2 * P * 4), -1, 1, 43);
  const std::vector<float> cur_k = random_floats(at(2 * L * 4), -1, 1, 44);
  const std::vector<float> cur_v = random_floats(at(2 * L * 4), -1, 1, 45);
  c.k = concat_keys(past_k, cur_k, 1, 2, P, L, 4);
  c.v = concat_keys(past_v, cur_v, 1, 2, P, L, 4);
  const std::vector<float> expected_c = c.run();
  auto cached = NodeTest("Attention", 24)
                    .input(make_tensor<float>({1, 2, 3, 4}, c.q))
                    .input(make_tensor<float>({1, 2, L, 4}, cur_k))
                    .input(make_tensor<float>({1, 2, L, 4}, cur_v))
                    .missing_input()
                    .input(make_tensor<float>({1, 2, P, 4}, past_k))
                    .input(make_tensor<float>({1, 2, P, 4}, past_v))
                    .attr("is_causal", 1)
                    .run();
  ASSERT_TRUE(cached.ok()) << cached.status().to_string();
  expect_tensor_near(cached->at(0), make_tensor<float>({1, 2, 3, 4}, expected_c), 1e-5, 1e-6);
}

TEST(Attention, GroupedQueryHeads) {
  // 6 query heads share 2 key/value heads (3 each); MQA: 4 share 1.
  for (int64_t kv_heads : {2, 1}) {
    const int64_t q_heads = kv_heads == 2 ? 6 : 4;
    Reference r = random_case(2, q_heads, kv_heads, 5, 7, 8, 4, 50);
    const std::vector<float> expected = r.run();
    auto out = NodeTest("Attention", 23)
                   .input(make_tensor<float>({2, q_heads, 5, 8}, r.q))
                   .input(make_tensor<float>({2, kv_heads, 7, 8}, r.k))
                   .input(make_tensor<float>({2, kv_heads, 7, 4}, r.v))
                   .threads(2)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    SCOPED_TRACE("kv heads " + std::to_string(kv_heads));
    expect_tensor_near(out->at(0), make_tensor<float>({2, q_heads, 5, 4}, expected), 1e-5, 1e-6);
  }
}

TEST(Attention, ThreeDInputsWithHeadAttributes) {
  // Q [B,S,Hq*D], K [B,L,Hkv*D], V [B,L,Hkv*Dv]; Y [B,S,Hq*Dv]. GQA, Dv != D,
  // explicit scale, float mask [S, L].
  const int64_t B = 2, Hq = 4, Hkv = 2, S = 3, L = 5, D = 6, Dv = 10;
  Reference r = random_case(B, Hq, Hkv, S, L, D, Dv, 60);
  r.scale = 0.25;
  const std::vector<float> mask = random_floats(at(S * L), -2, 2, 61);
  r.bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return static_cast<double>(mask[at(i * L + j)]); };
  const std::vector<float> expected = to_3d(r.run(), B, Hq, S, Dv);
  auto out = NodeTest("Attention", 23)
                 .input(make_tensor<float>({B, S, Hq * D}, to_3d(r.q, B, Hq, S, D)))
                 .input(make_tensor<float>({B, L, Hkv * D}, to_3d(r.k, B, Hkv, L, D)))
                 .input(make_tensor<float>({B, L, Hkv * Dv}, to_3d(r.v, B, Hkv, L, Dv)))
                 .input(make_tensor<float>({S, L}, mask))
                 .attr("q_num_heads", Hq)
                 .attr("kv_num_heads", Hkv)
                 .attr("scale", 0.25f)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({B, S, Hq * Dv}, expected), 1e-5, 1e-6);
}

TEST(Attention, PastAndPresentKeysAndValues) {
  // 3-D K and V for the new tokens, 4-D caches; present = concat(past, new).
  const int64_t B = 2, H = 3, S = 2, P = 4, L = 2, D = 4, Dv = 5, T = P + L;
  Reference r = random_case(B, H, H, S, T, D, Dv, 70);
  const std::vector<float> past_k = random_floats(at(B * H * P * D), -1, 1, 71);
  const std::vector<float> past_v = random_floats(at(B * H * P * Dv), -1, 1, 72);
  const std::vector<float> cur_k = random_floats(at(B * H * L * D), -1, 1, 73);
  const std::vector<float> cur_v = random_floats(at(B * H * L * Dv), -1, 1, 74);
  r.k = concat_keys(past_k, cur_k, B, H, P, L, D);
  r.v = concat_keys(past_v, cur_v, B, H, P, L, Dv);
  const std::vector<float> mask = random_floats(at(S * T), -1, 1, 75);
  r.bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return static_cast<double>(mask[at(i * T + j)]); };
  const std::vector<float> expected = to_3d(r.run(), B, H, S, Dv);
  for (int outputs : {3, 1}) {  // with present outputs, and without (past read where it lies)
    auto out = NodeTest("Attention", 23)
                   .input(make_tensor<float>({B, S, H * D}, to_3d(r.q, B, H, S, D)))
                   .input(make_tensor<float>({B, L, H * D}, to_3d(cur_k, B, H, L, D)))
                   .input(make_tensor<float>({B, L, H * Dv}, to_3d(cur_v, B, H, L, Dv)))
                   .input(make_tensor<float>({S, T}, mask))
                   .input(make_tensor<float>({B, H, P, D}, past_k))
                   .input(make_tensor<float>({B, H, P, Dv}, past_v))
                   .attr("q_num_heads", H)
                   .attr("kv_num_heads", H)
                   .outputs(outputs)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    SCOPED_TRACE("outputs " + std::to_string(outputs));
    expect_tensor_near(out->at(0), make_tensor<float>({B, S, H * Dv}, expected), 1e-5, 1e-6);
    if (outputs == 3) {
      expect_tensor_eq(out->at(1), make_tensor<float>({B, H, T, D}, r.k));
      expect_tensor_eq(out->at(2), make_tensor<float>({B, H, T, Dv}, r.v));
    }
  }
}

TEST(Attention, SoftcapAppliesBeforeTheMask) {
  // A -inf mask survives the softcap: masked keys get no weight.
  Reference r = random_case(1, 2, 2, 4, 6, 8, 8, 80);
  for (float& x : r.q) x *= 4.0f;  // scores large enough for the cap to bite
  r.softcap = 0.5;
  r.bias = [](int64_t, int64_t, int64_t, int64_t j) { return j >= 4 ? -kInf : 0.0; };
  std::vector<float> mask(24, 0.0f);
  for (int i = 0; i < 4; ++i) mask[at(i * 6 + 4)] = mask[at(i * 6 + 5)] = -INFINITY;
  const std::vector<float> expected = r.run();
  auto out = NodeTest("Attention", 23)
                 .input(make_tensor<float>({1, 2, 4, 8}, r.q))
                 .input(make_tensor<float>({1, 2, 6, 8}, r.k))
                 .input(make_tensor<float>({1, 2, 6, 8}, r.v))
                 .input(make_tensor<float>({4, 6}, mask))
                 .attr("softcap", 0.5f)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 2, 4, 8}, expected), 1e-5, 1e-6);
}

TEST(Attention, FewHeadsSplitQueryRowsAcrossThreads) {
  // B*H = 1 < threads: the 64 query rows are cut into blocks, and causal
  // blocks compute only the keys their rows attend.
  Reference r = random_case(1, 1, 1, 64, 64, 16, 16, 90);
  r.bias = [](int64_t, int64_t, int64_t i, int64_t j) { return j <= i ? 0.0 : -kInf; };
  const std::vector<float> expected = r.run();
  for (int threads : {2, 3}) {
    auto out = NodeTest("Attention", 23)
                   .input(make_tensor<float>({1, 1, 64, 16}, r.q))
                   .input(make_tensor<float>({1, 1, 64, 16}, r.k))
                   .input(make_tensor<float>({1, 1, 64, 16}, r.v))
                   .attr("is_causal", 1)
                   .threads(threads)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    SCOPED_TRACE("threads " + std::to_string(threads));
    expect_tensor_near(out->at(0), make_tensor<float>({1, 1, 64, 16}, expected), 1e-5, 1e-6);
  }
}

TEST(Attention, LongKeysWithCacheInSeveralBlocks) {
  // T = 300 keys gives blocks of fewer rows than S; causal with a cache of
  // 230, read where it lies (no present outputs) and through present.
  const int64_t B = 1, Hq = 4, Hkv = 2, S = 70, P = 230, L = 70, D = 16, T = P + L;
  Reference r = random_case(B, Hq, Hkv, S, T, D, D, 100);
  r.bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return j <= i + P ? 0.0 : -kInf; };
  const std::vector<float> expected = r.run();
  std::vector<float> past_k, cur_k, past_v, cur_v;
  for (int64_t bh = 0; bh < B * Hkv; ++bh) {
    past_k.insert(past_k.end(), r.k.begin() + bh * T * D, r.k.begin() + (bh * T + P) * D);
    cur_k.insert(cur_k.end(), r.k.begin() + (bh * T + P) * D, r.k.begin() + (bh + 1) * T * D);
    past_v.insert(past_v.end(), r.v.begin() + bh * T * D, r.v.begin() + (bh * T + P) * D);
    cur_v.insert(cur_v.end(), r.v.begin() + (bh * T + P) * D, r.v.begin() + (bh + 1) * T * D);
  }
  for (int outputs : {1, 3}) {
    auto out = NodeTest("Attention", 24)
                   .input(make_tensor<float>({B, Hq, S, D}, r.q))
                   .input(make_tensor<float>({B, Hkv, L, D}, cur_k))
                   .input(make_tensor<float>({B, Hkv, L, D}, cur_v))
                   .missing_input()
                   .input(make_tensor<float>({B, Hkv, P, D}, past_k))
                   .input(make_tensor<float>({B, Hkv, P, D}, past_v))
                   .attr("is_causal", 1)
                   .outputs(outputs)
                   .threads(2)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    SCOPED_TRACE("outputs " + std::to_string(outputs));
    expect_tensor_near(out->at(0), make_tensor<float>({B, Hq, S, D}, expected), 1e-5, 1e-6);
  }
}

TEST(Attention, QkMatmulOutputModes) {
  // Mask [S, T] with row 1 fully -inf: mode 2 keeps the -inf, mode 3 (the
  // probabilities) is a zero row like Y's.
  Reference r = random_case(1, 2, 2, 3, 4, 8, 8, 110);
  r.softcap = 1.5;
  std::vector<float> mask = random_floats(12, -1, 1, 111);
  for (int j = 0; j < 4; ++j) mask[at(4 + j)] = -INFINITY;
  mask[0] = -INFINITY;
  r.bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return static_cast<double>(mask[at(i * 4 + j)]); };
  const std::vector<float> expected = r.run();
  const std::vector<std::vector<double>*> modes = {&r.raw, &r.capped, &r.biased, &r.probs};
  for (int mode = 0; mode < 4; ++mode) {
    auto out = NodeTest("Attention", 23)
                   .input(make_tensor<float>({1, 2, 3, 8}, r.q))
                   .input(make_tensor<float>({1, 2, 4, 8}, r.k))
                   .input(make_tensor<float>({1, 2, 4, 8}, r.v))
                   .input(make_tensor<float>({3, 4}, mask))
                   .attr("softcap", 1.5f)
                   .attr("qk_matmul_output_mode", mode)
                   .outputs(4)
                   .run();
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    SCOPED_TRACE("mode " + std::to_string(mode));
    expect_tensor_near(out->at(0), make_tensor<float>({1, 2, 3, 8}, expected), 1e-5, 1e-6);
    std::vector<float> qk(modes[at(mode)]->begin(), modes[at(mode)]->end());
    expect_tensor_near(out->at(3), make_tensor<float>({1, 2, 3, 4}, qk), 1e-5, 1e-6);
  }
}

TEST(Attention, NonpadLengthsMaskPaddingAndOffsetTheCausalFrontier) {
  // Opset 24, external cache: keys j >= nonpad[b] are padding; causal
  // offset nonpad[b] - S. Batch 1 has offset -1, so its row 0 attends
  // nothing and is 0.
  const int64_t B = 2, H = 2, S = 3, L = 6;
  const std::vector<int64_t> nonpad = {4, 2};
  Reference r = random_case(B, H, H, S, L, 8, 8, 120);
  r.bias = [&](int64_t b, int64_t, int64_t i, int64_t j) {
    return j < nonpad[at(b)] && j <= i + nonpad[at(b)] - S ? 0.0 : -kInf;
  };
  const std::vector<float> expected = r.run();
  auto out = NodeTest("Attention", 24)
                 .input(make_tensor<float>({B, H, S, 8}, r.q))
                 .input(make_tensor<float>({B, H, L, 8}, r.k))
                 .input(make_tensor<float>({B, H, L, 8}, r.v))
                 .missing_input()
                 .missing_input()
                 .missing_input()
                 .input(make_tensor<int64_t>({B}, nonpad))
                 .attr("is_causal", 1)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({B, H, S, 8}, expected), 1e-5, 1e-6);

  // Without is_causal only the padding counts; a mask shorter than the keys
  // is padded with -inf (opset 24).
  const std::vector<float> mask = random_floats(at(S * 4), -1, 1, 121);
  Reference p = r;
  p.bias = [&](int64_t b, int64_t, int64_t i, int64_t j) {
    return j < nonpad[at(b)] && j < 4 ? static_cast<double>(mask[at(i * 4 + j)]) : -kInf;
  };
  const std::vector<float> expected_p = p.run();
  auto padded = NodeTest("Attention", 24)
                    .input(make_tensor<float>({B, H, S, 8}, r.q))
                    .input(make_tensor<float>({B, H, L, 8}, r.k))
                    .input(make_tensor<float>({B, H, L, 8}, r.v))
                    .input(make_tensor<float>({S, 4}, mask))
                    .missing_input()
                    .missing_input()
                    .input(make_tensor<int64_t>({B}, nonpad))
                    .run();
  ASSERT_TRUE(padded.ok()) << padded.status().to_string();
  expect_tensor_near(padded->at(0), make_tensor<float>({B, H, S, 8}, expected_p), 1e-5, 1e-6);
}

TEST(Attention, SlidingWindowsFromOpset25) {
  // Bidirectional window: query i attends keys [i - 1, i + 2].
  Reference r = random_case(1, 2, 2, 5, 5, 4, 4, 130);
  r.bias = [](int64_t, int64_t, int64_t i, int64_t j) { return j >= i - 1 && j <= i + 2 ? 0.0 : -kInf; };
  const std::vector<float> expected = r.run();
  auto out = NodeTest("Attention", 25)
                 .input(make_tensor<float>({1, 2, 5, 4}, r.q))
                 .input(make_tensor<float>({1, 2, 5, 4}, r.k))
                 .input(make_tensor<float>({1, 2, 5, 4}, r.v))
                 .attr("left_window_size", 1)
                 .attr("right_window_size", 2)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 2, 5, 4}, expected), 1e-5, 1e-6);

  // Causal left window of 2 with a cache of 3: position p = 3 + i attends [p - 2, p].
  const int64_t P = 3, L = 4;
  Reference c = random_case(1, 1, 1, 4, P + L, 4, 4, 131);
  c.bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return j >= i + P - 2 && j <= i + P ? 0.0 : -kInf; };
  const std::vector<float> expected_c = c.run();
  std::vector<float> past_k(c.k.begin(), c.k.begin() + P * 4), cur_k(c.k.begin() + P * 4, c.k.end());
  std::vector<float> past_v(c.v.begin(), c.v.begin() + P * 4), cur_v(c.v.begin() + P * 4, c.v.end());
  auto cached = NodeTest("Attention", 25)
                    .input(make_tensor<float>({1, 1, 4, 4}, c.q))
                    .input(make_tensor<float>({1, 1, L, 4}, cur_k))
                    .input(make_tensor<float>({1, 1, L, 4}, cur_v))
                    .missing_input()
                    .input(make_tensor<float>({1, 1, P, 4}, past_k))
                    .input(make_tensor<float>({1, 1, P, 4}, past_v))
                    .attr("is_causal", 1)
                    .attr("left_window_size", 2)
                    .run();
  ASSERT_TRUE(cached.ok()) << cached.status().to_string();
  expect_tensor_near(cached->at(0), make_tensor<float>({1, 1, 4, 4}, expected_c), 1e-5, 1e-6);

  // Before opset 25 the window attributes do not exist and change nothing.
  Reference plain = r;
  plain.bias = nullptr;
  const std::vector<float> expected_plain = plain.run();
  auto v24 = NodeTest("Attention", 24)
                 .input(make_tensor<float>({1, 2, 5, 4}, r.q))
                 .input(make_tensor<float>({1, 2, 5, 4}, r.k))
                 .input(make_tensor<float>({1, 2, 5, 4}, r.v))
                 .attr("left_window_size", 1)
                 .run();
  ASSERT_TRUE(v24.ok()) << v24.status().to_string();
  expect_tensor_near(v24->at(0), make_tensor<float>({1, 2, 5, 4}, expected_plain), 1e-5, 1e-6);
}

TEST(Attention, DoubleAndFloat16) {
  Reference r = random_case(1, 2, 1, 3, 5, 4, 4, 140);
  r.bias = [](int64_t, int64_t, int64_t i, int64_t j) { return j <= i ? 0.0 : -kInf; };
  const std::vector<float> expected = r.run();
  // The same values in double: the kernel runs in double.
  auto d = NodeTest("Attention", 23)
               .input(make_doubles({1, 2, 3, 4}, as_doubles(r.q)))
               .input(make_doubles({1, 1, 5, 4}, as_doubles(r.k)))
               .input(make_doubles({1, 1, 5, 4}, as_doubles(r.v)))
               .attr("is_causal", 1)
               .run();
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  // expected was rounded to float; compare at float precision.
  expect_tensor_near(d->at(0), make_doubles({1, 2, 3, 4}, as_doubles(expected)), 1e-6, 1e-7);

  // float16: inputs rounded to half, computed in float, rounded once.
  auto half = [](const Shape& s, std::vector<float>& v) {
    Tensor t = Tensor::allocate(DataType::kFloat16, s).value();
    for (size_t i = 0; i < v.size(); ++i) {
      t.data<uint16_t>()[i] = float_to_float16(v[i]);
      v[i] = float16_to_float(t.data<uint16_t>()[i]);
    }
    return t;
  };
  Reference h = r;
  const Tensor hq = half({1, 2, 3, 4}, h.q);
  const Tensor hk = half({1, 1, 5, 4}, h.k);
  const Tensor hv = half({1, 1, 5, 4}, h.v);
  std::vector<float> expected_h = h.run();
  const Tensor want = half({1, 2, 3, 4}, expected_h);
  auto f16 = NodeTest("Attention", 23).input(hq).input(hk).input(hv).attr("is_causal", 1).run();
  ASSERT_TRUE(f16.ok()) << f16.status().to_string();
  expect_tensor_near(f16->at(0), want, 2e-3, 1e-4);
}

TEST(Attention, CausalBoolMaskTensorInBlocks) {
  // A lower-triangular bool mask [S, T] (GPT-2's form) and the same as a
  // float mask of 0 / -inf: rows attend keys j <= i. Blocks narrow to the
  // keys their rows attend; qk_matmul_output (modes 2 and 3) still holds
  // every key.
  const int64_t S = 96, T = 96;
  Reference r = random_case(1, 2, 2, S, T, 16, 8, 150);
  r.bias = [](int64_t, int64_t, int64_t i, int64_t j) { return j <= i ? 0.0 : -kInf; };
  const std::vector<float> expected = r.run();
  std::vector<int> bool_mask(at(S * T));
  std::vector<float> float_mask(at(S * T));
  for (int64_t i = 0; i < S; ++i)
    for (int64_t j = 0; j < T; ++j) {
      bool_mask[at(i * T + j)] = j <= i;
      float_mask[at(i * T + j)] = j <= i ? 0.0f : -INFINITY;
    }
  for (int mode : {2, 3}) {
    for (bool use_bool : {true, false}) {
      auto out = NodeTest("Attention", 24)
                     .input(make_tensor<float>({1, 2, S, 16}, r.q))
                     .input(make_tensor<float>({1, 2, T, 16}, r.k))
                     .input(make_tensor<float>({1, 2, T, 8}, r.v))
                     .input(use_bool ? make_bool_tensor({S, T}, bool_mask) : make_tensor<float>({S, T}, float_mask))
                     .attr("qk_matmul_output_mode", mode)
                     .outputs(4)
                     .threads(2)
                     .run();
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      SCOPED_TRACE(std::string(use_bool ? "bool" : "float") + " mask, mode " + std::to_string(mode));
      expect_tensor_near(out->at(0), make_tensor<float>({1, 2, S, 8}, expected), 1e-5, 1e-6);
      const std::vector<double>& want = mode == 2 ? r.biased : r.probs;
      expect_tensor_near(out->at(3), make_tensor<float>({1, 2, S, T}, std::vector<float>(want.begin(), want.end())),
                         1e-5, 1e-6);
    }
  }
}

TEST(Attention, EdgeShapes) {
  // No keys at all: every row is fully masked, Y is 0.
  auto no_keys = NodeTest("Attention", 23)
                     .input(make_tensor<float>({1, 2, 3, 4}, std::vector<float>(24, 0.5f)))
                     .input(make_tensor<float>({1, 2, 0, 4}, {}))
                     .input(make_tensor<float>({1, 2, 0, 5}, {}))
                     .run();
  ASSERT_TRUE(no_keys.ok()) << no_keys.status().to_string();
  expect_tensor_eq(no_keys->at(0), make_tensor<float>({1, 2, 3, 5}, std::vector<float>(30, 0.0f)));
  // No queries: Y is empty.
  auto no_queries = NodeTest("Attention", 23)
                        .input(make_tensor<float>({1, 2, 0, 4}, {}))
                        .input(make_tensor<float>({1, 2, 3, 4}, std::vector<float>(24, 0.5f)))
                        .input(make_tensor<float>({1, 2, 3, 4}, std::vector<float>(24, 0.5f)))
                        .run();
  ASSERT_TRUE(no_queries.ok()) << no_queries.status().to_string();
  EXPECT_EQ(no_queries->at(0).shape(), (Shape{1, 2, 0, 4}));
  // Opset 23 broadcasts a mask whose last dim is 1 over every key.
  Reference r = random_case(1, 1, 1, 3, 4, 4, 4, 160);
  const std::vector<float> column = {0.5f, -INFINITY, -1.0f};
  r.bias = [&](int64_t, int64_t, int64_t i, int64_t) { return static_cast<double>(column[at(i)]); };
  const std::vector<float> expected = r.run();
  auto broadcast = NodeTest("Attention", 23)
                       .input(make_tensor<float>({1, 1, 3, 4}, r.q))
                       .input(make_tensor<float>({1, 1, 4, 4}, r.k))
                       .input(make_tensor<float>({1, 1, 4, 4}, r.v))
                       .input(make_tensor<float>({3, 1}, column))
                       .run();
  ASSERT_TRUE(broadcast.ok()) << broadcast.status().to_string();
  expect_tensor_near(broadcast->at(0), make_tensor<float>({1, 1, 3, 4}, expected), 1e-5, 1e-6);
}

TEST(Attention, BFloat16AndAValueTypeOfItsOwn) {
  Reference r = random_case(1, 2, 2, 3, 4, 8, 4, 170);
  // bfloat16 Q, K, V: rounded inputs, float inside, one rounding out.
  auto bf16 = [](const Shape& s, std::vector<float>& v) {
    Tensor t = Tensor::allocate(DataType::kBfloat16, s).value();
    for (size_t i = 0; i < v.size(); ++i) {
      t.data<uint16_t>()[i] = float_to_bfloat16(v[i]);
      v[i] = bfloat16_to_float(t.data<uint16_t>()[i]);
    }
    return t;
  };
  Reference b = r;
  const Tensor bq = bf16({1, 2, 3, 8}, b.q);
  const Tensor bk = bf16({1, 2, 4, 8}, b.k);
  const Tensor bv = bf16({1, 2, 4, 4}, b.v);
  std::vector<float> expected_b = b.run();
  const Tensor want_b = bf16({1, 2, 3, 4}, expected_b);
  auto out_b = NodeTest("Attention", 23).input(bq).input(bk).input(bv).run();
  ASSERT_TRUE(out_b.ok()) << out_b.status().to_string();
  expect_tensor_near(out_b->at(0), want_b, 1e-2, 1e-3);

  // V (type T2) may differ from Q and K (T1): Y has Q's type.
  const std::vector<float> expected = r.run();
  auto mixed = NodeTest("Attention", 23)
                   .input(make_tensor<float>({1, 2, 3, 8}, r.q))
                   .input(make_tensor<float>({1, 2, 4, 8}, r.k))
                   .input(make_doubles({1, 2, 4, 4}, as_doubles(r.v)))
                   .run();
  ASSERT_TRUE(mixed.ok()) << mixed.status().to_string();
  expect_tensor_near(mixed->at(0), make_tensor<float>({1, 2, 3, 4}, expected), 1e-5, 1e-6);
}

TEST(Attention, InferredOutputShapes) {
  // 3-D Q with GQA and Dv != D, a cache of 4: Y [2,3,4*5], present [2,2,7,6] and [2,2,7,5], qk [2,4,3,7].
  NodeTest t("Attention", 23);
  t.input(make_tensor<float>({2, 3, 24}, std::vector<float>(144, 0.1f)))
      .input(make_tensor<float>({2, 3, 12}, std::vector<float>(72, 0.1f)))
      .input(make_tensor<float>({2, 3, 10}, std::vector<float>(60, 0.1f)))
      .missing_input()
      .input(make_tensor<float>({2, 2, 4, 6}, std::vector<float>(96, 0.1f)))
      .input(make_tensor<float>({2, 2, 4, 5}, std::vector<float>(80, 0.1f)))
      .attr("q_num_heads", 4)
      .attr("kv_num_heads", 2)
      .outputs(4);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const Graph& g = t.graph();
  auto shape_of = [&](size_t i) { return g.values[static_cast<size_t>(g.outputs[i])].type.shape_string(); };
  EXPECT_EQ(shape_of(0), "[2,3,20]");
  EXPECT_EQ(shape_of(1), "[2,2,7,6]");
  EXPECT_EQ(shape_of(2), "[2,2,7,5]");
  EXPECT_EQ(shape_of(3), "[2,4,3,7]");
  EXPECT_EQ(out->at(0).shape(), (Shape{2, 3, 20}));
  EXPECT_EQ(out->at(3).shape(), (Shape{2, 4, 3, 7}));

  // Unknown dims resolve without error; Y keeps its rank.
  NodeTest u("Attention", 23);
  u.input(make_tensor<float>({1, 2, 8}, std::vector<float>(16, 0.1f)))
      .input(make_tensor<float>({1, 2, 8}, std::vector<float>(16, 0.1f)))
      .input(make_tensor<float>({1, 2, 8}, std::vector<float>(16, 0.1f)))
      .attr("q_num_heads", 2)
      .attr("kv_num_heads", 2)
      .dynamic_shapes();
  auto dyn = u.run();
  ASSERT_TRUE(dyn.ok()) << dyn.status().to_string();
  EXPECT_EQ(u.graph().values[static_cast<size_t>(u.graph().outputs[0])].type.rank(), 3u);
  EXPECT_EQ(dyn->at(0).shape(), (Shape{1, 2, 8}));
}

TEST(Attention, BadInputsAreErrorsThatSayWhy) {
  auto expect_error = [](Result<std::vector<Tensor>> r, const std::string& words) {
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().to_string().find(words), std::string::npos) << r.status().to_string();
  };
  const std::vector<float> x(4 * 8, 0.5f);
  // K's head size differs from Q's.
  expect_error(NodeTest("Attention", 23)
                   .input(make_tensor<float>({1, 1, 4, 8}, x))
                   .input(make_tensor<float>({1, 1, 4, 6}, std::vector<float>(24, 0.5f)))
                   .input(make_tensor<float>({1, 1, 4, 8}, x))
                   .run(),
               "head sizes");
  // The same with shapes known only at run time: the kernel says it.
  expect_error(NodeTest("Attention", 23)
                   .input(make_tensor<float>({1, 1, 4, 8}, x))
                   .input(make_tensor<float>({1, 1, 4, 6}, std::vector<float>(24, 0.5f)))
                   .input(make_tensor<float>({1, 1, 4, 8}, x))
                   .dynamic_shapes()
                   .run(),
               "head sizes");
  // Query heads not a multiple of key/value heads.
  expect_error(NodeTest("Attention", 23)
                   .input(make_tensor<float>({1, 3, 4, 8}, std::vector<float>(96, 0.5f)))
                   .input(make_tensor<float>({1, 2, 4, 8}, std::vector<float>(64, 0.5f)))
                   .input(make_tensor<float>({1, 2, 4, 8}, std::vector<float>(64, 0.5f)))
                   .dynamic_shapes()
                   .run(),
               "multiple");
  // A mask that does not broadcast.
  expect_error(NodeTest("Attention", 23)
                   .input(make_tensor<float>({1, 1, 4, 8}, x))
                   .input(make_tensor<float>({1, 1, 4, 8}, x))
                   .input(make_tensor<float>({1, 1, 4, 8}, x))
                   .input(make_tensor<float>({3, 4}, std::vector<float>(12, 0.0f)))
                   .run(),
               "attn_mask");
  // 3-D inputs without the heads attributes.
  expect_error(NodeTest("Attention", 23)
                   .input(make_tensor<float>({1, 4, 8}, x))
                   .input(make_tensor<float>({1, 4, 8}, x))
                   .input(make_tensor<float>({1, 4, 8}, x))
                   .run(),
               "q_num_heads");
  // A bad qk_matmul_output_mode.
  expect_error(NodeTest("Attention", 23)
                   .input(make_tensor<float>({1, 1, 4, 8}, x))
                   .input(make_tensor<float>({1, 1, 4, 8}, x))
                   .input(make_tensor<float>({1, 1, 4, 8}, x))
                   .attr("qk_matmul_output_mode", 7)
                   .run(),
               "qk_matmul_output_mode");
}

}  // namespace
}  // namespace sy::testing
