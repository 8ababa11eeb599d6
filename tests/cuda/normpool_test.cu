// Host tests of the index math behind the CUDA normalization, reduction and
// pooling kernels (src/providers/cuda/normpool_index.cuh): the pooling
// output shape and windows against hand-computed values and a naive
// reference, the reduction plan against brute-force enumeration, and the
// online-softmax and ArgMax combines under the same reduction trees the
// warp and block kernels use.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "providers/cuda/normpool_index.cuh"

namespace sy::cuda::normpool {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// ---- axis_layout -------------------------------------------------------------------------

TEST(NormPoolAxisLayout, SplitsOuterNInner) {
  const int64_t dims[] = {2, 3, 4, 5};
  int64_t outer, n, inner;
  ASSERT_TRUE(axis_layout(4, dims, -1, false, outer, n, inner));
  EXPECT_EQ(outer, 24);
  EXPECT_EQ(n, 5);
  EXPECT_EQ(inner, 1);
  ASSERT_TRUE(axis_layout(4, dims, 1, false, outer, n, inner));
  EXPECT_EQ(outer, 2);
  EXPECT_EQ(n, 3);
  EXPECT_EQ(inner, 20);
  // Softmax before opset 13: [prod(dims[:axis]), prod(dims[axis:])].
  ASSERT_TRUE(axis_layout(4, dims, 1, true, outer, n, inner));
  EXPECT_EQ(outer, 2);
  EXPECT_EQ(n, 60);
  EXPECT_EQ(inner, 1);
  ASSERT_TRUE(axis_layout(4, dims, 0, true, outer, n, inner));
  EXPECT_EQ(outer, 1);
  EXPECT_EQ(n, 120);
  EXPECT_FALSE(axis_layout(4, dims, 4, false, outer, n, inner));
  EXPECT_FALSE(axis_layout(4, dims, -5, false, outer, n, inner));
  // A scalar is one row of one element.
  ASSERT_TRUE(axis_layout(0, dims, -1, false, outer, n, inner));
  EXPECT_EQ(outer * n * inner, 1);
  EXPECT_FALSE(axis_layout(0, dims, 1, false, outer, n, inner));
}

// ---- reduction trees as the kernels run them ------------------------------------------------

// `width` lanes take elements j = lane, lane + width, ...; then a warp
// butterfly (xor 16..1) inside each group of 32 lanes, then the warps'
// results in order (group_allreduce with kBlock when width > 32).
template <typename V, typename Add, typename Combine>
V tree_reduce(const std::vector<float>& x, int width, V empty, Add add, Combine combine) {
  std::vector<V> lanes(static_cast<size_t>(width), empty);
  for (size_t j = 0; j < x.size(); ++j) lanes[j % width] = add(lanes[j % width], x[j], static_cast<int64_t>(j));
  for (int w = 0; w < width / 32; ++w) {
    for (int mask = 16; mask > 0; mask >>= 1) {
      std::vector<V> next(32, empty);
      for (int l = 0; l < 32; ++l) next[l] = combine(lanes[w * 32 + l], lanes[w * 32 + (l ^ mask)]);
      for (int l = 0; l < 32; ++l) lanes[w * 32 + l] = next[l];
    }
  }
  V r = lanes[0];
  for (int w = 1; w < width / 32; ++w) r = combine(r, lanes[w * 32]);
  return r;
}

MaxSum softmax_stats(const std::vector<float>& x, int width) {
  return tree_reduce<MaxSum>(
      x, width, max_sum_empty(), [](MaxSum a, float v, int64_t) { return max_sum_add(a, v); },
      [](MaxSum a, MaxSum b) { return max_sum_combine(a, b); });
}

TEST(NormPoolOnlineSoftmax, MatchesTwoPassStatistics) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 4.0f);
  for (const int64_t n : {1, 5, 31, 32, 33, 128, 1000, 4099, 30522}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = dist(rng);
    if (n > 3) x[2] = -kInf;  // contributes exp(-inf) = 0
    double mx = -kInf;
    for (float v : x) mx = std::max<double>(mx, v);
    double sum = 0;
    for (float v : x) sum += std::exp(static_cast<double>(v) - mx);
    for (const int width : {32, 256, 1024}) {
      const MaxSum ms = softmax_stats(x, width);
      EXPECT_EQ(ms.m, static_cast<float>(mx)) << "n=" << n << " width=" << width;
      EXPECT_NEAR(ms.s, sum, sum * 2e-5) << "n=" << n << " width=" << width;
    }
  }
}

