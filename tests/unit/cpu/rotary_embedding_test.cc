// RotaryEmbedding against a reference that computes each output element on
// its own from the spec's formulas: element j of a head is rotated with
// its partner (j +- dim/2, or its even/odd neighbour when interleaved) by
// the angle of row position_ids[b, s] (or row (b, s)) of the caches.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

struct Case {
  bool three_d = false;  // X [B, S, H * D] with num_heads, else [B, H, S, D]
  bool interleaved = false;
  int64_t rotary_dim = 0;  // 0: the whole head
  bool position_ids = true;
  int64_t batch = 2, heads = 3, seq = 4, head_size = 8;
  int64_t max_positions = 10;
};

std::vector<int64_t> x_shape(const Case& c) {
  if (c.three_d) return {c.batch, c.seq, c.heads * c.head_size};
  return {c.batch, c.heads, c.seq, c.head_size};
}

std::vector<float> rotary_ref(const Case& c, const std::vector<float>& x, const std::vector<float>& cos_cache,
                              const std::vector<float>& sin_cache, const std::vector<int64_t>& pos) {
  const int64_t dim = c.rotary_dim == 0 ? c.head_size : c.rotary_dim;
  const int64_t half = dim / 2;
  std::vector<float> y(x.size());
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t s = 0; s < c.seq; ++s) {
        const int64_t row = c.three_d ? ((b * c.seq + s) * c.heads + h) : ((b * c.heads + h) * c.seq + s);
        const float* xr = x.data() + row * c.head_size;
        float* yr = y.data() + row * c.head_size;
        const int64_t cache_row = c.position_ids ? pos[static_cast<size_t>(b * c.seq + s)] : b * c.seq + s;
        const float* cr = cos_cache.data() + cache_row * half;
        const float* sr = sin_cache.data() + cache_row * half;
        for (int64_t j = 0; j < c.head_size; ++j) {
          if (j >= dim) {
            yr[j] = xr[j];
          } else if (c.interleaved) {
            const int64_t k = j / 2;
            const double x1 = xr[2 * k], x2 = xr[2 * k + 1];
            yr[j] = static_cast<float>(j % 2 == 0 ? cr[k] * x1 - sr[k] * x2 : sr[k] * x1 + cr[k] * x2);
          } else if (j < half) {
            yr[j] = static_cast<float>(static_cast<double>(cr[j]) * xr[j] - static_cast<double>(sr[j]) * xr[j + half]);
          } else {
            const int64_t k = j - half;
            yr[j] = static_cast<float>(static_cast<double>(sr[k]) * xr[k] + static_cast<double>(cr[k]) * xr[j]);
          }
        }
      }
  return y;
}

void check(const Case& c, int threads = 1) {
  const std::vector<int64_t> xs = x_shape(c);
  const size_t n = static_cast<size_t>(c.batch * c.heads * c.seq * c.head_size);
  const int64_t half = (c.rotary_dim == 0 ? c.head_size : c.rotary_dim) / 2;
  const std::vector<int64_t> cache_shape =
      c.position_ids ? std::vector<int64_t>{c.max_positions, half} : std::vector<int64_t>{c.batch, c.seq, half};
  const size_t cache_n = static_cast<size_t>(cache_shape[0] * cache_shape[1] * (c.position_ids ? 1 : cache_shape[2]));
  const std::vector<float> x = random_floats(n, -2, 2, 1);
  const std::vector<float> cos_cache = random_floats(cache_n, -1, 1, 2);
  const std::vector<float> sin_cache = random_floats(cache_n, -1, 1, 3);
  std::vector<int64_t> pos;
  for (int64_t i = 0; i < c.batch * c.seq; ++i) pos.push_back((i * 7 + 3) % c.max_positions);
  NodeTest t("RotaryEmbedding", 23);
  t.input(make_tensor<float>(Shape(xs), x))
      .input(make_tensor<float>(Shape(cache_shape), cos_cache))
      .input(make_tensor<float>(Shape(cache_shape), sin_cache));
  if (c.position_ids) t.input(make_tensor<int64_t>({c.batch, c.seq}, pos));
  if (c.three_d) t.attr("num_heads", c.heads);
  if (c.interleaved) t.attr("interleaved", 1);
  if (c.rotary_dim != 0) t.attr("rotary_embedding_dim", c.rotary_dim);
  auto out = t.threads(threads).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>(Shape(xs), rotary_ref(c, x, cos_cache, sin_cache, pos)), 1e-5,
                     1e-6);
}

TEST(RotaryEmbedding, EveryLayoutModeAndCacheKind) {
  for (bool three_d : {false, true})
    for (bool interleaved : {false, true})
      for (int64_t rotary_dim : {int64_t{0}, int64_t{4}, int64_t{6}})
        for (bool position_ids : {false, true}) {
          SCOPED_TRACE(std::to_string(three_d) + std::to_string(interleaved) + std::to_string(rotary_dim) +
                       std::to_string(position_ids));
          check({.three_d = three_d, .interleaved = interleaved, .rotary_dim = rotary_dim,
                 .position_ids = position_ids});
        }
}

