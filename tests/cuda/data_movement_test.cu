// Host tests of the CUDA data movement index math (data_movement_index.cuh):
// each plan is run on the host the way its kernel walks it (same index
// functions, word by word) and compared with a naive reference.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "providers/cuda/data_movement_index.cuh"

namespace sy::cuda::datamove {
namespace {

using Dims = std::vector<int64_t>;

int64_t count_of(const Dims& d) { return product(d.data(), 0, static_cast<int>(d.size())); }

// 0, 1, 2, ... as int32 elements.
std::vector<int32_t> iota_values(int64_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// What strided_copy_kernel does, on the host, with both index widths.
template <typename T>
std::vector<T> run_plan(const StridedPlan& plan, const T* src) {
  std::vector<T> out(static_cast<size_t>(plan.count()));
  for (int64_t i = 0; i < plan.count(); ++i) {
    const int64_t o64 = strided_offset<int64_t>(plan, i);
    const int32_t o32 = strided_offset<int32_t>(plan, static_cast<int32_t>(i));
    EXPECT_EQ(o64, o32) << "at " << i;
    out[static_cast<size_t>(i)] = src[o64];
  }
  return out;
}

// The same plan moved in words of `w` bytes after widest_word/widen, as the
// launch does; elements are `esize` bytes. Returns the bytes written.
std::vector<uint8_t> run_plan_widened(const StridedPlan& plan, const uint8_t* src, size_t esize, size_t w) {
  const StridedPlan wide = widen(plan, static_cast<int64_t>(w / esize));
  std::vector<uint8_t> out(static_cast<size_t>(wide.count()) * w);
  for (int64_t i = 0; i < wide.count(); ++i)
    std::memcpy(out.data() + i * w, src + strided_offset<int64_t>(wide, i) * static_cast<int64_t>(w), w);
  return out;
}

// Multi-index of `linear` in `dims`.
Dims unravel(int64_t linear, const Dims& dims) {
  Dims c(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    c[k] = linear % dims[k];
    linear /= dims[k];
  }
  return c;
}

int64_t ravel(const Dims& c, const Dims& dims) {
  int64_t linear = 0;
  for (size_t k = 0; k < dims.size(); ++k) linear = linear * dims[k] + c[k];
  return linear;
}

// ---- StridedPlan --------------------------------------------------------------------

TEST(DataMovementPlan, DropsUnitDimsAndMergesContiguousOnes) {
  StridedPlan p;
  EXPECT_TRUE(p.add(2, 12));
  EXPECT_TRUE(p.add(1, 99));
  EXPECT_TRUE(p.add(3, 4));
  EXPECT_TRUE(p.add(4, 1));
  ASSERT_EQ(p.rank, 1);
  EXPECT_EQ(p.dims[0], 24);
  EXPECT_EQ(p.strides[0], 1);
  EXPECT_EQ(p.count(), 24);
  EXPECT_FALSE(p.empty);
}

TEST(DataMovementPlan, KeepsNonContiguousDimsAndMergesBroadcastOnes) {
  StridedPlan p;
  p.add(2, 0);
  p.add(3, 0);  // broadcast next to broadcast: one dim of 6
  p.add(5, 1);
  ASSERT_EQ(p.rank, 2);
  EXPECT_EQ(p.dims[0], 6);
  EXPECT_EQ(p.strides[0], 0);
  EXPECT_EQ(p.dims[1], 5);
  EXPECT_EQ(p.count(), 30);
}

TEST(DataMovementPlan, ZeroDimMakesItEmptyAndScalarsHaveOneElement) {
  StridedPlan p;
  p.add(3, 1);
  p.add(0, 1);
  EXPECT_TRUE(p.empty);
  EXPECT_EQ(p.count(), 0);
  StridedPlan scalar;
  EXPECT_EQ(scalar.count(), 1);
  EXPECT_EQ(strided_offset<int64_t>(scalar, 0), 0);
}

TEST(DataMovementPlan, NegativeStridesWalkBack) {
  StridedPlan p;
  p.add(3, -1);
  const int32_t src[] = {10, 11, 12, 13};
  // Starting at element 2 (the launch offsets the base pointer).
  EXPECT_EQ(run_plan(p, src + 2), (std::vector<int32_t>{12, 11, 10}));
}

TEST(DataMovementPlan, WidestWordNeedsContiguousInnerDimAndAlignment) {
  StridedPlan p;
  p.add(4, 16);
  p.add(8, 1);  // rows of 8 elements, 16 apart
  EXPECT_EQ(widest_word(p, 4, 0, 0), 16u);        // 4 floats per word
  EXPECT_EQ(widest_word(p, 4, 8, 0), 8u);         // source only 8-aligned
  EXPECT_EQ(widest_word(p, 2, 0, 0), 16u);        // 8 halves = one word
  EXPECT_EQ(widest_word(p, 8, 0, 0), 16u);
  StridedPlan odd;
  odd.add(4, 16);
  odd.add(6, 1);
  EXPECT_EQ(widest_word(odd, 4, 0, 0), 8u);       // 6 floats: pairs only
  StridedPlan strided;
  strided.add(4, 2);
  EXPECT_EQ(widest_word(strided, 4, 0, 0), 4u);   // inner dim not contiguous
  StridedPlan scalar;
  EXPECT_EQ(widest_word(scalar, 2, 0, 0), 2u);
  EXPECT_EQ(aligned_word(4, 12, 0, 0), 16u);
  EXPECT_EQ(aligned_word(4, 6, 0, 0), 8u);
  EXPECT_EQ(aligned_word(1, 3, 0, 0), 1u);
  EXPECT_EQ(aligned_word(2, 8, 2, 0), 2u);
}

TEST(DataMovementPlan, WidenedCopyMatchesElementCopy) {
  // Slice-like: [3, 8] out of [3, 12] starting at column 4, int16 elements.
  StridedPlan p;
  p.add(3, 12);
  p.add(8, 1);
  std::vector<int16_t> src(36);
  std::iota(src.begin(), src.end(), int16_t{0});
  const int16_t* base = src.data() + 4;
  const auto* bytes = reinterpret_cast<const uint8_t*>(base);
  const size_t w = widest_word(p, 2, 0, 0);  // pretend aligned: only the arithmetic is checked
  EXPECT_EQ(w, 8u);                          // 4 halves; 12 and 8 are not multiples of 8 halves
  const std::vector<int16_t> want = run_plan(p, base);
  const std::vector<uint8_t> got = run_plan_widened(p, bytes, 2, w);
  ASSERT_EQ(got.size(), want.size() * 2);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0);
}

// ---- Transpose ----------------------------------------------------------------------

std::vector<int32_t> naive_transpose(const std::vector<int32_t>& in, const Dims& dims, const Dims& perm) {
  Dims out_dims(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) out_dims[i] = dims[static_cast<size_t>(perm[i])];
  std::vector<int32_t> out(in.size());
  for (int64_t o = 0; o < count_of(out_dims); ++o) {
    const Dims c = unravel(o, out_dims);
    Dims ci(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) ci[static_cast<size_t>(perm[i])] = c[i];
    out[static_cast<size_t>(o)] = in[static_cast<size_t>(ravel(ci, dims))];
  }
  return out;
}

// What tiled_transpose_kernel does, on the host, tile by tile.
std::vector<int32_t> run_tiled(const TiledTranspose& t, const std::vector<int32_t>& src, int64_t n) {
  std::vector<int32_t> out(static_cast<size_t>(n), -1);
  constexpr int64_t kTile = 32;
  for (int64_t b = 0; b < t.batches; ++b) {
    int64_t sb = 0, db = 0;
    tiled_batch_offsets(t, b, sb, db);
    for (int64_t i0 = 0; i0 < t.rows; i0 += kTile)
      for (int64_t j0 = 0; j0 < t.cols; j0 += kTile) {
        int32_t tile[kTile][kTile + 1];
        for (int64_t y = 0; y < kTile; ++y)
          for (int64_t x = 0; x < kTile; ++x)
            if (i0 + x < t.rows && j0 + y < t.cols) tile[y][x] = src[static_cast<size_t>(sb + (i0 + x) + (j0 + y) * t.src_col)];
        for (int64_t y = 0; y < kTile; ++y)
          for (int64_t x = 0; x < kTile; ++x)
            if (i0 + y < t.rows && j0 + x < t.cols) {
              const int64_t d = db + (i0 + y) * t.dst_row + (j0 + x);
              EXPECT_EQ(out[static_cast<size_t>(d)], -1) << "written twice at " << d;
              out[static_cast<size_t>(d)] = tile[x][y];
            }
      }
  }
  return out;
}

void check_transpose(const Dims& dims, const Dims& perm, bool expect_tiled) {
  SCOPED_TRACE("dims " + ::testing::PrintToString(dims) + " perm " + ::testing::PrintToString(perm));
  const std::vector<int32_t> in = iota_values(count_of(dims));
  const std::vector<int32_t> want = naive_transpose(in, dims, perm);
  int64_t out_dims[kMaxRank];
  const StridedPlan plan = transpose_plan(dims.data(), static_cast<int>(dims.size()), perm.data(), out_dims);
  for (size_t i = 0; i < dims.size(); ++i) EXPECT_EQ(out_dims[i], dims[static_cast<size_t>(perm[i])]);
  EXPECT_EQ(run_plan(plan, in.data()), want);
  // Widened, when the plan allows it (pointers taken as aligned).
  const size_t w = widest_word(plan, 4, 0, 0);
  const std::vector<uint8_t> wide = run_plan_widened(plan, reinterpret_cast<const uint8_t*>(in.data()), 4, w);
  ASSERT_EQ(wide.size(), want.size() * 4);
  EXPECT_EQ(std::memcmp(wide.data(), want.data(), wide.size()), 0);
  TiledTranspose t;
  const bool tiled = make_tiled_transpose(plan, t);
  EXPECT_EQ(tiled, expect_tiled);
  if (tiled) EXPECT_EQ(run_tiled(t, in, count_of(dims)), want);
}

TEST(DataMovementTranspose, Matrix) {
  check_transpose({37, 45}, {1, 0}, true);
  check_transpose({64, 64}, {1, 0}, true);
  check_transpose({3, 100}, {1, 0}, false);  // 3 rows: too thin for tiles
  check_transpose({5, 7}, {0, 1}, false);    // identity
}

TEST(DataMovementTranspose, BatchedAndAttentionShapes) {
  check_transpose({2, 33, 40}, {0, 2, 1}, true);
  check_transpose({2, 9, 3, 16}, {0, 2, 1, 3}, false);   // [B,S,H,D] -> [B,H,S,D]: rows of D
  check_transpose({2, 9, 3, 16}, {0, 2, 3, 1}, true);    // -> [B,H,D,S]
  check_transpose({4, 10, 12, 3}, {0, 3, 1, 2}, false);  // NHWC -> NCHW with C=3
  check_transpose({4, 3, 10, 12}, {0, 2, 3, 1}, false);  // NCHW -> NHWC with C=3: last dim thin
  check_transpose({4, 16, 10, 12}, {0, 2, 3, 1}, true);  // NCHW -> NHWC with C=16
  check_transpose({9, 1, 20}, {2, 1, 0}, true);          // unit dim vanishes
}

TEST(DataMovementTranspose, ScalarsAndReverse) {
  check_transpose({}, {}, false);
  check_transpose({1}, {0}, false);
  check_transpose({2, 3, 4, 5}, {3, 2, 1, 0}, false);  // last output dim strided, p = 0 is 5 long
  check_transpose({8, 3, 4, 9}, {3, 2, 1, 0}, true);
}

TEST(DataMovementTranspose, RandomPermutations) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 6);
    Dims dims(static_cast<size_t>(rank));
    for (auto& d : dims) d = 1 + static_cast<int64_t>(rng() % (rank <= 3 ? 20 : 5));
    Dims perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), int64_t{0});
    std::shuffle(perm.begin(), perm.end(), rng);
    const std::vector<int32_t> in = iota_values(count_of(dims));
    const std::vector<int32_t> want = naive_transpose(in, dims, perm);
    int64_t out_dims[kMaxRank];
    const StridedPlan plan = transpose_plan(dims.data(), rank, perm.data(), out_dims);
    ASSERT_EQ(run_plan(plan, in.data()), want) << "trial " << trial;
    TiledTranspose t;
    if (make_tiled_transpose(plan, t)) ASSERT_EQ(run_tiled(t, in, count_of(dims)), want) << "trial " << trial;
  }
}