TEST(NormPoolOnlineSoftmax, EdgeCases) {
  // All -inf: nothing is added, so the kernels produce exp(-inf - -inf) =
  // NaN like the CPU provider, but the statistics themselves are not NaN.
  const MaxSum all_neg_inf = softmax_stats({-kInf, -kInf, -kInf}, 32);
  EXPECT_EQ(all_neg_inf.m, -kInf);
  EXPECT_EQ(all_neg_inf.s, 0.0f);
  // A NaN makes the row NaN.
  const MaxSum with_nan = softmax_stats({1.0f, kNaN, 2.0f, 3.0f, 0.5f}, 32);
  EXPECT_TRUE(std::isnan(with_nan.s));
  EXPECT_TRUE(std::isnan(softmax_stats({kNaN, 1.0f}, 256).s));
  // One element: max is it, sum is 1.
  const MaxSum one = softmax_stats({-3.5f}, 32);
  EXPECT_EQ(one.m, -3.5f);
  EXPECT_EQ(one.s, 1.0f);
  // Merging with an empty side changes nothing.
  const MaxSum a{2.0f, 3.0f};
  EXPECT_EQ(max_sum_combine(a, max_sum_empty()).m, 2.0f);
  EXPECT_EQ(max_sum_combine(max_sum_empty(), a).s, 3.0f);
}

// ---- ArgMax / ArgMin ------------------------------------------------------------------------

// The CPU provider's sequential scan (reduce.cc, better()).
int64_t cpu_arg(const std::vector<float>& x, bool is_max, bool last) {
  float best = x[0];
  int64_t idx = 0;
  for (size_t a = 1; a < x.size(); ++a) {
    const float v = x[a];
    bool take;
    if (best != best) {
      take = last && v != v;
    } else if (v != v) {
      take = true;
    } else if (last) {
      take = is_max ? v >= best : v <= best;
    } else {
      take = is_max ? v > best : v < best;
    }
    if (take) {
      best = v;
      idx = static_cast<int64_t>(a);
    }
  }
  return idx;
}

TEST(NormPoolArg, TreeMatchesSequentialScan) {
  std::mt19937 rng(11);
  const float values[] = {0.0f, 1.0f, 2.0f, -1.0f, kNaN, kInf, -kInf, -0.0f};
  for (int trial = 0; trial < 400; ++trial) {
    const int64_t n = 1 + static_cast<int64_t>(rng() % 300);
    std::vector<float> x(static_cast<size_t>(n));
    const int kinds = trial % 2 == 0 ? 4 : 8;  // half the trials without NaN/inf
    for (float& v : x) v = values[rng() % kinds];
    for (const bool is_max : {true, false}) {
      for (const bool last : {false, true}) {
        const int64_t want = cpu_arg(x, is_max, last);
        // The column kernel: a sequential arg_pick scan from element 0.
        ArgCandidate seq{x[0], 0};
        for (int64_t a = 1; a < n; ++a) seq = arg_pick(seq, ArgCandidate{x[a], a}, is_max, last);
        EXPECT_EQ(seq.i, want);
        // The row kernels: a warp, or a block of 256.
        for (const int width : {32, 256}) {
          const ArgCandidate tree = tree_reduce<ArgCandidate>(
              x, width, ArgCandidate{0.0f, -1},
              [&](ArgCandidate a, float v, int64_t j) {
                return arg_pick(a, ArgCandidate{v, j}, is_max, last);
              },
              [&](ArgCandidate a, ArgCandidate b) { return arg_pick(a, b, is_max, last); });
          EXPECT_EQ(tree.i, want) << "n=" << n << " max=" << is_max << " last=" << last << " width=" << width;
        }
      }
    }
  }
}

