// Index math of the CUDA data movement kernels (data_movement.cu), kept
// apart so that host tests (tests/cuda/data_movement_test.cu) can check it
// against naive references without a GPU.
//
// Most of the family is one idea: an output written in order, each element
// read from `source + sum(c[k] * strides[k])` where c is the element's
// multi-index in the output. A StridedPlan holds those (dim, stride) pairs
// after dropping unit dims and merging neighbours that stay contiguous, so
// Transpose, Slice, Expand and Tile all become one kernel with a short
// plan. Host-only helpers (shape resolution) return an error message, empty
// when fine, and use fixed arrays: run() allocates nothing on the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "switchyard/provider_sdk/axis.h"
#include "switchyard/provider_abi.h"

namespace sy::cuda::datamove {

inline constexpr int kMaxRank = SY_MAX_RANK;
// Tile views each dim as [repeats, dim], doubling the rank.
inline constexpr int kMaxPlanRank = 2 * kMaxRank;

// ---- strided plans ------------------------------------------------------------

struct StridedPlan {
  int rank = 0;
  bool empty = false;  // some dim is 0: nothing to copy
  int64_t dims[kMaxPlanRank] = {};
  int64_t strides[kMaxPlanRank] = {};  // source elements per step; 0 repeats, negative walks back

  // Appends an output dim (outer to inner). Unit dims vanish; a dim whose
  // outer neighbour's stride is exactly its extent merges into it. False
  // only when the plan is full (more than kMaxPlanRank unmergeable dims).
  __host__ __device__ bool add(int64_t dim, int64_t stride) {
    if (dim == 0) empty = true;
    if (dim == 1 || dim == 0) return true;
    if (rank > 0 && strides[rank - 1] == stride * dim) {
      dims[rank - 1] *= dim;
      strides[rank - 1] = stride;
      return true;
    }
    if (rank == kMaxPlanRank) return false;
    dims[rank] = dim;
    strides[rank] = stride;
    ++rank;
    return true;
  }