// ---- Slice --------------------------------------------------------------------------

TEST(DataMovementSlice, AxisClampingFollowsTheSpec) {
  auto check = [](int64_t start, int64_t end, int64_t step, int64_t d, int64_t first, int64_t count) {
    const SliceAxis s = slice_axis(start, end, step, d);
    EXPECT_EQ(s.first, first) << start << ":" << end << ":" << step << " of " << d;
    EXPECT_EQ(s.count, count) << start << ":" << end << ":" << step << " of " << d;
  };
  check(1, 3, 1, 4, 1, 2);
  check(0, 1000, 1, 4, 0, 4);
  check(0, -1, 1, 4, 0, 3);
  check(-1000, 2, 1, 4, 0, 2);
  check(0, 4, 2, 4, 0, 2);
  check(1, 4, 2, 4, 1, 2);
  check(3, 0, 1, 4, 3, 0);                   // empty forward
  check(-1, -1000, -1, 4, 3, 4);             // whole axis backwards
  check(INT64_MAX, INT64_MIN, -1, 4, 3, 4);  // the spec's recommended sentinels
  check(0, INT64_MAX, 1, 4, 0, 4);
  check(10, 1, -2, 5, 4, 2);                 // 4, 2
  check(2, 2, -1, 5, 2, 0);
  check(0, 3, 1, 0, 0, 0);                   // zero-sized axis
  check(-2, -1, 1, 5, 3, 1);
}

