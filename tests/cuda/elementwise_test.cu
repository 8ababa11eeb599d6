// Host tests of the element-wise kernels' broadcast index math
// (providers/cuda/elementwise_index.cuh): output shapes, the merged
// BroadcastShape, the path choice, and per-element offsets against a naive
// unravel / re-ravel reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "providers/cuda/elementwise_index.cuh"

namespace sy::cuda {
namespace {

using Dims = std::vector<int64_t>;

bool broadcast(const Dims& a, const Dims& b, Dims& out) {
  int rank = 0;
  int64_t dims[SY_MAX_RANK] = {};
  if (!broadcast_two(static_cast<int>(a.size()), a.data(), static_cast<int>(b.size()), b.data(), rank, dims))
    return false;
  out.assign(dims, dims + rank);
  return true;
}

BroadcastShape shape_of(const std::vector<Dims>& inputs, const Dims& out) {
  int ranks[kMaxBroadcastInputs] = {};
  const int64_t* dims[kMaxBroadcastInputs] = {};
  for (size_t k = 0; k < inputs.size(); ++k) {
    ranks[k] = static_cast<int>(inputs[k].size());
    dims[k] = inputs[k].data();
  }
  BroadcastShape s;
  make_broadcast_shape(static_cast<int>(inputs.size()), ranks, dims, static_cast<int>(out.size()), out.data(), s);
  return s;
}

int64_t count(const Dims& d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

// The offset into an input of shape `in` (right-aligned against `out`,
// row-major, dims of 1 broadcast) of output element i.
int64_t naive_offset(const Dims& in, const Dims& out, int64_t i) {
  std::vector<int64_t> idx(out.size());
  for (size_t d = out.size(); d-- > 0;) {
    idx[d] = i % out[d];
    i /= out[d];
  }
  const size_t shift = out.size() - in.size();
  int64_t offset = 0;
  for (size_t d = 0; d < in.size(); ++d) offset = offset * in[d] + (in[d] == 1 ? 0 : idx[d + shift]);
  return offset;
}

TEST(CudaElementwiseBroadcast, OutputShapes) {
  Dims out;
  ASSERT_TRUE(broadcast({2, 3, 4}, {2, 3, 4}, out));
  EXPECT_EQ(out, (Dims{2, 3, 4}));
  ASSERT_TRUE(broadcast({2, 3, 4}, {}, out));  // scalar
  EXPECT_EQ(out, (Dims{2, 3, 4}));
  ASSERT_TRUE(broadcast({}, {}, out));
  EXPECT_EQ(out, Dims{});
  ASSERT_TRUE(broadcast({4}, {2, 3, 4}, out));
  EXPECT_EQ(out, (Dims{2, 3, 4}));
  ASSERT_TRUE(broadcast({2, 1, 4}, {3, 1}, out));
  EXPECT_EQ(out, (Dims{2, 3, 4}));
  ASSERT_TRUE(broadcast({1, 3}, {5, 1}, out));
  EXPECT_EQ(out, (Dims{5, 3}));
  // 1 against 0 is 0 (numpy); 0 against 0 is 0.
  ASSERT_TRUE(broadcast({0, 3}, {1, 3}, out));
  EXPECT_EQ(out, (Dims{0, 3}));
  ASSERT_TRUE(broadcast({1}, {0}, out));
  EXPECT_EQ(out, (Dims{0}));
  ASSERT_TRUE(broadcast({1, 1, 1, 1, 1, 1, 1, 7}, {6, 1}, out));
  EXPECT_EQ(out, (Dims{1, 1, 1, 1, 1, 1, 6, 7}));
  // Incompatible.
  EXPECT_FALSE(broadcast({2, 3}, {3, 2}, out));
  EXPECT_FALSE(broadcast({3}, {4}, out));
  EXPECT_FALSE(broadcast({0}, {2}, out));
}

TEST(CudaElementwiseBroadcast, FoldsOverThreeShapes) {
  // Where: condition [4, 1], X [1, 5], Y [3, 1, 1] -> [3, 4, 5]; the
  // output buffer is also the running shape.
  int rank = 0;
  int64_t dims[SY_MAX_RANK] = {};
  const Dims shapes[] = {{4, 1}, {1, 5}, {3, 1, 1}};
  for (const Dims& s : shapes) ASSERT_TRUE(broadcast_two(rank, dims, static_cast<int>(s.size()), s.data(), rank, dims));
  EXPECT_EQ(Dims(dims, dims + rank), (Dims{3, 4, 5}));
}

TEST(CudaElementwiseBroadcast, SameShapesMergeToOneFlatDim) {
  const BroadcastShape s = shape_of({{2, 3, 4}, {2, 3, 4}}, {2, 3, 4});
  ASSERT_EQ(s.rank, 1);
  EXPECT_EQ(s.dims[0], 24);
  EXPECT_EQ(s.strides[0][0], 1);
  EXPECT_EQ(s.strides[1][0], 1);
  EXPECT_EQ(binary_path(s), BinaryPath::kFlat);
  EXPECT_TRUE(all_inputs_flat(s));
}

TEST(CudaElementwiseBroadcast, ScalarOperands) {
  BroadcastShape s = shape_of({{2, 3}, {}}, {2, 3});
  ASSERT_EQ(s.rank, 1);
  EXPECT_EQ(s.dims[0], 6);
  EXPECT_EQ(s.strides[0][0], 1);
  EXPECT_EQ(s.strides[1][0], 0);
  EXPECT_EQ(binary_path(s), BinaryPath::kScalarB);
  EXPECT_FALSE(all_inputs_flat(s));

  // A one-element tensor of any rank is a scalar too.
  s = shape_of({{1, 1}, {5, 7}}, {5, 7});
  EXPECT_EQ(binary_path(s), BinaryPath::kScalarA);

  // Both one element: a single output element, rank 0.
  s = shape_of({{1}, {}}, {1});
  EXPECT_EQ(s.rank, 0);
  EXPECT_EQ(binary_path(s), BinaryPath::kFlat);
  s = shape_of({{}, {}}, {});
  EXPECT_EQ(s.rank, 0);
  EXPECT_EQ(binary_path(s), BinaryPath::kFlat);
  EXPECT_TRUE(all_inputs_flat(s));
}

TEST(CudaElementwiseBroadcast, BiasRow) {
  // [N, C] + [C]: two dims, the bias stays along N.
  const BroadcastShape s = shape_of({{8, 16}, {16}}, {8, 16});
  ASSERT_EQ(s.rank, 2);
  EXPECT_EQ(s.dims[0], 8);
  EXPECT_EQ(s.dims[1], 16);
  EXPECT_EQ(s.strides[0][0], 16);
  EXPECT_EQ(s.strides[0][1], 1);
  EXPECT_EQ(s.strides[1][0], 0);
  EXPECT_EQ(s.strides[1][1], 1);
  EXPECT_EQ(binary_path(s), BinaryPath::kGeneral);
}

TEST(CudaElementwiseBroadcast, ChannelBiasMergesSpatialDims) {
  // NCHW [2, 3, 4, 5] + [3, 1, 1]: H and W merge into one dim of 20.
  const BroadcastShape s = shape_of({{2, 3, 4, 5}, {3, 1, 1}}, {2, 3, 4, 5});
  ASSERT_EQ(s.rank, 3);
  EXPECT_EQ(s.dims[0], 2);
  EXPECT_EQ(s.dims[1], 3);
  EXPECT_EQ(s.dims[2], 20);
  EXPECT_EQ(s.strides[0][0], 60);
  EXPECT_EQ(s.strides[0][1], 20);
  EXPECT_EQ(s.strides[0][2], 1);
  EXPECT_EQ(s.strides[1][0], 0);
  EXPECT_EQ(s.strides[1][1], 1);
  EXPECT_EQ(s.strides[1][2], 0);
}

TEST(CudaElementwiseBroadcast, OuterProduct) {
  // [4, 1] * [1, 5]: neither input moves along both dims.
  const BroadcastShape s = shape_of({{4, 1}, {1, 5}}, {4, 5});
  ASSERT_EQ(s.rank, 2);
  EXPECT_EQ(s.strides[0][0], 1);
  EXPECT_EQ(s.strides[0][1], 0);
  EXPECT_EQ(s.strides[1][0], 0);
  EXPECT_EQ(s.strides[1][1], 1);
  uint32_t off[2];
  broadcast_offsets<2>(s, uint32_t{13}, off);  // row 2, column 3
  EXPECT_EQ(off[0], 2u);
  EXPECT_EQ(off[1], 3u);
}

TEST(CudaElementwiseBroadcast, InPlaceAccumulatorMovesEverywhere) {
  // Max with three inputs: y (the output's shape) against input 2; y's
  // offset must be the output index itself.
  const Dims out = {3, 4, 5};
  const BroadcastShape s = shape_of({out, {4, 1}}, out);
  for (int64_t i = 0; i < count(out); ++i) {
    int64_t off[2];
    broadcast_offsets<2>(s, i, off);
    EXPECT_EQ(off[0], i);
    EXPECT_EQ(off[1], naive_offset({4, 1}, out, i));
  }
}

template <int N, typename IndexT>
void check_offsets(const std::vector<Dims>& inputs, const Dims& out) {
  const BroadcastShape s = shape_of(inputs, out);
  ASSERT_LE(s.rank, SY_MAX_RANK);
  const int64_t n = count(out);
  for (int64_t i = 0; i < n; ++i) {
    IndexT off[N];
    broadcast_offsets<N>(s, static_cast<IndexT>(i), off);
    for (int k = 0; k < N; ++k)
      ASSERT_EQ(static_cast<int64_t>(off[k]), naive_offset(inputs[k], out, i)) << "input " << k << " element " << i;
  }
}

TEST(CudaElementwiseBroadcast, RandomShapesMatchNaiveOffsets) {
  std::mt19937 rng(1234);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 400; ++trial) {
    const int rank = pick(0, SY_MAX_RANK);
    Dims out(rank);
    for (int64_t& d : out) d = pick(1, rank > 5 ? 2 : 4);
    const int num_inputs = pick(2, 3);
    std::vector<Dims> inputs(num_inputs);
    for (Dims& in : inputs) {
      const int r = pick(0, rank);
      in.resize(r);
      for (int d = 0; d < r; ++d) in[d] = pick(0, 2) == 0 ? 1 : out[d + rank - r];
    }
    // The output shape the inputs imply must be `out` wherever some input
    // has the dim; elsewhere it is 1, so recompute it.
    int out_rank = 0;
    int64_t dims[SY_MAX_RANK] = {};
    for (const Dims& in : inputs)
      ASSERT_TRUE(broadcast_two(out_rank, dims, static_cast<int>(in.size()), in.data(), out_rank, dims));
    const Dims implied(dims, dims + out_rank);
    if (num_inputs == 2) {
      check_offsets<2, uint32_t>(inputs, implied);
      check_offsets<2, int64_t>(inputs, implied);
    } else {
      check_offsets<3, uint32_t>(inputs, implied);
      check_offsets<3, int64_t>(inputs, implied);
    }
    // Broadcasting into a larger output than the inputs imply works too
    // (the variadic kernels do that): every input is broadcast along it.
    inputs.resize(2);
    check_offsets<2, uint32_t>(inputs, out);
  }
}

TEST(CudaElementwiseBroadcast, PathForPartialBroadcast) {
  // [2, 3] against [2, 1]: general, not a scalar.
  const BroadcastShape s = shape_of({{2, 3}, {2, 1}}, {2, 3});
  EXPECT_EQ(binary_path(s), BinaryPath::kGeneral);
  // Where with a scalar Y: one dim, Y's stride 0, not flat.
  const BroadcastShape w = shape_of({{6}, {6}, {}}, {6});
  EXPECT_EQ(w.rank, 1);
  EXPECT_EQ(w.strides[2][0], 0);
  EXPECT_FALSE(all_inputs_flat(w));
  const BroadcastShape f = shape_of({{2, 3}, {2, 3}, {2, 3}}, {2, 3});
  EXPECT_TRUE(all_inputs_flat(f));
}

TEST(CudaElementwiseBroadcast, LargeOffsetsUse64Bits) {
  // An output past 2^32 elements: the int64 path keeps exact offsets.
  const Dims out = {3, int64_t{1} << 31};
  const BroadcastShape s = shape_of({{3, 1}, {int64_t{1} << 31}}, out);
  const int64_t i = 2 * (int64_t{1} << 31) + 12345;
  int64_t off[2];
  broadcast_offsets<2>(s, i, off);
  EXPECT_EQ(off[0], 2);
  EXPECT_EQ(off[1], 12345);
  EXPECT_GT(count(out), kMax32BitElements);
}

}  // namespace
}  // namespace sy::cuda