TEST(NormPoolArg, HandPicked) {
  const std::vector<float> x = {1, 3, 3, 2, 3, 0, 0};
  EXPECT_EQ(cpu_arg(x, true, false), 1);
  EXPECT_EQ(cpu_arg(x, true, true), 4);
  EXPECT_EQ(cpu_arg(x, false, false), 5);
  EXPECT_EQ(cpu_arg(x, false, true), 6);
  // An empty candidate never wins.
  EXPECT_EQ(arg_pick(ArgCandidate{0, -1}, ArgCandidate{-5, 3}, true, false).i, 3);
  EXPECT_EQ(arg_pick(ArgCandidate{-5, 3}, ArgCandidate{0, -1}, true, false).i, 3);
}

// ---- reduction plan -----------------------------------------------------------------------

TEST(NormPoolReducePlan, MatchesBruteForce) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 3000; ++trial) {
    const int rank = static_cast<int>(rng() % 7);
    int64_t dims[SY_MAX_RANK];
    bool reduced[SY_MAX_RANK];
    for (int d = 0; d < rank; ++d) {
      dims[d] = static_cast<int64_t>(rng() % 4) + (trial % 10 == 0 ? 0 : 1);  // some zero-size dims
      reduced[d] = rng() % 2 == 0;
    }
    const ReducePlan p = make_reduce_plan(rank, dims, reduced);
    int64_t out_count = 1, reduce_count = 1;
    int last_big = -1;
    for (int d = 0; d < rank; ++d) {
      (reduced[d] ? reduce_count : out_count) *= dims[d];
      if (dims[d] != 1) last_big = d;
    }
    ASSERT_EQ(p.out_count, out_count);
    ASSERT_EQ(p.reduce_count, reduce_count);
    EXPECT_EQ(p.inner_reduced, last_big >= 0 && reduced[last_big]);
    if (out_count * reduce_count == 0) continue;
    // Every input element: its output index (row-major over kept dims), its
    // reduced index (row-major over reduced dims) and its offset.
    int64_t total = out_count * reduce_count;
    for (int64_t off = 0; off < total; ++off) {
      int64_t idx[SY_MAX_RANK];
      int64_t rem = off;
      for (int d = rank - 1; d >= 0; --d) {
        idx[d] = rem % dims[d];
        rem /= dims[d];
      }
      int64_t o = 0, r = 0;
      for (int d = 0; d < rank; ++d) (reduced[d] ? r : o) = (reduced[d] ? r : o) * dims[d] + idx[d];
      ASSERT_EQ(kept_offset(p, o) + reduced_offset(p, r), off) << "trial " << trial << " o=" << o << " r=" << r;
    }
  }
}

TEST(NormPoolReducePlan, MergesCommonLayouts) {
  // [2, 3, 4] reducing the last axis: rows.
  {
    const int64_t dims[] = {2, 3, 4};
    const bool red[] = {false, false, true};
    const ReducePlan p = make_reduce_plan(3, dims, red);
    EXPECT_EQ(p.nk, 1);
    EXPECT_EQ(p.nr, 1);
    EXPECT_EQ(p.kdims[0], 6);
    EXPECT_EQ(p.rstrides[0], 1);
    EXPECT_TRUE(p.inner_reduced);
  }
  // [2, 1, 3, 5] reducing axes 1 and 2: [K=2, R=3, K=5].
  {
    const int64_t dims[] = {2, 1, 3, 5};
    const bool red[] = {false, true, true, false};
    const ReducePlan p = make_reduce_plan(4, dims, red);
    EXPECT_EQ(p.nk, 2);
    EXPECT_EQ(p.nr, 1);
    EXPECT_EQ(p.rdims[0], 3);
    EXPECT_EQ(p.rstrides[0], 5);
    EXPECT_FALSE(p.inner_reduced);
  }
  // A scalar: one output of one element, no dims at all.
  {
    const ReducePlan p = make_reduce_plan(0, nullptr, nullptr);
    EXPECT_EQ(p.out_count, 1);
    EXPECT_EQ(p.reduce_count, 1);
    EXPECT_EQ(kept_offset(p, 0) + reduced_offset(p, 0), 0);
  }
}

// ---- pooling geometry -----------------------------------------------------------------------