// numpy-style reference for one axis: indices start, start+step, ... before end.
std::vector<int64_t> naive_axis(int64_t start, int64_t end, int64_t step, int64_t d) {
  if (start < 0) start += d;
  if (end < 0) end += d;
  std::vector<int64_t> idx;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, d);
    end = std::clamp<int64_t>(end, 0, d);
    for (int64_t i = start; i < end; i += step) idx.push_back(i);
  } else {
    start = std::clamp<int64_t>(start, 0, d - 1);
    end = std::clamp<int64_t>(end, -1, d - 1);
    for (int64_t i = start; i > end; i += step) idx.push_back(i);
  }
  return idx;
}

TEST(DataMovementSlice, PlanMatchesNaiveSlicing) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 4);
    Dims dims(static_cast<size_t>(rank));
    for (auto& d : dims) d = static_cast<int64_t>(rng() % 7);
    SliceAxis axes[kMaxRank];
    std::vector<std::vector<int64_t>> picked(static_cast<size_t>(rank));
    for (int k = 0; k < rank; ++k) {
      const int64_t d = dims[static_cast<size_t>(k)];
      const int64_t start = static_cast<int64_t>(rng() % 17) - 8;
      const int64_t end = static_cast<int64_t>(rng() % 17) - 8;
      int64_t step = static_cast<int64_t>(rng() % 7) - 3;
      if (step == 0) step = 1;
      axes[k] = slice_axis(start, end, step, d);
      picked[static_cast<size_t>(k)] = d == 0 ? std::vector<int64_t>{} : naive_axis(start, end, step, d);
      ASSERT_EQ(axes[k].count, static_cast<int64_t>(picked[static_cast<size_t>(k)].size()))
          << start << ":" << end << ":" << step << " of " << d;
    }
    const std::vector<int32_t> in = iota_values(count_of(dims));
    int64_t offset = 0;
    const StridedPlan plan = slice_plan(dims.data(), rank, axes, offset);
    Dims out_dims(static_cast<size_t>(rank));
    for (int k = 0; k < rank; ++k) out_dims[static_cast<size_t>(k)] = axes[k].count;
    std::vector<int32_t> want;
    for (int64_t o = 0; o < count_of(out_dims); ++o) {
      const Dims c = unravel(o, out_dims);
      Dims ci(c.size());
      for (size_t k = 0; k < c.size(); ++k) ci[k] = picked[k][static_cast<size_t>(c[k])];
      want.push_back(in[static_cast<size_t>(ravel(ci, dims))]);
    }
    if (plan.empty) {
      EXPECT_TRUE(want.empty());
      continue;
    }
    ASSERT_EQ(run_plan(plan, in.data() + offset), want) << "trial " << trial;
  }
}