TEST(RotaryEmbedding, ManyRowsOnThreads) {
  check({.batch = 3, .heads = 8, .seq = 50, .head_size = 64, .max_positions = 128}, 3);
  check({.three_d = true, .interleaved = true, .rotary_dim = 32, .batch = 2, .heads = 4, .seq = 40, .head_size = 64},
        2);
}

TEST(RotaryEmbedding, QuarterTurnHandComputed) {
  // One head [1, 0, 0, 1] at position 1, whose angle has cos 0 and sin 1:
  // pairs (x0, x2) = (1, 0) and (x1, x3) = (0, 1) turn to (0, 1) and (-1, 0).
  auto out = NodeTest("RotaryEmbedding", 23)
                 .input(make_tensor<float>({1, 1, 1, 4}, {1, 0, 0, 1}))
                 .input(make_tensor<float>({2, 2}, {1, 1, 0, 0}))
                 .input(make_tensor<float>({2, 2}, {0, 0, 1, 1}))
                 .input(make_tensor<int64_t>({1, 1}, {1}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 1, 1, 4}, {0, -1, 1, 0}));
}

TEST(RotaryEmbedding, Float16ComputesInFloat) {
  // (x0, x1) = (2, 4) turned by cos 0.5, sin 0.5: (2*0.5 - 4*0.5, 2*0.5 + 4*0.5) = (-1, 3).
  auto half = [](const Shape& s, const std::vector<float>& v) {
    Tensor t = Tensor::allocate(DataType::kFloat16, s).value();
    for (size_t i = 0; i < v.size(); ++i) t.data<uint16_t>()[i] = float_to_float16(v[i]);
    return t;
  };
  auto out = NodeTest("RotaryEmbedding", 23)
                 .input(half({1, 1, 1, 2}, {2, 4}))
                 .input(half({1, 1, 1}, {0.5f}))
                 .input(half({1, 1, 1}, {0.5f}))
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_eq(out->at(0), half({1, 1, 1, 2}, {-1, 3}));
}

TEST(RotaryEmbedding, BadInputsAreErrors) {
  auto run = [](const std::vector<int64_t>& xs, const std::vector<int64_t>& cs, std::vector<int64_t> pos,
                 int64_t rotary_dim, int64_t num_heads) {
    int64_t xn = 1, cn = 1;
    for (int64_t d : xs) xn *= d;
    for (int64_t d : cs) cn *= d;
    NodeTest t("RotaryEmbedding", 23);
    t.input(make_tensor<float>(Shape(xs), std::vector<float>(static_cast<size_t>(xn), 1.0f)))
        .input(make_tensor<float>(Shape(cs), std::vector<float>(static_cast<size_t>(cn), 0.5f)))
        .input(make_tensor<float>(Shape(cs), std::vector<float>(static_cast<size_t>(cn), 0.5f)));
    if (!pos.empty()) t.input(make_tensor<int64_t>({1, static_cast<int64_t>(pos.size())}, pos));
    if (rotary_dim != 0) t.attr("rotary_embedding_dim", rotary_dim);
    if (num_heads != 0) t.attr("num_heads", num_heads);
    return t.run();
  };
  ASSERT_TRUE(run({1, 2, 3, 4}, {5, 2}, {0, 4, 2}, 0, 0).ok());
  auto outside = run({1, 2, 3, 4}, {5, 2}, {0, 5, 2}, 0, 0);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("position id 5"), std::string::npos) << outside.status().to_string();
  EXPECT_FALSE(run({1, 2, 3, 4}, {5, 2}, {0, -1, 2}, 0, 0).ok());
  EXPECT_FALSE(run({1, 2, 3, 4}, {5, 3}, {0, 1, 2}, 0, 0).ok());     // cache width is not head_size / 2
  EXPECT_FALSE(run({1, 2, 3, 4}, {5, 2}, {0, 1, 2}, 3, 0).ok());     // odd rotary dim
  EXPECT_FALSE(run({1, 2, 3, 4}, {5, 4}, {0, 1, 2}, 8, 0).ok());     // rotary dim above the head size
  EXPECT_FALSE(run({1, 3, 8}, {5, 2}, {0, 1, 2}, 0, 0).ok());        // 3-D needs num_heads
  EXPECT_FALSE(run({1, 3, 8}, {5, 2}, {0, 1, 2}, 0, 3).ok());        // 8 is not a multiple of 3 heads
  ASSERT_TRUE(run({1, 3, 8}, {5, 2}, {0, 1, 2}, 0, 2).ok());
  EXPECT_FALSE(run({1, 2, 3, 4}, {1, 2, 2}, {}, 0, 0).ok());         // 3-D caches must cover the sequence
  EXPECT_FALSE(run({2, 3, 4}, {5, 2}, {0, 1, 2}, 0, 0).ok());        // rank 3 without num_heads
}

}  // namespace
}  // namespace sy::testing