PoolAttrs attrs_1d(int64_t k, int64_t s, int64_t pb, int64_t pe, bool ceil, AutoPad pad = AutoPad::kNotSet,
                   int64_t dil = 1) {
  PoolAttrs a;
  a.auto_pad = pad;
  a.rank = 1;
  a.kernel[0] = k;
  a.n_strides = 1;
  a.strides[0] = s;
  a.n_dilations = 1;
  a.dilations[0] = dil;
  a.n_pads = 2;
  a.pads[0] = pb;
  a.pads[1] = pe;
  a.ceil_mode = ceil;
  return a;
}

struct Geo1 {
  int64_t out, pb, pe;
};
Geo1 geo(const PoolAttrs& a, int64_t in) {
  PoolGeometry g;
  const std::string err = compute_pool_geometry(a, 1, &in, g);
  EXPECT_EQ(err, "");
  return {g.out[0], g.pad_begin[0], g.pad_end[0]};
}

TEST(NormPoolGeometry, HandComputed) {
  // floor((5 - 2) / 2) + 1 = 2; ceil gives 3 (the last window starts at 4 < 5).
  EXPECT_EQ(geo(attrs_1d(2, 2, 0, 0, false), 5).out, 2);
  EXPECT_EQ(geo(attrs_1d(2, 2, 0, 0, true), 5).out, 3);
  // ceil((5 + 1 - 1) / 2) + 1 = 4, but the 4th window would start at 6,
  // in the end padding, so it is dropped.
  EXPECT_EQ(geo(attrs_1d(1, 2, 0, 1, true), 5).out, 3);
  // Explicit pads: (7 + 2 - 3) / 2 + 1 = 4.
  EXPECT_EQ(geo(attrs_1d(3, 2, 1, 1, false), 7).out, 4);
  // Dilation: effective kernel (3 - 1) * 2 + 1 = 5: (7 - 5) + 1 = 3.
  EXPECT_EQ(geo(attrs_1d(3, 1, 0, 0, false, AutoPad::kNotSet, 2), 7).out, 3);
  // SAME: ceil(in / stride); padding split, odd one at the end (UPPER) or
  // the beginning (LOWER). Pads written on the node are ignored.
  {
    const Geo1 g = geo(attrs_1d(3, 2, 9, 9, false, AutoPad::kSameUpper), 5);
    EXPECT_EQ(g.out, 3);
    EXPECT_EQ(g.pb, 1);
    EXPECT_EQ(g.pe, 1);
  }
  {
    const Geo1 g = geo(attrs_1d(3, 2, 0, 0, false, AutoPad::kSameUpper), 6);
    EXPECT_EQ(g.out, 3);
    EXPECT_EQ(g.pb, 0);
    EXPECT_EQ(g.pe, 1);
  }
  {
    const Geo1 g = geo(attrs_1d(3, 2, 0, 0, false, AutoPad::kSameLower), 6);
    EXPECT_EQ(g.out, 3);
    EXPECT_EQ(g.pb, 1);
    EXPECT_EQ(g.pe, 0);
  }
  {
    // Stride larger than the kernel: no padding needed.
    const Geo1 g = geo(attrs_1d(1, 3, 0, 0, false, AutoPad::kSameUpper), 7);
    EXPECT_EQ(g.out, 3);
    EXPECT_EQ(g.pb + g.pe, 0);
  }
  // VALID is pads of 0 with the explicit rule, as on the CPU (so with
  // ceil_mode it gives 3 here, like pads=[0,0]).
  {
    const Geo1 g = geo(attrs_1d(2, 2, 5, 5, true, AutoPad::kValid), 5);
    EXPECT_EQ(g.out, 3);
    EXPECT_EQ(g.pb, 0);
    EXPECT_EQ(g.pe, 0);
  }
  EXPECT_EQ(geo(attrs_1d(2, 2, 5, 5, false, AutoPad::kValid), 5).out, 2);
  // Too large a window.
  {
    PoolGeometry g;
    const int64_t in = 2;
    EXPECT_NE(compute_pool_geometry(attrs_1d(3, 1, 0, 0, false), 1, &in, g), "");
    PoolAttrs two = attrs_1d(3, 1, 0, 0, false);
    EXPECT_NE(compute_pool_geometry(two, 2, &in, g), "");  // kernel rank differs
  }
}

// ---- pooling windows ----------------------------------------------------------------------

struct VecLoad {
  const float* x;
  __host__ __device__ float operator()(int64_t off) const { return x[off]; }
};