// ---- Expand and Tile ------------------------------------------------------------------

TEST(DataMovementExpand, BroadcastsBothWays) {
  const Dims in_dims{3, 1};
  const Dims shape{2, 1, 4};
  int64_t out_dims[kMaxRank];
  int out_rank = 0;
  StridedPlan plan;
  ASSERT_EQ(expand_plan(in_dims.data(), 2, shape.data(), 3, out_dims, out_rank, plan), "");
  ASSERT_EQ(out_rank, 3);
  EXPECT_EQ(Dims(out_dims, out_dims + 3), (Dims{2, 3, 4}));
  const std::vector<int32_t> in{10, 20, 30};
  std::vector<int32_t> want;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) want.push_back(in[static_cast<size_t>(b)]);
  EXPECT_EQ(run_plan(plan, in.data()), want);
}

TEST(DataMovementExpand, ShapeShorterThanInputAndErrors) {
  const Dims in_dims{2, 3};
  const Dims shape{1};
  int64_t out_dims[kMaxRank];
  int out_rank = 0;
  StridedPlan plan;
  ASSERT_EQ(expand_plan(in_dims.data(), 2, shape.data(), 1, out_dims, out_rank, plan), "");
  EXPECT_EQ(out_rank, 2);
  EXPECT_EQ(Dims(out_dims, out_dims + 2), (Dims{2, 3}));
  EXPECT_EQ(plan.rank, 1);  // a plain copy
  EXPECT_EQ(plan.strides[0], 1);
  const Dims bad{4};
  EXPECT_NE(expand_plan(in_dims.data(), 2, bad.data(), 1, out_dims, out_rank, plan), "");
  const Dims negative{-1, 3};
  EXPECT_NE(expand_plan(in_dims.data(), 2, negative.data(), 2, out_dims, out_rank, plan), "");
  const Dims zero{0, 2, 3};
  ASSERT_EQ(expand_plan(in_dims.data(), 2, zero.data(), 3, out_dims, out_rank, plan), "");
  EXPECT_TRUE(plan.empty);
  const Dims scalar_in{};
  const Dims to{2, 2};
  ASSERT_EQ(expand_plan(scalar_in.data(), 0, to.data(), 2, out_dims, out_rank, plan), "");
  const int32_t one = 5;
  EXPECT_EQ(run_plan(plan, &one), (std::vector<int32_t>{5, 5, 5, 5}));
}