  __host__ __device__ int64_t count() const {
    if (empty) return 0;
    int64_t n = 1;
    for (int k = 0; k < rank; ++k) n *= dims[k];
    return n;
  }
};

// Source offset of output element `linear`. I is int32_t when every
// output index and source offset fits (cheaper division), else int64_t.
template <typename I>
__host__ __device__ inline I strided_offset(const StridedPlan& plan, I linear) {
  I offset = 0;
  for (int k = plan.rank - 1; k >= 0; --k) {
    const I d = static_cast<I>(plan.dims[k]);
    const I q = linear / d;
    offset += (linear - q * d) * static_cast<I>(plan.strides[k]);
    linear = q;
  }
  return offset;
}

// Row-major strides of `dims`.
inline void contiguous_strides(const int64_t* dims, int rank, int64_t* strides) {
  int64_t s = 1;
  for (int k = rank - 1; k >= 0; --k) {
    strides[k] = s;
    s *= dims[k];
  }
}

inline int64_t product(const int64_t* dims, int begin, int end) {
  int64_t n = 1;
  for (int k = begin; k < end; ++k) n *= dims[k];
  return n;
}

// Copies of more than one element at a time: when the plan's innermost dim
// is contiguous in the source and every offset is a multiple of `factor`
// elements, the plan can move `factor`-element words instead. Returns the
// widest word size in bytes (up to 16) that fits `esize`-byte elements and
// the two pointers' alignments; esize when none does.
inline size_t widest_word(const StridedPlan& plan, size_t esize, uintptr_t src, uintptr_t dst) {
  if (plan.rank == 0 || plan.strides[plan.rank - 1] != 1) return esize;
  for (size_t w = 16; w > esize; w /= 2) {
    const auto f = static_cast<int64_t>(w / esize);
    bool fits = src % w == 0 && dst % w == 0 && plan.dims[plan.rank - 1] % f == 0;
    for (int k = 0; fits && k + 1 < plan.rank; ++k) fits = plan.strides[k] % f == 0;
    if (fits) return w;
  }
  return esize;
}

// The widest word (bytes, up to 16) for copying runs of `run` elements of
// `esize` bytes that start at the two addresses.
inline size_t aligned_word(size_t esize, int64_t run, uintptr_t a, uintptr_t b) {
  for (size_t w = 16; w > esize; w /= 2)
    if (a % w == 0 && b % w == 0 && run % static_cast<int64_t>(w / esize) == 0) return w;
  return esize;
}

// The plan in words of `factor` elements (widest_word said it fits).
inline StridedPlan widen(const StridedPlan& plan, int64_t factor) {
  StridedPlan w = plan;
  if (factor == 1 || w.rank == 0) return w;
  w.dims[w.rank - 1] /= factor;
  for (int k = 0; k + 1 < w.rank; ++k) w.strides[k] /= factor;
  return w;
}

// ---- Transpose ------------------------------------------------------------------

// Output dim i is input dim perm[i]; fills out_dims.
inline StridedPlan transpose_plan(const int64_t* in_dims, int rank, const int64_t* perm, int64_t* out_dims) {
  int64_t in_strides[kMaxRank];
  contiguous_strides(in_dims, rank, in_strides);
  StridedPlan plan;
  for (int i = 0; i < rank; ++i) {
    const auto from = static_cast<int>(perm[i]);
    out_dims[i] = in_dims[from];
    plan.add(in_dims[from], in_strides[from]);
  }
  return plan;
}

// A transpose whose innermost output dim is strided in the source while
// some other output dim p is the source's contiguous one: moved through
// shared-memory tiles over (p, last) so that reads and writes are both
// coalesced, batched over the remaining dims.
struct TiledTranspose {
  int64_t rows = 0;     // dim p: source stride 1, destination stride dst_row
  int64_t cols = 0;     // last dim: destination stride 1, source stride src_col
  int64_t dst_row = 0;
  int64_t src_col = 0;
  int64_t batches = 1;
  int batch_rank = 0;   // the other dims, outer to inner
  int64_t batch_dims[kMaxPlanRank] = {};
  int64_t batch_src[kMaxPlanRank] = {};
  int64_t batch_dst[kMaxPlanRank] = {};
};

// Tiles pay off only when both sides of a tile are reasonably filled.
inline constexpr int64_t kMinTiledExtent = 8;

// True (and fills t) when `plan` (a transpose plan, destination
// contiguous) suits tiles.
inline bool make_tiled_transpose(const StridedPlan& plan, TiledTranspose& t) {
  const int r = plan.rank;
  if (plan.empty || r < 2 || plan.strides[r - 1] == 1) return false;
  int p = -1;
  for (int i = 0; i < r - 1; ++i)
    if (plan.strides[i] == 1) p = i;
  if (p < 0 || plan.dims[p] < kMinTiledExtent || plan.dims[r - 1] < kMinTiledExtent) return false;
  int64_t dst_strides[kMaxPlanRank];
  contiguous_strides(plan.dims, r, dst_strides);
  t = TiledTranspose{};
  t.rows = plan.dims[p];
  t.cols = plan.dims[r - 1];
  t.dst_row = dst_strides[p];
  t.src_col = plan.strides[r - 1];
  for (int i = 0; i < r - 1; ++i) {
    if (i == p) continue;
    t.batch_dims[t.batch_rank] = plan.dims[i];
    t.batch_src[t.batch_rank] = plan.strides[i];
    t.batch_dst[t.batch_rank] = dst_strides[i];
    ++t.batch_rank;
    t.batches *= plan.dims[i];
  }
  return true;
}

// Source and destination offsets of batch `b`'s (0, 0) element.
__host__ __device__ inline void tiled_batch_offsets(const TiledTranspose& t, int64_t b, int64_t& src, int64_t& dst) {
  src = 0;
  dst = 0;
  for (int k = t.batch_rank - 1; k >= 0; --k) {
    const int64_t q = b / t.batch_dims[k];
    const int64_t c = b - q * t.batch_dims[k];
    src += c * t.batch_src[k];
    dst += c * t.batch_dst[k];
    b = q;
  }
}

// ---- Slice ------------------------------------------------------------------------

// One sliced axis: the first source index, the step and the output length.
struct SliceAxis {
  int64_t first = 0;
  int64_t step = 1;
  int64_t count = 0;
};

// ceil(a / b) for b > 0.
__host__ __device__ inline int64_t ceil_div(int64_t a, int64_t b) { return a > 0 ? (a + b - 1) / b : -((-a) / b); }

// The spec's adjustment of start/end on an axis of size d: negatives count
// from the back, then starts clamp to [0, d] (step > 0) or [0, d-1]
// (step < 0) and ends to [0, d] or [-1, d-1]. step must not be 0.
__host__ __device__ inline SliceAxis slice_axis(int64_t start, int64_t end, int64_t step, int64_t d) {
  SliceAxis s;
  s.step = step;
  if (start < 0) start += d;
  if (end < 0) end += d;
  if (d == 0) return s;
  auto clamp = [](int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); };
  if (step > 0) {
    start = clamp(start, 0, d);
    end = clamp(end, 0, d);
    s.count = end > start ? ceil_div(end - start, step) : 0;
  } else {
    start = clamp(start, 0, d - 1);
    end = clamp(end, -1, d - 1);
    s.count = start > end ? ceil_div(start - end, -step) : 0;
  }
  s.first = start;
  return s;
}