TEST(NormPoolWindow, HandComputed1d) {
  const std::vector<float> x = {1, 2, 3, 4, 5};
  PoolGeometry g;
  const int64_t in = 5;
  ASSERT_EQ(compute_pool_geometry(attrs_1d(2, 2, 0, 0, true), 1, &in, g), "");
  ASSERT_EQ(g.out[0], 3);
  const float want_max[] = {2, 4, 5};
  const float want_avg[] = {1.5f, 3.5f, 5};
  for (int64_t q = 0; q < 3; ++q) {
    int64_t idx = -1;
    EXPECT_EQ(pool_window<true>(g, q, VecLoad{x.data()}, false, false, -1e30f, &idx), want_max[q]);
    EXPECT_EQ(idx, q == 2 ? 4 : 2 * q + 1);
    EXPECT_FLOAT_EQ(pool_window<false>(g, q, VecLoad{x.data()}, false, false, 0, nullptr), want_avg[q]);
    // The last window hangs past the end with no padding there: it divides by 1 either way.
    EXPECT_FLOAT_EQ(pool_window<false>(g, q, VecLoad{x.data()}, true, false, 0, nullptr), want_avg[q]);
  }
}

TEST(NormPoolWindow, HandComputed2dPadding) {
  // 3x3 input 1..9, 3x3 window, pads 1, stride 1.
  std::vector<float> x(9);
  for (int i = 0; i < 9; ++i) x[i] = static_cast<float>(i + 1);
  PoolAttrs a;
  a.rank = 2;
  a.kernel[0] = a.kernel[1] = 3;
  a.n_pads = 4;
  for (int i = 0; i < 4; ++i) a.pads[i] = 1;
  PoolGeometry g;
  const int64_t in[] = {3, 3};
  ASSERT_EQ(compute_pool_geometry(a, 2, in, g), "");
  ASSERT_EQ(g.out[0], 3);
  ASSERT_EQ(g.out[1], 3);
  // Corner (0, 0) sees 1, 2, 4, 5.
  EXPECT_FLOAT_EQ(pool_window<false>(g, 0, VecLoad{x.data()}, false, false, 0, nullptr), 3.0f);
  EXPECT_FLOAT_EQ(pool_window<false>(g, 0, VecLoad{x.data()}, true, false, 0, nullptr), 12.0f / 9.0f);
  // Centre sees all nine.
  EXPECT_FLOAT_EQ(pool_window<false>(g, 4, VecLoad{x.data()}, false, false, 0, nullptr), 5.0f);
  int64_t idx = -1;
  EXPECT_EQ(pool_window<true>(g, 0, VecLoad{x.data()}, false, false, -1e30f, &idx), 5.0f);
  EXPECT_EQ(idx, 4);
  // Output (0, 1) sees rows 0-1, columns 0-2: the max 6 is at (h=1, w=2),
  // which column-major Indices (storage_order 1) number h + w * H.
  EXPECT_EQ(pool_window<true>(g, 1, VecLoad{x.data()}, false, true, -1e30f, &idx), 6.0f);
  EXPECT_EQ(idx, 1 + 2 * 3);
  EXPECT_EQ(pool_window<true>(g, 1, VecLoad{x.data()}, false, false, -1e30f, &idx), 6.0f);
  EXPECT_EQ(idx, 5);
}