TEST(DataMovementTile, RepeatsEachDim) {
  const Dims in_dims{2, 3};
  const Dims repeats{2, 2};
  int64_t out_dims[kMaxRank];
  StridedPlan plan;
  ASSERT_EQ(tile_plan(in_dims.data(), 2, repeats.data(), out_dims, plan), "");
  EXPECT_EQ(Dims(out_dims, out_dims + 2), (Dims{4, 6}));
  const std::vector<int32_t> in{1, 2, 3, 4, 5, 6};
  std::vector<int32_t> want;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) want.push_back(in[static_cast<size_t>((i % 2) * 3 + j % 3)]);
  EXPECT_EQ(run_plan(plan, in.data()), want);
  const Dims negative{1, -1};
  EXPECT_NE(tile_plan(in_dims.data(), 2, negative.data(), out_dims, plan), "");
  const Dims zero{0, 3};
  ASSERT_EQ(tile_plan(in_dims.data(), 2, zero.data(), out_dims, plan), "");
  EXPECT_TRUE(plan.empty);
}

TEST(DataMovementTile, MaxRankFitsThePlan) {
  const Dims in_dims{2, 3, 2, 3, 2, 3, 2, 3};
  const Dims repeats{2, 3, 2, 3, 2, 3, 2, 3};
  int64_t out_dims[kMaxRank];
  StridedPlan plan;
  ASSERT_EQ(tile_plan(in_dims.data(), 8, repeats.data(), out_dims, plan), "");
  EXPECT_EQ(plan.rank, 16);
  const std::vector<int32_t> in = iota_values(count_of(in_dims));
  const std::vector<int32_t> got = run_plan(plan, in.data());
  Dims od(out_dims, out_dims + 8);
  for (int64_t o = 0; o < count_of(od); o += 97) {
    Dims c = unravel(o, od);
    for (size_t k = 0; k < c.size(); ++k) c[k] %= in_dims[k];
    ASSERT_EQ(got[static_cast<size_t>(o)], in[static_cast<size_t>(ravel(c, in_dims))]);
  }
}

// ---- Gather -------------------------------------------------------------------------