// The plan reading `axes` (one per input dim) from the input; `offset` is
// the first element's position in the input.
inline StridedPlan slice_plan(const int64_t* in_dims, int rank, const SliceAxis* axes, int64_t& offset) {
  int64_t in_strides[kMaxRank];
  contiguous_strides(in_dims, rank, in_strides);
  offset = 0;
  StridedPlan plan;
  for (int k = 0; k < rank; ++k) {
    offset += axes[k].first * in_strides[k];
    plan.add(axes[k].count, in_strides[k] * axes[k].step);
  }
  return plan;
}

// ---- Expand and Tile ------------------------------------------------------------------

// Bidirectional broadcast of `in_dims` with `shape` (right-aligned, a dim
// of 1 on either side stretches). Fills out_dims/out_rank and the plan
// (stride 0 along broadcast dims).
inline std::string expand_plan(const int64_t* in_dims, int in_rank, const int64_t* shape, int n, int64_t* out_dims,
                               int& out_rank, StridedPlan& plan) {
  const int r = in_rank > n ? in_rank : n;
  if (r > kMaxRank) return "the output rank " + std::to_string(r) + " is above " + std::to_string(kMaxRank);
  int64_t in_strides[kMaxRank];
  contiguous_strides(in_dims, in_rank, in_strides);
  plan = StridedPlan{};
  for (int k = 0; k < r; ++k) {
    const int ki = k - (r - in_rank);  // input dim, or negative when missing
    const int ks = k - (r - n);
    const int64_t din = ki >= 0 ? in_dims[ki] : 1;
    const int64_t dreq = ks >= 0 ? shape[ks] : 1;
    if (dreq < 0) return "the shape has a negative dimension " + std::to_string(dreq);
    int64_t d = din;
    if (din == 1) {
      d = dreq;
    } else if (dreq != 1 && dreq != din) {
      return "dimension " + std::to_string(din) + " of the input cannot be broadcast to " + std::to_string(dreq);
    }
    out_dims[k] = d;
    plan.add(d, ki >= 0 && din == d ? in_strides[ki] : 0);
  }
  out_rank = r;
  return {};
}

// Tile: output dim k is repeats[k] copies of input dim k, i.e. the pair
// [repeats[k], in_dims[k]] with strides [0, input stride].
inline std::string tile_plan(const int64_t* in_dims, int rank, const int64_t* repeats, int64_t* out_dims,
                             StridedPlan& plan) {
  int64_t in_strides[kMaxRank];
  contiguous_strides(in_dims, rank, in_strides);
  plan = StridedPlan{};
  for (int k = 0; k < rank; ++k) {
    if (repeats[k] < 0) return "repeats has a negative entry " + std::to_string(repeats[k]);
    out_dims[k] = in_dims[k] * repeats[k];
    plan.add(repeats[k], 0);
    plan.add(in_dims[k], in_strides[k]);
  }
  return {};
}

// ---- Gather ------------------------------------------------------------------------