// A direct reference: every kernel tap of every window, in row-major order.
float naive_window(const PoolGeometry& g, const std::vector<float>& x, int64_t q, bool is_max, bool include_pad,
                   bool column_major, int64_t* index) {
  const int rank = g.rank;
  int64_t o[kMaxPoolDims];
  for (int64_t rem = q, d = rank - 1; d >= 0; --d) {
    o[d] = rem % g.out[d];
    rem /= g.out[d];
  }
  int64_t taps = 1;
  for (int d = 0; d < rank; ++d) taps *= g.kernel[d];
  float best = -1e30f, sum = 0;
  bool found = false;
  int64_t count = 0, pad_count = 0, best_index = 0;
  for (int64_t t = 0; t < taps; ++t) {
    int64_t k[kMaxPoolDims];
    for (int64_t rem = t, d = rank - 1; d >= 0; --d) {
      k[d] = rem % g.kernel[d];
      rem /= g.kernel[d];
    }
    bool inside = true, inside_padded = true;
    int64_t off = 0, ioff = 0, col_stride = 1;
    for (int d = 0; d < rank; ++d) {
      const int64_t i = o[d] * g.stride[d] - g.pad_begin[d] + k[d] * g.dilation[d];
      inside = inside && i >= 0 && i < g.in[d];
      inside_padded = inside_padded && i >= -g.pad_begin[d] && i < g.in[d] + g.pad_end[d];
      off = off * g.in[d] + i;
    }
    for (int d = 0; d < rank; ++d) {
      const int64_t i = o[d] * g.stride[d] - g.pad_begin[d] + k[d] * g.dilation[d];
      ioff += i * col_stride;
      col_stride *= g.in[d];
    }
    if (inside_padded) ++pad_count;
    if (!inside) continue;
    ++count;
    const float v = x[static_cast<size_t>(off)];
    sum += v;
    if (!found || v > best) {
      best = v;
      best_index = column_major ? ioff : off;
      found = true;
    }
  }
  if (is_max) {
    *index = best_index;
    return best;
  }
  const int64_t div = include_pad ? pad_count : count;
  return div > 0 ? sum / static_cast<float>(div) : 0.0f;
}

TEST(NormPoolWindow, RandomGeometriesMatchNaive) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> val(-4.0f, 4.0f);
  int checked = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    PoolAttrs a;
    const int rank = 1 + static_cast<int>(rng() % 3);
    a.rank = rank;
    a.auto_pad = static_cast<AutoPad>(rng() % 4);
    a.ceil_mode = rng() % 2 == 0;
    a.n_strides = a.n_dilations = rank;
    a.n_pads = rng() % 3 == 0 ? 0 : 2 * rank;
    int64_t in[kMaxPoolDims];
    for (int d = 0; d < rank; ++d) {
      in[d] = 1 + static_cast<int64_t>(rng() % 8);
      a.kernel[d] = 1 + static_cast<int64_t>(rng() % 4);
      a.strides[d] = 1 + static_cast<int64_t>(rng() % 3);
      a.dilations[d] = 1 + static_cast<int64_t>(rng() % 2);
      a.pads[d] = static_cast<int64_t>(rng() % 3);
      a.pads[d + rank] = static_cast<int64_t>(rng() % 3);
    }
    PoolGeometry g;
    if (!compute_pool_geometry(a, rank, in, g).empty()) continue;
    std::vector<float> x(static_cast<size_t>(g.in_size()));
    // Few distinct values, so ties (first maximum wins) are exercised.
    for (float& v : x) v = std::round(val(rng));
    const bool column_major = rng() % 2 == 0;
    for (int64_t q = 0; q < g.out_size(); ++q) {
      for (const bool include_pad : {false, true}) {
        int64_t unused = 0;
        const float want_avg = naive_window(g, x, q, false, include_pad, false, &unused);
        EXPECT_FLOAT_EQ(pool_window<false>(g, q, VecLoad{x.data()}, include_pad, false, -1e30f, nullptr), want_avg);
      }
      int64_t want_idx = -1, got_idx = -2;
      const float want_max = naive_window(g, x, q, true, false, column_major, &want_idx);
      EXPECT_EQ(pool_window<true>(g, q, VecLoad{x.data()}, false, column_major, -1e30f, &got_idx), want_max);
      EXPECT_EQ(got_idx, want_idx);
      ++checked;
    }
  }
  EXPECT_GT(checked, 10000);
}

TEST(NormPoolWindow, TapsClampToInput) {
  // Window starting 2 before the input with dilation 2: tap 0 (at -2) is
  // outside, taps 1, 2 (at 0, 2) inside; size 3 puts tap 3 (at 4) outside
  // the input but inside the end padding of 2.
  const TapRange r = pool_taps(-2, 4, 2, 3, 2);
  EXPECT_EQ(r.lo, 1);
  EXPECT_EQ(r.hi, 3);
  EXPECT_EQ(r.pad_hi, 4);
  // A window entirely past the end.
  const TapRange past = pool_taps(5, 2, 1, 3, 0);
  EXPECT_EQ(past.hi - past.lo, 0);
  EXPECT_EQ(past.pad_hi, 0);
}

}  // namespace
}  // namespace sy::cuda::normpool