TEST(DataMovementGather, MapsIndicesAndZeroesOutOfRange) {
  // data [2, 3, 4], axis 1, indices [0, -1, 5, 2] (5 out of range).
  const int64_t outer = 2, dim = 3, inner = 4;
  const std::vector<int64_t> idx{0, -1, 5, 2};
  const int64_t m = static_cast<int64_t>(idx.size());
  for (int64_t i = 0; i < outer * m * inner; ++i) {
    const GatherPosition p = gather_position(i, m, inner);
    EXPECT_EQ(p.outer, i / (m * inner));
    EXPECT_EQ(p.index, (i / inner) % m);
    EXPECT_EQ(p.inner, i % inner);
    const int64_t s = gather_source(p, idx[static_cast<size_t>(p.index)], dim, inner);
    int64_t j = idx[static_cast<size_t>(p.index)];
    if (j < 0) j += dim;
    if (j >= dim) {
      EXPECT_EQ(s, -1);
    } else {
      EXPECT_EQ(s, (p.outer * dim + j) * inner + p.inner);
    }
  }
  EXPECT_EQ(gather_source(GatherPosition{}, -4, 3, 1), -1);
  EXPECT_EQ(gather_source(GatherPosition{}, -3, 3, 1), 0);
}

// ---- Trilu --------------------------------------------------------------------------

TEST(DataMovementTrilu, KeepsTheRightTriangle) {
  // 3 x 4, numpy's triu/tril with k.
  for (int64_t k = -5; k <= 6; ++k)
    for (bool upper : {true, false}) {
      const int64_t kc = clamp_trilu_k(k, 3, 4);
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 4; ++j) {
          const bool want = upper ? j >= i + k : j <= i + k;
          EXPECT_EQ(trilu_keep(i, j, kc, upper), want) << "k " << k << " upper " << upper << " at " << i << "," << j;
        }
    }
  // Huge k cannot overflow.
  EXPECT_FALSE(trilu_keep(2, 3, clamp_trilu_k(INT64_MAX, 3, 4), true));
  EXPECT_TRUE(trilu_keep(2, 3, clamp_trilu_k(INT64_MAX, 3, 4), false));
  EXPECT_TRUE(trilu_keep(2, 0, clamp_trilu_k(INT64_MIN, 3, 4), true));
  EXPECT_FALSE(trilu_keep(0, 0, clamp_trilu_k(INT64_MIN, 3, 4), false));
}

// ---- shapes -------------------------------------------------------------------------

TEST(DataMovementShapes, Reshape) {
  const Dims in{2, 3, 4};
  int64_t out[kMaxRank];
  const Dims a{0, -1};
  ASSERT_EQ(reshape_shape(in.data(), 3, a.data(), 2, false, out), "");
  EXPECT_EQ(Dims(out, out + 2), (Dims{2, 12}));
  const Dims b{4, 0, 2};
  ASSERT_EQ(reshape_shape(in.data(), 3, b.data(), 3, false, out), "");
  EXPECT_EQ(Dims(out, out + 3), (Dims{4, 3, 2}));
  const Dims c{-1};
  ASSERT_EQ(reshape_shape(in.data(), 3, c.data(), 1, false, out), "");
  EXPECT_EQ(out[0], 24);
  EXPECT_NE(reshape_shape(in.data(), 3, b.data(), 3, true, out), "");  // allowzero: 0 is a real 0
  const Dims two_infer{-1, -1};
  EXPECT_NE(reshape_shape(in.data(), 3, two_infer.data(), 2, false, out), "");
  const Dims bad_count{5, -1};
  EXPECT_NE(reshape_shape(in.data(), 3, bad_count.data(), 2, false, out), "");
  const Dims too_few{2, 3};
  EXPECT_NE(reshape_shape(in.data(), 3, too_few.data(), 2, false, out), "");
  const Dims below{-2, 12};
  EXPECT_NE(reshape_shape(in.data(), 3, below.data(), 2, false, out), "");
  const Dims zero_past_rank{0, 0, 0, 0};
  EXPECT_NE(reshape_shape(in.data(), 3, zero_past_rank.data(), 4, false, out), "");
  // allowzero with an empty input: 0 stays 0.
  const Dims empty_in{0, 3};
  const Dims z{3, 0};
  ASSERT_EQ(reshape_shape(empty_in.data(), 2, z.data(), 2, true, out), "");
  EXPECT_EQ(Dims(out, out + 2), (Dims{3, 0}));
  const Dims zm{0, -1};
  EXPECT_NE(reshape_shape(empty_in.data(), 2, zm.data(), 2, true, out), "");
  // Scalar to [1] and back.
  const Dims one{1};
  ASSERT_EQ(reshape_shape(nullptr, 0, one.data(), 1, false, out), "");
  EXPECT_EQ(out[0], 1);
  ASSERT_EQ(reshape_shape(one.data(), 1, nullptr, 0, false, out), "");
}