// Output of Gather seen as [outer, m, inner]: m indices, inner elements
// per gathered slice.
struct GatherPosition {
  int64_t outer = 0;
  int64_t index = 0;  // which of the m indices
  int64_t inner = 0;
};

__host__ __device__ inline GatherPosition gather_position(int64_t linear, int64_t m, int64_t inner) {
  GatherPosition p;
  const int64_t row = linear / inner;
  p.inner = linear - row * inner;
  p.outer = row / m;
  p.index = row - p.outer * m;
  return p;
}

// Source offset for index value `j` on an axis of size `dim`, negatives
// counting from the back; -1 when out of [-dim, dim) (the kernel then
// writes zeros: a GPU kernel cannot cheaply report the error).
__host__ __device__ inline int64_t gather_source(const GatherPosition& p, int64_t j, int64_t dim, int64_t inner) {
  if (j < 0) j += dim;
  if (j < 0 || j >= dim) return -1;
  return (p.outer * dim + j) * inner + p.inner;
}

// ---- Trilu -------------------------------------------------------------------------

// k clamped so that i + k cannot overflow and the result is unchanged.
__host__ __device__ inline int64_t clamp_trilu_k(int64_t k, int64_t n, int64_t m) {
  return k < -n - 1 ? -n - 1 : (k > m + 1 ? m + 1 : k);
}

// Whether element (i, j) of a matrix is kept: upper keeps j - i >= k,
// lower keeps j - i <= k.
__host__ __device__ inline bool trilu_keep(int64_t i, int64_t j, int64_t k, bool upper) {
  return upper ? j - i >= k : j - i <= k;
}

// ---- shapes of the copy-only ops ---------------------------------------------------------

// Reshape: 0 copies the input dim (unless allowzero), one -1 is inferred.
inline std::string reshape_shape(const int64_t* in_dims, int in_rank, const int64_t* req, int n, bool allowzero,
                                 int64_t* out_dims) {
  if (n > kMaxRank) return "the requested rank " + std::to_string(n) + " is above " + std::to_string(kMaxRank);
  const int64_t total = product(in_dims, 0, in_rank);
  int infer_at = -1;
  int64_t known = 1;
  bool has_zero = false;
  for (int i = 0; i < n; ++i) {
    int64_t d = req[i];
    if (d == 0 && !allowzero) {
      if (i >= in_rank)
        return "0 at position " + std::to_string(i) + " copies an input dimension, but the input has rank " +
               std::to_string(in_rank);
      d = in_dims[i];
    } else if (d == 0) {
      has_zero = true;
    }
    if (d == -1) {
      if (infer_at >= 0) return "more than one -1";
      infer_at = i;
      out_dims[i] = 1;
      continue;
    }
    if (d < 0) return "invalid dimension " + std::to_string(d);
    out_dims[i] = d;
    known *= d;
  }
  if (infer_at >= 0) {
    if (has_zero) return "both 0 and -1, which allowzero=1 forbids";
    if (known == 0 || total % known != 0)
      return "the -1 dimension cannot be inferred from " + std::to_string(total) + " elements";
    out_dims[infer_at] = total / known;
  } else if (known != total) {
    return std::to_string(known) + " elements requested, the input has " + std::to_string(total);
  }
  return {};
}

// Flatten at `axis` in [-rank, rank].
inline std::string flatten_shape(const int64_t* in_dims, int rank, int64_t axis, int64_t* out_dims) {
  if (axis < -rank || axis > rank)
    return "axis " + std::to_string(axis) + " is out of range [" + std::to_string(-rank) + ", " +
           std::to_string(rank) + "]";
  if (axis < 0) axis += rank;
  out_dims[0] = product(in_dims, 0, static_cast<int>(axis));
  out_dims[1] = product(in_dims, static_cast<int>(axis), rank);
  return {};
}

