// Index math and small device helpers shared by the normalization,
// reduction and pooling kernels (normalization.cu, reduction.cu, pool.cu).
//
// Everything that maps an output to the input elements it reads is a
// __host__ __device__ function here, so tests/cuda/normpool_test.cu can
// check it on the host against naive loops: the pooling window and output
// shape (which must match the CPU provider's exactly), the reduction plan
// that turns any axes set into "kept offset + reduced offset", the softmax
// row layout, and the tie and NaN rules of ArgMax/ArgMin.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "switchyard/provider_sdk/axis.h"
#include "switchyard/provider_sdk/window_dim.h"  // the CPU provider's window rule too
#include "switchyard/provider_abi.h"

namespace sy::cuda::normpool {

// ---- softmax / arg layout ---------------------------------------------------------

// Splits a shape into [outer, n, inner] for normalising along `axis`.
// Softmax before opset 13 (`flatten`) sees the input as a matrix
// [prod(dims[:axis]), prod(dims[axis:])], so inner is 1 and n takes the
// rest. A scalar is one row of one element (axis 0 or -1). False when the
// axis is out of range.
inline bool axis_layout(int rank, const int64_t* dims, int64_t axis, bool flatten, int64_t& outer, int64_t& n,
                        int64_t& inner) {
  if (rank == 0) {
    outer = n = inner = 1;
    return axis == 0 || axis == -1;
  }
  if (!provider_sdk::normalize_axis(axis, rank)) return false;
  outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  n = 1;
  inner = 1;
  if (flatten) {
    for (int d = static_cast<int>(axis); d < rank; ++d) n *= dims[d];
  } else {
    n = dims[axis];
    for (int d = static_cast<int>(axis) + 1; d < rank; ++d) inner *= dims[d];
  }
  return true;
}

// ---- online softmax ------------------------------------------------------------------

// A running maximum and the sum of exp(x - m) over the elements seen, so
// softmax needs one pass for its statistics instead of two. Merging two
// rescales the smaller side; an empty side (m = -inf, s = 0) adds nothing
// (and never computes exp(-inf - -inf), which is NaN).
struct MaxSum {
  float m;
  float s;
};

__host__ __device__ inline MaxSum max_sum_empty() { return {-INFINITY, 0.0f}; }

__host__ __device__ inline MaxSum max_sum_combine(MaxSum a, MaxSum b) {
  if (a.m == -INFINITY) return b;
  if (b.m == -INFINITY) return a;
  if (a.m >= b.m) return {a.m, a.s + b.s * expf(b.m - a.m)};
  if (b.m > a.m) return {b.m, b.s + a.s * expf(a.m - b.m)};
  // A NaN maximum: the row's result is NaN either way.
  return {a.m + b.m, a.s + b.s};
}

// Folds one element in. -inf adds exp(-inf) = 0; a NaN makes both NaN (a
// NaN sum alone would be lost when merged with an empty side).
__host__ __device__ inline MaxSum max_sum_add(MaxSum a, float v) {
  if (v != v) return {v, v};
  if (v > a.m) return {v, a.s * expf(a.m - v) + 1.0f};  // a.m = -inf gives 0 * 0 + 1
  if (v == -INFINITY) return a;
  return {a.m, a.s + expf(v - a.m)};
}

// ---- ArgMax / ArgMin ----------------------------------------------------------------

// A candidate: a value and its index along the axis; index -1 is "none yet"
// (a thread that saw no element).
struct ArgCandidate {
  float v;
  int64_t i;
};

// Whether candidate a beats b, as the CPU provider's sequential scan decides:
// NaN counts as the extreme value (numpy's argmax/argmin), and ties go to
// the first index or, with select_last_index, the last. This is a total
// order, so any reduction tree gives the sequential scan's answer.
__host__ __device__ inline bool arg_beats(ArgCandidate a, ArgCandidate b, bool is_max, bool last) {
  if (b.i < 0) return a.i >= 0;
  if (a.i < 0) return false;
  const bool an = a.v != a.v, bn = b.v != b.v;
  if (an != bn) return an;
  if (!an && a.v != b.v) return is_max ? a.v > b.v : a.v < b.v;
  return last ? a.i > b.i : a.i < b.i;
}

__host__ __device__ inline ArgCandidate arg_pick(ArgCandidate a, ArgCandidate b, bool is_max, bool last) {
  return arg_beats(b, a, is_max, last) ? b : a;
}

// ---- reductions -----------------------------------------------------------------------

// Any set of reduced axes, as two index maps: output o (row-major over the
// kept dims, which is the output's layout whether or not keepdims leaves
// 1s in it) starts at kept_offset(o) in the input, and its r-th reduced
// element (row-major over the reduced dims) lies reduced_offset(r) further.
// Dims of size 1 drop out and neighbouring dims of the same kind merge, so
// the common cases have one reduced dim: [K, R] (rows, stride 1) or
// [K1, R, K2] (stride K2).
struct ReducePlan {
  int64_t out_count = 1;     // product of kept dims
  int64_t reduce_count = 1;  // product of reduced dims
  int nk = 0;                // merged kept dims
  int nr = 0;                // merged reduced dims
  int64_t kdims[SY_MAX_RANK] = {};
  int64_t kstrides[SY_MAX_RANK] = {};  // input strides, elements
  int64_t rdims[SY_MAX_RANK] = {};
  int64_t rstrides[SY_MAX_RANK] = {};
  bool inner_reduced = false;  // the input's innermost (stride-1) merged dim is reduced
};

inline ReducePlan make_reduce_plan(int rank, const int64_t* dims, const bool* reduced) {
  // Merge runs of the same kind, skipping size-1 dims.
  int m = 0;
  int64_t mdims[SY_MAX_RANK];
  bool mred[SY_MAX_RANK];
  ReducePlan p;
  for (int d = 0; d < rank; ++d) {
    if (reduced[d]) {
      p.reduce_count *= dims[d];
    } else {
      p.out_count *= dims[d];
    }
    if (dims[d] == 1) continue;
    if (m > 0 && mred[m - 1] == reduced[d]) {
      mdims[m - 1] *= dims[d];
      continue;
    }
    mdims[m] = dims[d];
    mred[m] = reduced[d];
    ++m;
  }
  int64_t stride = 1;
  int64_t mstrides[SY_MAX_RANK];
  for (int d = m - 1; d >= 0; --d) {
    mstrides[d] = stride;
    stride *= mdims[d];
  }
  for (int d = 0; d < m; ++d) {
    if (mred[d]) {
      p.rdims[p.nr] = mdims[d];
      p.rstrides[p.nr] = mstrides[d];
      ++p.nr;
    } else {
      p.kdims[p.nk] = mdims[d];
      p.kstrides[p.nk] = mstrides[d];
      ++p.nk;
    }
  }
  p.inner_reduced = m > 0 && mred[m - 1];
  return p;
}

__host__ __device__ inline int64_t kept_offset(const ReducePlan& p, int64_t o) {
  int64_t off = 0;
  for (int d = p.nk - 1; d >= 0; --d) {
    off += (o % p.kdims[d]) * p.kstrides[d];
    o /= p.kdims[d];
  }
  return off;
}

__host__ __device__ inline int64_t reduced_offset(const ReducePlan& p, int64_t r) {
  if (p.nr == 1) return r * p.rstrides[0];  // the usual case: no division
  int64_t off = 0;
  for (int d = p.nr - 1; d >= 0; --d) {
    off += (r % p.rdims[d]) * p.rstrides[d];
    r /= p.rdims[d];
  }
  return off;
}

// ---- pooling ----------------------------------------------------------------------------

inline constexpr int kMaxPoolDims = SY_MAX_RANK - 2;  // spatial dims after N and C

using provider_sdk::AutoPad;

// The attributes as written on the node; a count of 0 means "absent".
struct PoolAttrs {
  AutoPad auto_pad = AutoPad::kNotSet;
  int rank = 0;  // kernel_shape's length
  int64_t kernel[kMaxPoolDims] = {};
  int n_strides = 0, n_dilations = 0, n_pads = 0;
  int64_t strides[kMaxPoolDims] = {};
  int64_t dilations[kMaxPoolDims] = {};
  int64_t pads[2 * kMaxPoolDims] = {};
  bool ceil_mode = false;
};

// The window over one input's spatial dims.
struct PoolGeometry {
  int rank = 0;
  int64_t in[kMaxPoolDims] = {};
  int64_t out[kMaxPoolDims] = {};
  int64_t kernel[kMaxPoolDims] = {};
  int64_t stride[kMaxPoolDims] = {};
  int64_t dilation[kMaxPoolDims] = {};
  int64_t pad_begin[kMaxPoolDims] = {};
  int64_t pad_end[kMaxPoolDims] = {};