TEST(DataMovementShapes, Flatten) {
  const Dims in{2, 3, 4};
  int64_t out[2];
  ASSERT_EQ(flatten_shape(in.data(), 3, 1, out), "");
  EXPECT_EQ(Dims(out, out + 2), (Dims{2, 12}));
  ASSERT_EQ(flatten_shape(in.data(), 3, 0, out), "");
  EXPECT_EQ(Dims(out, out + 2), (Dims{1, 24}));
  ASSERT_EQ(flatten_shape(in.data(), 3, 3, out), "");
  EXPECT_EQ(Dims(out, out + 2), (Dims{24, 1}));
  ASSERT_EQ(flatten_shape(in.data(), 3, -1, out), "");
  EXPECT_EQ(Dims(out, out + 2), (Dims{6, 4}));
  EXPECT_NE(flatten_shape(in.data(), 3, 4, out), "");
  EXPECT_NE(flatten_shape(in.data(), 3, -4, out), "");
}

TEST(DataMovementShapes, SqueezeAndUnsqueeze) {
  const Dims in{1, 3, 1, 2};
  int64_t out[kMaxRank];
  int rank = 0;
  ASSERT_EQ(squeeze_shape(in.data(), 4, nullptr, 0, out, rank), "");
  EXPECT_EQ(Dims(out, out + rank), (Dims{3, 2}));
  const Dims axes{-2};
  ASSERT_EQ(squeeze_shape(in.data(), 4, axes.data(), 1, out, rank), "");
  EXPECT_EQ(Dims(out, out + rank), (Dims{1, 3, 2}));
  const int64_t none = 0;
  ASSERT_EQ(squeeze_shape(in.data(), 4, &none, 0, out, rank), "");  // given but empty: nothing squeezed
  EXPECT_EQ(rank, 4);
  const Dims not_one{1};
  EXPECT_NE(squeeze_shape(in.data(), 4, not_one.data(), 1, out, rank), "");
  const Dims out_of_range{4};
  EXPECT_NE(squeeze_shape(in.data(), 4, out_of_range.data(), 1, out, rank), "");

  const Dims base{3, 4};
  const Dims ua{0, -1};
  ASSERT_EQ(unsqueeze_shape(base.data(), 2, ua.data(), 2, out, rank), "");
  EXPECT_EQ(Dims(out, out + rank), (Dims{1, 3, 4, 1}));
  const Dims ub{3, 1};
  ASSERT_EQ(unsqueeze_shape(base.data(), 2, ub.data(), 2, out, rank), "");
  EXPECT_EQ(Dims(out, out + rank), (Dims{3, 1, 4, 1}));
  const Dims repeated{1, -3};
  EXPECT_NE(unsqueeze_shape(base.data(), 2, repeated.data(), 2, out, rank), "");
  const Dims beyond{4};
  EXPECT_NE(unsqueeze_shape(base.data(), 2, beyond.data(), 1, out, rank), "");
  ASSERT_EQ(unsqueeze_shape(nullptr, 0, Dims{0}.data(), 1, out, rank), "");  // scalar -> [1]
  EXPECT_EQ(Dims(out, out + rank), (Dims{1}));
  const Dims many{0, 1, 2, 3, 4, 5, 6};
  EXPECT_NE(unsqueeze_shape(base.data(), 2, many.data(), 7, out, rank), "");  // rank 9
}

TEST(DataMovementShapes, SplitPieces) {
  EXPECT_EQ(split_piece(12, 3, 0, false), 4);
  std::vector<int64_t> got;
  for (int64_t j = 0; j < 3; ++j) got.push_back(split_piece(7, 3, j, true));
  EXPECT_EQ(got, (std::vector<int64_t>{3, 3, 1}));
  got.clear();
  for (int64_t j = 0; j < 4; ++j) got.push_back(split_piece(5, 4, j, true));
  EXPECT_EQ(got, (std::vector<int64_t>{2, 2, 1, 0}));
  got.clear();
  for (int64_t j = 0; j < 3; ++j) got.push_back(split_piece(6, 3, j, true));
  EXPECT_EQ(got, (std::vector<int64_t>{2, 2, 2}));
}

// ---- Concat and Split -------------------------------------------------------------------