// Squeeze: `axes` (n of them) must name dims of size 1; axes == nullptr
// removes every dim of size 1.
inline std::string squeeze_shape(const int64_t* in_dims, int rank, const int64_t* axes, int64_t n, int64_t* out_dims,
                                 int& out_rank) {
  unsigned squeezed = 0;
  if (axes == nullptr) {
    for (int k = 0; k < rank; ++k)
      if (in_dims[k] == 1) squeezed |= 1u << k;
  }
  for (int64_t i = 0; axes != nullptr && i < n; ++i) {
    int64_t a = axes[i];
    if (!provider_sdk::normalize_axis(a, rank))
      return "axis " + std::to_string(axes[i]) + " is out of range [" + std::to_string(-rank) + ", " +
             std::to_string(rank - 1) + "]";
    if (in_dims[a] != 1)
      return "cannot squeeze axis " + std::to_string(axes[i]) + ": its size is " + std::to_string(in_dims[a]);
    squeezed |= 1u << a;
  }
  out_rank = 0;
  for (int k = 0; k < rank; ++k)
    if ((squeezed & (1u << k)) == 0) out_dims[out_rank++] = in_dims[k];
  return {};
}

// Unsqueeze: inserts a 1 at each of `axes`, which index the output.
inline std::string unsqueeze_shape(const int64_t* in_dims, int rank, const int64_t* axes, int64_t n, int64_t* out_dims,
                                   int& out_rank) {
  const int64_t r = rank + n;
  if (r > kMaxRank) return "the output rank " + std::to_string(r) + " is above " + std::to_string(kMaxRank);
  unsigned inserted = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = axes[i];
    if (!provider_sdk::normalize_axis(a, r))
      return "axis " + std::to_string(axes[i]) + " is out of range [" + std::to_string(-r) + ", " +
             std::to_string(r - 1) + "]";
    if (inserted & (1u << a)) return "axis " + std::to_string(axes[i]) + " is repeated";
    inserted |= 1u << a;
  }
  int next = 0;
  for (int k = 0; k < r; ++k) out_dims[k] = (inserted & (1u << k)) ? 1 : in_dims[next++];
  out_rank = static_cast<int>(r);
  return {};
}

// ---- Concat and Split ------------------------------------------------------------------

// Both see their tensors as rows: the whole tensor (Concat's output,
// Split's input) is [outer, row] and piece j is [outer, width[j]], placed
// at column offset[j] of each row. A launch takes this many pieces by value.
inline constexpr int kPiecesPerLaunch = 16;

struct PieceGroup {
  int count = 0;
  void* data[kPiecesPerLaunch] = {};
  int64_t width[kPiecesPerLaunch] = {};
  int64_t offset[kPiecesPerLaunch] = {};
};

// Position in the whole tensor of element i of piece j.
__host__ __device__ inline int64_t piece_to_whole(const PieceGroup& g, int j, int64_t i, int64_t row) {
  const int64_t o = i / g.width[j];
  return o * row + g.offset[j] + (i - o * g.width[j]);
}

// The widest word (bytes) that every piece, the whole tensor and the row
// length allow.
inline size_t pieces_word(const PieceGroup& g, size_t esize, uintptr_t whole, int64_t row) {
  for (size_t w = 16; w > esize; w /= 2) {
    const auto f = static_cast<int64_t>(w / esize);
    bool fits = whole % w == 0 && row % f == 0;
    for (int j = 0; fits && j < g.count; ++j)
      fits = reinterpret_cast<uintptr_t>(g.data[j]) % w == 0 && g.width[j] % f == 0 && g.offset[j] % f == 0;
    if (fits) return w;
  }
  return esize;
}

// The group in words of `factor` elements.
inline PieceGroup widen(const PieceGroup& g, int64_t factor) {
  PieceGroup w = g;
  for (int j = 0; j < w.count; ++j) {
    w.width[j] /= factor;
    w.offset[j] /= factor;
  }
  return w;
}

// ---- Split ----------------------------------------------------------------------------

// Size of piece j of n without an explicit split: equal parts (dim must
// divide), or from opset 18 ceil(dim / n) each with the last ones taking
// what is left.
inline int64_t split_piece(int64_t dim, int64_t n, int64_t j, bool ceil_pieces) {
  if (!ceil_pieces) return dim / n;
  const int64_t chunk = (dim + n - 1) / n;
  const int64_t left = dim - j * chunk;
  return left < 0 ? 0 : (left > chunk ? chunk : left);
}

}  // namespace sy::cuda::datamove