  __host__ __device__ int64_t in_size() const {
    int64_t s = 1;
    for (int i = 0; i < rank; ++i) s *= in[i];
    return s;
  }
  __host__ __device__ int64_t out_size() const {
    int64_t s = 1;
    for (int i = 0; i < rank; ++i) s *= out[i];
    return s;
  }
};

// Output sizes and effective pads, each dim by the CPU provider's own rule
// (switchyard/provider_sdk/window_dim.h). Returns "" or what is wrong.
inline std::string compute_pool_geometry(const PoolAttrs& a, int rank, const int64_t* in, PoolGeometry& g) {
  if (rank < 1 || rank > kMaxPoolDims)
    return "the input needs 1 to " + std::to_string(kMaxPoolDims) + " spatial dims; got " + std::to_string(rank);
  if (a.rank != rank)
    return "kernel_shape has " + std::to_string(a.rank) + " dims but the input has " + std::to_string(rank) +
           " spatial dims";
  g = PoolGeometry{};
  g.rank = rank;
  for (int i = 0; i < rank; ++i) {
    const int64_t k = a.kernel[i];
    const int64_t s = a.n_strides ? a.strides[i] : 1;
    const int64_t d = a.n_dilations ? a.dilations[i] : 1;
    g.in[i] = in[i];
    g.kernel[i] = k;
    g.stride[i] = s;
    g.dilation[i] = d;
    provider_sdk::WindowDim w;
    const std::string error = provider_sdk::window_dim(i, in[i], k, s, d, a.auto_pad, a.n_pads ? a.pads[i] : 0,
                                              a.n_pads ? a.pads[i + rank] : 0, a.ceil_mode, w);
    if (!error.empty()) return error;
    g.out[i] = w.out;
    g.pad_begin[i] = w.pad_begin;
    g.pad_end[i] = w.pad_end;
  }
  return "";
}

// Kernel taps [lo, hi) of a window starting at input index `start` that fall
// inside [0, size); pad_hi counts those inside [.., size + pad_end), the
// divisor of AveragePool with count_include_pad (taps before the input are
// all padding when the window starts there, so lo is not needed for it).
struct TapRange {
  int64_t lo, hi, pad_hi;
};

__host__ __device__ inline TapRange pool_taps(int64_t start, int64_t kernel, int64_t dilation, int64_t size,
                                              int64_t pad_end) {
  TapRange r;
  r.lo = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  if (size - 1 - start < 0) {
    r.hi = 0;
  } else {
    const int64_t h = (size - 1 - start) / dilation + 1;
    r.hi = h < kernel ? h : kernel;
  }
  if (size + pad_end - 1 - start < 0) {
    r.pad_hi = 0;
  } else {
    const int64_t h = (size + pad_end - 1 - start) / dilation + 1;
    r.pad_hi = h < kernel ? h : kernel;
  }
  if (r.hi < r.lo) r.hi = r.lo;
  return r;
}

// One output of a pooling window over one (n, c) plane `x` (row-major
// spatial dims), as the CPU provider computes it:
//   max: the first of equal maxima wins (`v > best`), so a NaN is kept
//        only when it comes first; *index is its offset in the plane,
//        row-major or, with column_major (storage_order = 1), column-major;
//        an all-padding window gives `lowest`;
//   average: the mean of the in-bounds taps, or with count_include_pad of
//        the taps inside the padded input; 0 when there are none.
// q is the output's row-major index within the plane. Load is a functor
// offset -> float.
template <bool kMax, typename Load>
__host__ __device__ inline float pool_window(const PoolGeometry& g, int64_t q, const Load& load, bool count_include_pad,
                                             bool column_major, float lowest, int64_t* index) {
  const int rank = g.rank;
  int64_t start[kMaxPoolDims], lo[kMaxPoolDims], hi[kMaxPoolDims];
  int64_t in_stride[kMaxPoolDims], idx_stride[kMaxPoolDims];
  int64_t count = 1, pad_count = 1;
  {
    int64_t rem = q;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t o = rem % g.out[d];
      rem /= g.out[d];
      start[d] = o * g.stride[d] - g.pad_begin[d];
      const TapRange r = pool_taps(start[d], g.kernel[d], g.dilation[d], g.in[d], g.pad_end[d]);
      lo[d] = r.lo;
      hi[d] = r.hi;
      count *= r.hi - r.lo;
      pad_count *= r.pad_hi;
    }
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; --d) {
      in_stride[d] = s;
      s *= g.in[d];
    }
    s = 1;
    for (int d = 0; d < rank; ++d) {
      idx_stride[d] = column_major ? s : in_stride[d];
      s *= g.in[d];
    }
  }
  float best = lowest, sum = 0.0f;
  int64_t best_index = 0;
  bool found = false;
  if (count > 0) {
    int64_t k[kMaxPoolDims];
    for (int d = 0; d < rank; ++d) k[d] = lo[d];
    for (;;) {
      int64_t off = 0, ioff = 0;
      for (int d = 0; d < rank; ++d) {
        const int64_t i = start[d] + k[d] * g.dilation[d];
        off += i * in_stride[d];
        ioff += i * idx_stride[d];
      }
      const float v = load(off);
      if (kMax) {
        if (!found || v > best) {
          best = v;
          best_index = ioff;
          found = true;
        }
      } else {
        sum += v;
      }
      int d = rank - 1;
      for (; d >= 0; --d) {
        if (++k[d] < hi[d]) break;
        k[d] = lo[d];
      }
      if (d < 0) break;
    }
  }
  if (kMax) {
    if (index != nullptr) *index = best_index;
    return best;
  }
  const int64_t divisor = count_include_pad ? pad_count : count;
  return divisor > 0 ? sum / static_cast<float>(divisor) : 0.0f;
}