// What concat_split_kernel does for one group, on the host, over words of
// `w` bytes (the group and row already widened).
void run_pieces(bool split, const PieceGroup& g, uint8_t* whole, int64_t outer, int64_t row, size_t w) {
  for (int j = 0; j < g.count; ++j)
    for (int64_t i = 0; i < outer * g.width[j]; ++i) {
      uint8_t* piece = static_cast<uint8_t*>(g.data[j]) + i * static_cast<int64_t>(w);
      uint8_t* at = whole + piece_to_whole(g, j, i, row) * static_cast<int64_t>(w);
      if (split) {
        std::memcpy(piece, at, w);
      } else {
        std::memcpy(at, piece, w);
      }
    }
}

TEST(DataMovementConcat, PiecesRoundTripWithAndWithoutWords) {
  // Concat on axis 1 of [2, a, 4] int32 pieces with a = 1, 3, 2 (row 24).
  const int64_t outer = 2, inner = 4;
  const std::vector<int64_t> axis_dims{1, 3, 2};
  std::vector<std::vector<int32_t>> pieces;
  int32_t next = 0;
  for (int64_t a : axis_dims) {
    std::vector<int32_t> p(static_cast<size_t>(outer * a * inner));
    for (auto& v : p) v = next++;
    pieces.push_back(p);
  }
  const int64_t row = 6 * inner;
  std::vector<int32_t> want(static_cast<size_t>(outer * row));
  for (int64_t o = 0; o < outer; ++o) {
    int64_t col = 0;
    for (size_t j = 0; j < pieces.size(); ++j) {
      const int64_t width = axis_dims[j] * inner;
      for (int64_t q = 0; q < width; ++q) want[static_cast<size_t>(o * row + col + q)] = pieces[j][static_cast<size_t>(o * width + q)];
      col += width;
    }
  }
  PieceGroup g;
  int64_t offset = 0;
  for (size_t j = 0; j < pieces.size(); ++j) {
    g.data[g.count] = pieces[j].data();
    g.width[g.count] = axis_dims[j] * inner;
    g.offset[g.count] = offset;
    offset += g.width[g.count];
    ++g.count;
  }
  for (size_t w : {size_t{4}, size_t{8}, size_t{16}}) {
    SCOPED_TRACE("word " + std::to_string(w));
    const auto f = static_cast<int64_t>(w / 4);
    const PieceGroup wide = widen(g, f);
    std::vector<int32_t> whole(want.size(), -1);
    run_pieces(false, wide, reinterpret_cast<uint8_t*>(whole.data()), outer, row / f, w);
    EXPECT_EQ(whole, want);
    // Split back into fresh pieces.
    std::vector<std::vector<int32_t>> back;
    for (const auto& p : pieces) back.emplace_back(p.size(), -1);
    PieceGroup s = wide;
    for (int j = 0; j < s.count; ++j) s.data[j] = back[static_cast<size_t>(j)].data();
    run_pieces(true, s, reinterpret_cast<uint8_t*>(whole.data()), outer, row / f, w);
    EXPECT_EQ(back, pieces);
  }
}

TEST(DataMovementConcat, PiecesWordChecksEveryPiece) {
  PieceGroup g;
  alignas(16) static int32_t buffers[3][64];
  g.count = 2;
  g.data[0] = buffers[0];
  g.width[0] = 8;
  g.offset[0] = 0;
  g.data[1] = buffers[1];
  g.width[1] = 4;
  g.offset[1] = 8;
  const auto whole = reinterpret_cast<uintptr_t>(buffers[2]);
  EXPECT_EQ(pieces_word(g, 4, whole, 12), 16u);
  EXPECT_EQ(pieces_word(g, 4, whole, 14), 8u);  // row of 14: pairs only
  g.width[1] = 2;
  EXPECT_EQ(pieces_word(g, 4, whole, 10), 8u);
  g.data[1] = buffers[1] + 1;                    // 4-aligned only
  EXPECT_EQ(pieces_word(g, 4, whole, 10), 4u);
  g.offset[1] = 7;
  g.data[1] = buffers[1];
  EXPECT_EQ(pieces_word(g, 4, whole, 10), 4u);  // odd offset
  EXPECT_EQ(pieces_word(g, 8, whole, 10), 8u);  // already 8-byte elements, no pair fits
}

}  // namespace
}  // namespace sy::cuda::datamove