// ---- device-side group reductions -------------------------------------------------------
// A "group" is one warp (a row per warp) or the whole block (a row per
// block). Every thread of the group gets the result.

#ifdef __CUDACC__
__device__ inline float shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
__device__ inline MaxSum shfl_xor(MaxSum v, int mask) { return {shfl_xor(v.m, mask), shfl_xor(v.s, mask)}; }
__device__ inline ArgCandidate shfl_xor(ArgCandidate v, int mask) {
  return {shfl_xor(v.v, mask), static_cast<int64_t>(__shfl_xor_sync(0xffffffffu, static_cast<long long>(v.i), mask))};
}

// Combiners shared by the kernels' loops and group_allreduce. NaN wins in
// nan_max and nan_min (numpy's maximum / minimum), as in ReduceMax and the
// CPU provider.
__device__ inline float nan_max(float a, float v) { return (v != v || v > a) ? v : a; }
__device__ inline float nan_min(float a, float v) { return (v != v || v < a) ? v : a; }
struct AddF {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct NanMaxF {
  __device__ float operator()(float a, float b) const { return nan_max(a, b); }
};

template <typename V, typename Op>
__device__ inline V warp_allreduce(V v, const Op& op) {
  for (int mask = 16; mask > 0; mask >>= 1) v = op(v, shfl_xor(v, mask));
  return v;
}

// kBlock: reduce over the block (blockDim.x a multiple of 32, every thread
// calling), through `smem` of 32 values; else over the warp. The combine
// order is the same in every thread, so all get bit-identical results.
template <bool kBlock, typename V, typename Op>
__device__ inline V group_allreduce(V v, const Op& op, V* smem) {
  v = warp_allreduce(v, op);
  if (!kBlock) return v;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int warps = static_cast<int>(blockDim.x) / 32;
  if (threadIdx.x % 32 == 0) smem[warp] = v;
  __syncthreads();
  V r = smem[0];
  for (int w = 1; w < warps; ++w) r = op(r, smem[w]);
  __syncthreads();  // smem is reused by the next call
  return r;
}

// For kernels that give each group a row: this thread's group's first row,
// the step between its rows, and its lane and width within the group.
template <bool kBlock>
struct RowGroup {
  int64_t first, step;
  int lane, width;
  __device__ RowGroup() {
    const int64_t groups = kBlock ? 1 : blockDim.x / 32;
    const int64_t g = kBlock ? 0 : threadIdx.x / 32;
    first = static_cast<int64_t>(blockIdx.x) * groups + g;
    step = static_cast<int64_t>(gridDim.x) * groups;
    lane = kBlock ? static_cast<int>(threadIdx.x) : static_cast<int>(threadIdx.x % 32);
    width = kBlock ? static_cast<int>(blockDim.x) : 32;
  }
};
#endif

}  // namespace sy::cuda::normpool
