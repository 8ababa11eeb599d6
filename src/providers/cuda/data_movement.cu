// Data movement on the GPU: ops that only move bytes, so one kernel serves
// every element type of 1, 2, 4 or 8 bytes (strings and packed 4-bit types
// fall through to the CPU).
//
// - Reshape, Flatten, Squeeze, Unsqueeze, Identity: compute the new shape on
//   the host and copy the bytes with one cudaMemcpyAsync (each output has
//   its own buffer, as on the CPU).
// - Transpose, Slice, Expand, Tile: a StridedPlan (data_movement_index.cuh)
//   and one grid-stride kernel; contiguous runs move as 16-byte words when
//   alignment allows. Transposes whose innermost output dim is strided in
//   the input go through 32x32 shared-memory tiles instead.
// - Concat, Split: rows of pieces, up to 16 pieces per launch passed by
//   value (no pointer table in device memory, which would need a copy).
// - Gather: indices stay on the device; an out-of-range index cannot be
//   reported from a kernel without a sync, so its slice is written as zeros.
// - ConstantOfShape, Trilu: a fill and a masked copy.
//
// Shape arguments (Reshape's shape, Slice's starts/ends/axes/steps, ...)
// are host inputs (the def's host_inputs mask), read directly in run().
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/provider_sdk/axis.h"
#include "cuda_kernel.h"
#include "cuda_types.cuh"
#include "data_movement_index.cuh"

namespace sy::cuda {
namespace {

using namespace datamove;

// Every element type of 1, 2, 4 or 8 bytes that the kernels move (they
// only move bytes, in words of dtype_size).
constexpr uint64_t kMoveTypes =
    type_bit(DataType::kFloat) | type_bit(DataType::kUint8) | type_bit(DataType::kInt8) |
    type_bit(DataType::kUint16) | type_bit(DataType::kInt16) | type_bit(DataType::kInt32) |
    type_bit(DataType::kInt64) | type_bit(DataType::kBool) | type_bit(DataType::kFloat16) |
    type_bit(DataType::kDouble) | type_bit(DataType::kUint32) | type_bit(DataType::kUint64) |
    type_bit(DataType::kBfloat16);

constexpr uint64_t kHostInput1 = uint64_t{1} << 1;

bool movable(int32_t dtype) { return dtype > 0 && dtype < 64 && (kMoveTypes & (uint64_t{1} << dtype)) != 0; }

// ---- creation checks --------------------------------------------------------------

// Input i must be a tensor of a type the kernels move.
Status check_data_input(const KernelCreateInfo& info, int i) {
  TensorRef t;
  if (!info.input_type(i, t)) return info.unsupported("input " + std::to_string(i) + " is not a tensor");
  if (!movable(t.t.dtype))
    return info.unsupported(std::string("element type ") + dtype_name(t.t.dtype) +
                            " is not handled by the CUDA data movement kernels");
  return ok_status();
}

// Input i, when present with a known type, must be int64 (or int32 when
// allowed): shape-like arguments.
Status check_index_type(const KernelCreateInfo& info, int i, const char* name, bool allow_int32) {
  const int32_t t = info.has_input(i) ? info.input_dtype(i) : 0;
  const bool ok = t == 0 || t == static_cast<int32_t>(DataType::kInt64) ||
                  (allow_int32 && t == static_cast<int32_t>(DataType::kInt32));
  if (!ok)
    return info.error("input " + std::to_string(i) + " (" + name + ") must be " +
                      (allow_int32 ? "int32 or int64" : "int64") + ", got " + dtype_name(t));
  return ok_status();
}

// The usual pair: input 0 is moved data, input 1 an index-like argument.
Status init_data_and_index(const KernelCreateInfo& info, const char* name, bool allow_int32) {
  SY_SDK_RETURN_IF_ERROR(check_data_input(info, 0));
  return check_index_type(info, 1, name, allow_int32);
}

// Axis attributes may be negative only from opset 11.
Status check_axis_sign(const KernelCreateInfo& info, int64_t axis) {
  if (axis < 0 && info.since_version() < 11)
    return info.error("axis " + std::to_string(axis) + " must be >= 0 before opset 11");
  return ok_status();
}

// ---- run helpers -------------------------------------------------------------------------

// Shared by the kernels: errors at run time name the node.
class DataMovementKernel : public CudaKernel {
 protected:
  explicit DataMovementKernel(const KernelCreateInfo& info) : node_(info.describe()) {}
  Status fail(const std::string& message) const { return runtime_error(node_ + ": " + message); }

  // Input i, which the op requires.
  Status required(const KernelRunContext& ctx, int i, const TensorRef*& t) const {
    t = ctx.input(i);
    if (t == nullptr) return fail("input " + std::to_string(i) + " is missing");
    return ok_status();
  }

  // A host input holding a list of integers: 1-D (a scalar is taken as one
  // entry) int64, or int32 when allowed.
  Status host_ints(const TensorRef& t, int i, const char* name, bool allow_int32) const {
    const bool ok = (t.dtype() == DataType::kInt64 || (allow_int32 && t.dtype() == DataType::kInt32)) && t.rank() <= 1;
    if (!ok)
      return fail("input " + std::to_string(i) + " (" + name + ") must be a 1-D " +
                  (allow_int32 ? "int32 or int64" : "int64") + " tensor, got " + t.describe());
    return ok_status();
  }

  std::string node_;
};

// Element e of a host int32/int64 tensor.
int64_t host_int(const TensorRef& t, int64_t e) {
  if (t.dtype() == DataType::kInt32) return t.data<const int32_t>()[e];
  return t.data<const int64_t>()[e];
}

// Calls f.template operator()<W>() with W an unsigned type of `bytes`
// bytes: an element (1, 2, 4, 8) ...
template <typename F>
Status dispatch_element(size_t bytes, F&& f) {
  switch (bytes) {
    case 1: return f.template operator()<uint8_t>();
    case 2: return f.template operator()<uint16_t>();
    case 4: return f.template operator()<uint32_t>();
    case 8: return f.template operator()<uint64_t>();
    default: return runtime_error("no element type of " + std::to_string(bytes) + " bytes");
  }
}

// ... or a word of several elements (also 16) for kernels that only copy.
template <typename F>
Status dispatch_word(size_t bytes, F&& f) {
  if (bytes == 16) return f.template operator()<uint4>();
  return dispatch_element(bytes, std::forward<F>(f));
}

// ---- kernels -------------------------------------------------------------------------------

template <typename T, typename I>
__global__ void strided_copy_kernel(T* __restrict__ dst, const T* __restrict__ src, StridedPlan plan, I n) {
  const I step = static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x);
  for (I i = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x); i < n;
       i += step)
    dst[i] = src[strided_offset<I>(plan, i)];
}

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // a block is kTile x kTileRows threads, each moving kTile / kTileRows elements

template <typename T>
__global__ void tiled_transpose_kernel(T* __restrict__ dst, const T* __restrict__ src, TiledTranspose t,
                                       int64_t row_tiles, int64_t col_tiles, int64_t tiles) {
  // +1 column: the column-wise reads in the second phase fall in distinct banks.
  __shared__ T tile[kTile][kTile + 1];
  for (int64_t u = blockIdx.x; u < tiles; u += gridDim.x) {
    const int64_t ct = u % col_tiles;
    const int64_t rest = u / col_tiles;
    const int64_t rt = rest % row_tiles;
    int64_t src_base = 0;
    int64_t dst_base = 0;
    tiled_batch_offsets(t, rest / row_tiles, src_base, dst_base);
    const int64_t i0 = rt * kTile;
    const int64_t j0 = ct * kTile;
    // Read: consecutive threads walk rows i, contiguous in the source.
    for (int y = threadIdx.y; y < kTile; y += kTileRows) {
      const int64_t i = i0 + threadIdx.x;
      const int64_t j = j0 + y;
      if (i < t.rows && j < t.cols) tile[y][threadIdx.x] = src[src_base + i + j * t.src_col];
    }
    __syncthreads();
    // Write: consecutive threads walk columns j, contiguous in the destination.
    for (int y = threadIdx.y; y < kTile; y += kTileRows) {
      const int64_t i = i0 + y;
      const int64_t j = j0 + threadIdx.x;
      if (i < t.rows && j < t.cols) dst[dst_base + i * t.dst_row + j] = tile[threadIdx.x][y];
    }
    __syncthreads();
  }
}

// One block row (blockIdx.y) per piece.
template <typename T, bool kSplit>
__global__ void concat_split_kernel(T* whole, PieceGroup g, int64_t outer, int64_t row) {
  const int j = blockIdx.y;
  T* piece = static_cast<T*>(g.data[j]);
  const int64_t n = outer * g.width[j];
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    const int64_t w = piece_to_whole(g, j, i, row);
    if constexpr (kSplit) {
      piece[i] = whole[w];
    } else {
      whole[w] = piece[i];
    }
  }
}

template <typename T, typename Index>
__global__ void gather_kernel(T* __restrict__ dst, const T* __restrict__ src, const Index* __restrict__ indices,
                              int64_t n, int64_t m, int64_t inner, int64_t dim) {
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    const GatherPosition p = gather_position(i, m, inner);
    const int64_t s = gather_source(p, static_cast<int64_t>(indices[p.index]), dim, inner);
    dst[i] = s < 0 ? T{} : src[s];
  }
}

template <typename T>
__global__ void fill_kernel(T* __restrict__ dst, T value, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += grid_stride()) dst[i] = value;
}

// Matrices of n x m; k already clamped (clamp_trilu_k).
template <typename T>
__global__ void trilu_kernel(T* __restrict__ dst, const T* __restrict__ src, int64_t total, int64_t n, int64_t m,
                             int64_t k, bool upper) {
  for (int64_t i = thread_index(); i < total; i += grid_stride()) {
    const int64_t r = i / m;
    const int64_t j = i - r * m;
    dst[i] = trilu_keep(r % n, j, k, upper) ? src[i] : T{};
  }
}

// ---- launches -------------------------------------------------------------------------------

// Copies the plan's view of `src` (`src_elems` elements of `esize` bytes
// reachable from it) into contiguous `dst`.
Status launch_strided(const StridedPlan& plan, const void* src, int64_t src_elems, void* dst, size_t esize,
                      cudaStream_t stream) {
  const size_t word = widest_word(plan, esize, reinterpret_cast<uintptr_t>(src), reinterpret_cast<uintptr_t>(dst));
  const StridedPlan wide = widen(plan, static_cast<int64_t>(word / esize));
  const int64_t n = wide.count();
  if (n == 0) return ok_status();
  // 32-bit index math when every index and offset fits with room for the
  // grid-stride increment.
  constexpr int64_t kSmall = int64_t{1} << 30;
  const bool small = n < kSmall && src_elems < kSmall;
  return dispatch_word(word, [&]<typename W>() {
    if (small) {
      strided_copy_kernel<W, int32_t><<<grid_size(n), kThreadsPerBlock, 0, stream>>>(
          static_cast<W*>(dst), static_cast<const W*>(src), wide, static_cast<int32_t>(n));
    } else {
      strided_copy_kernel<W, int64_t>
          <<<grid_size(n), kThreadsPerBlock, 0, stream>>>(static_cast<W*>(dst), static_cast<const W*>(src), wide, n);
    }
    return check_launch("strided_copy_kernel");
  });
}

// Output 0, of `rank` dims, filled with the plan's view of all of `in`
// (Expand and Tile).
Status write_strided_output(KernelRunContext& ctx, const TensorRef& in, int rank, const int64_t* dims,
                            const StridedPlan& plan) {
  TensorRef out;
  SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, in.t.dtype, rank, dims, out));
  if (plan.empty) return ok_status();
  return launch_strided(plan, in.data(), in.num_elements(), out.data(), dtype_size(in.t.dtype), ctx.stream());
}

Status launch_tiled_transpose(const TiledTranspose& t, const void* src, void* dst, size_t esize, cudaStream_t stream) {
  const int64_t row_tiles = (t.rows + kTile - 1) / kTile;
  const int64_t col_tiles = (t.cols + kTile - 1) / kTile;
  const int64_t tiles = t.batches * row_tiles * col_tiles;
  // Blocks loop over tiles beyond this.
  const auto blocks = static_cast<unsigned>(tiles < (int64_t{1} << 20) ? tiles : (int64_t{1} << 20));
  return dispatch_element(esize, [&]<typename W>() {
    tiled_transpose_kernel<W><<<blocks, dim3(kTile, kTileRows), 0, stream>>>(
        static_cast<W*>(dst), static_cast<const W*>(src), t, row_tiles, col_tiles, tiles);
    return check_launch("tiled_transpose_kernel");
  });
}

// Copies one group of pieces to (Concat) or from (Split) the whole tensor.
Status launch_pieces(bool split, const PieceGroup& group, void* whole, int64_t outer, int64_t row, size_t esize,
                     cudaStream_t stream) {
  if (group.count == 0) return ok_status();
  const size_t word = pieces_word(group, esize, reinterpret_cast<uintptr_t>(whole), row);
  const auto factor = static_cast<int64_t>(word / esize);
  const PieceGroup wide = widen(group, factor);
  int64_t widest = 0;
  for (int j = 0; j < wide.count; ++j) widest = wide.width[j] > widest ? wide.width[j] : widest;
  const dim3 grid(grid_size(outer * widest), static_cast<unsigned>(wide.count));
  return dispatch_word(word, [&]<typename W>() {
    if (split) {
      concat_split_kernel<W, true>
          <<<grid, kThreadsPerBlock, 0, stream>>>(static_cast<W*>(whole), wide, outer, row / factor);
    } else {
      concat_split_kernel<W, false>
          <<<grid, kThreadsPerBlock, 0, stream>>>(static_cast<W*>(whole), wide, outer, row / factor);
    }
    return check_launch("concat_split_kernel");
  });
}

// Allocates output 0 with `dims` and copies input `in`'s bytes into it.
Status copy_to_output(KernelRunContext& ctx, const TensorRef& in, int rank, const int64_t* dims) {
  TensorRef out;
  SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, in.t.dtype, rank, dims, out));
  const size_t bytes = static_cast<size_t>(in.num_elements()) * dtype_size(in.t.dtype);
  if (bytes == 0 || out.data() == in.data()) return ok_status();
  return cuda_status(cudaMemcpyAsync(out.data(), in.data(), bytes, cudaMemcpyDeviceToDevice, ctx.stream()),
                     "cudaMemcpyAsync (device to device)");
}

// ---- Reshape -------------------------------------------------------------------------------

class ReshapeKernel final : public DataMovementKernel {
 public:
  ReshapeKernel(const KernelCreateInfo& info, Status& status) : DataMovementKernel(info) {
    allowzero_ = info.since_version() >= 14 && info.attr_int("allowzero", 0) != 0;
    status = init_data_and_index(info, "shape", false);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* in = nullptr;
    const TensorRef* shape = nullptr;
    SY_SDK_RETURN_IF_ERROR(required(ctx, 0, in));
    SY_SDK_RETURN_IF_ERROR(required(ctx, 1, shape));
    SY_SDK_RETURN_IF_ERROR(host_ints(*shape, 1, "shape", false));
    const int64_t n = shape->num_elements();
    const int64_t* req = shape->data<const int64_t>();
    int64_t dims[kMaxRank] = {};
    const std::string error =
        n > kMaxRank ? "the requested rank " + std::to_string(n) + " is above " + std::to_string(kMaxRank)
                     : reshape_shape(in->dims(), in->rank(), req, static_cast<int>(n), allowzero_, dims);
    if (!error.empty()) return fail("cannot reshape " + in->describe() + " to " + ints_string(req, n) + ": " + error);
    return copy_to_output(ctx, *in, static_cast<int>(n), dims);
  }

 private:
  bool allowzero_ = false;
};

// ---- Flatten -------------------------------------------------------------------------------

class FlattenKernel final : public DataMovementKernel {
 public:
  FlattenKernel(const KernelCreateInfo& info, Status& status)
      : DataMovementKernel(info), axis_(info.attr_int("axis", 1)) {
    status = init(info);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* in = nullptr;
    SY_SDK_RETURN_IF_ERROR(required(ctx, 0, in));
    int64_t dims[2];
    const std::string error = flatten_shape(in->dims(), in->rank(), axis_, dims);
    if (!error.empty()) return fail("input " + in->describe() + ": " + error);
    return copy_to_output(ctx, *in, 2, dims);
  }

 private:
  Status init(const KernelCreateInfo& info) const {
    SY_SDK_RETURN_IF_ERROR(check_data_input(info, 0));
    return check_axis_sign(info, axis_);
  }

  int64_t axis_;
};

// ---- Squeeze / Unsqueeze -------------------------------------------------------------------

// The axes: an attribute before opset 13, host input 1 from it.
class AxesSource {
 public:
  explicit AxesSource(const KernelCreateInfo& info) : from_input_(info.since_version() >= 13) {
    if (!from_input_) {
      has_attr_ = info.has_attr_ints("axes");
      attr_ = info.attr_ints("axes");
    }
  }
  bool from_input() const { return from_input_; }
  bool has_attr() const { return has_attr_; }
  const std::vector<int64_t>& attr() const { return attr_; }

 private:
  bool from_input_;
  bool has_attr_ = false;
  std::vector<int64_t> attr_;
};

class SqueezeKernel final : public DataMovementKernel {
 public:
  SqueezeKernel(const KernelCreateInfo& info, Status& status) : DataMovementKernel(info), axes_(info) {
    status = init(info);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* in = nullptr;
    SY_SDK_RETURN_IF_ERROR(required(ctx, 0, in));
    // No axes: squeeze every dim of size 1 (squeeze_shape's nullptr).
    bool given = false;
    const int64_t* axes = nullptr;
    int64_t n = 0;
    if (axes_.from_input()) {
      if (const TensorRef* t = ctx.input(1)) {
        SY_SDK_RETURN_IF_ERROR(host_ints(*t, 1, "axes", false));
        given = true;
        axes = t->data<const int64_t>();
        n = t->num_elements();
      }
    } else if (axes_.has_attr()) {
      given = true;
      axes = axes_.attr().data();
      n = static_cast<int64_t>(axes_.attr().size());
    }
    // A given but empty list squeezes nothing, as on the CPU; its data
    // pointer may be null.
    static const int64_t kNoAxes[1] = {0};
    if (given && axes == nullptr) axes = kNoAxes;
    int64_t dims[kMaxRank];
    int rank = 0;
    const std::string error = squeeze_shape(in->dims(), in->rank(), axes, n, dims, rank);
    if (!error.empty()) return fail("input " + in->describe() + ": " + error);
    return copy_to_output(ctx, *in, rank, dims);
  }

 private:
  Status init(const KernelCreateInfo& info) const {
    SY_SDK_RETURN_IF_ERROR(check_data_input(info, 0));
    return axes_.from_input() ? check_index_type(info, 1, "axes", false) : ok_status();
  }

  AxesSource axes_;
};

class UnsqueezeKernel final : public DataMovementKernel {
 public:
  UnsqueezeKernel(const KernelCreateInfo& info, Status& status) : DataMovementKernel(info), axes_(info) {
    status = init(info);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* in = nullptr;
    SY_SDK_RETURN_IF_ERROR(required(ctx, 0, in));
    const int64_t* axes = axes_.attr().data();
    int64_t n = static_cast<int64_t>(axes_.attr().size());
    if (axes_.from_input()) {
      const TensorRef* t = nullptr;
      SY_SDK_RETURN_IF_ERROR(required(ctx, 1, t));
      SY_SDK_RETURN_IF_ERROR(host_ints(*t, 1, "axes", false));
      axes = t->data<const int64_t>();
      n = t->num_elements();
    }
    int64_t dims[kMaxRank];
    int rank = 0;
    const std::string error = unsqueeze_shape(in->dims(), in->rank(), axes, n, dims, rank);
    if (!error.empty()) return fail("input " + in->describe() + ": " + error);
    return copy_to_output(ctx, *in, rank, dims);
  }

 private:
  Status init(const KernelCreateInfo& info) const {
    SY_SDK_RETURN_IF_ERROR(check_data_input(info, 0));
    if (!axes_.from_input() && !axes_.has_attr()) return info.error("attribute 'axes' is required");
    if (axes_.from_input() && !info.has_input(1)) return info.error("input 1 (axes) is required");
    return axes_.from_input() ? check_index_type(info, 1, "axes", false) : ok_status();
  }

  AxesSource axes_;
};

// ---- Identity ------------------------------------------------------------------------------

class IdentityKernel final : public DataMovementKernel {
 public:
  // Sequences and optionals (opset 14+) are not tensors: check_data_input declines them.
  IdentityKernel(const KernelCreateInfo& info, Status& status) : DataMovementKernel(info) {
    status = check_data_input(info, 0);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* in = nullptr;
    SY_SDK_RETURN_IF_ERROR(required(ctx, 0, in));
    return copy_to_output(ctx, *in, in->rank(), in->dims());
  }
};

// ---- Transpose -----------------------------------------------------------------------------

class TransposeKernel final : public DataMovementKernel {
 public:
  TransposeKernel(const KernelCreateInfo& info, Status& status) : DataMovementKernel(info) {
    has_perm_ = info.has_attr_ints("perm");
    perm_ = info.attr_ints("perm");
    status = init(info);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* in = nullptr;
    SY_SDK_RETURN_IF_ERROR(required(ctx, 0, in));
    const int r = in->rank();
    if (has_perm_ && static_cast<int>(perm_.size()) != r)
      return fail("perm " + ints_string(perm_.data(), static_cast<int64_t>(perm_.size())) + " has " +
                  std::to_string(perm_.size()) + " entries but the input is " + in->describe());
    int64_t perm[kMaxRank];
    for (int i = 0; i < r; ++i) perm[i] = has_perm_ ? perm_[static_cast<size_t>(i)] : r - 1 - i;
    int64_t dims[kMaxRank];
    const StridedPlan plan = transpose_plan(in->dims(), r, perm, dims);
    TensorRef out;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, in->t.dtype, r, dims, out));
    if (plan.empty) return ok_status();
    const size_t esize = dtype_size(in->t.dtype);
    TiledTranspose tiled;
    if (make_tiled_transpose(plan, tiled)) return launch_tiled_transpose(tiled, in->data(), out.data(), esize, ctx.stream());
    return launch_strided(plan, in->data(), in->num_elements(), out.data(), esize, ctx.stream());
  }

 private:
  Status init(const KernelCreateInfo& info) const {
    SY_SDK_RETURN_IF_ERROR(check_data_input(info, 0));
    const auto r = static_cast<int64_t>(perm_.size());
    unsigned used = 0;
    for (int64_t v : perm_) {
      if (r > kMaxRank || v < 0 || v >= r || (used & (1u << v)))
        return info.error("perm " + ints_string(perm_.data(), r) + " is not a permutation of 0.." + std::to_string(r) +
                          "-1" + (r > kMaxRank ? " of at most rank 8" : ""));
      used |= 1u << v;
    }
    TensorRef t;
    if (has_perm_ && info.input_type(0, t) && t.rank() >= 0 && t.rank() != r)
      return info.error("perm " + ints_string(perm_.data(), r) + " has " + std::to_string(r) +
                        " entries but input 0 has rank " + std::to_string(t.rank()));
    return ok_status();
  }

  bool has_perm_ = false;
  std::vector<int64_t> perm_;
};

// ---- Concat --------------------------------------------------------------------------------

class ConcatKernel final : public DataMovementKernel {
 public:
  ConcatKernel(const KernelCreateInfo& info, Status& status)
      : DataMovementKernel(info), axis_(info.attr_int("axis", kNoAxis)) {
    status = init(info);
  }

  Status run(KernelRunContext& ctx) const override {
    const int n = ctx.num_inputs();
    const TensorRef* first = nullptr;
    SY_SDK_RETURN_IF_ERROR(required(ctx, 0, first));
    const int r = first->rank();
    int64_t axis = axis_;
    if (!provider_sdk::normalize_axis(axis, r))
      return fail("axis " + std::to_string(axis_) + " is out of range for input " + first->describe());
    const int a = static_cast<int>(axis);
    int64_t total = 0;
    for (int j = 0; j < n; ++j) {
      const TensorRef* t = nullptr;
      SY_SDK_RETURN_IF_ERROR(required(ctx, j, t));
      bool same = t->t.dtype == first->t.dtype && t->rank() == r;
      for (int k = 0; same && k < r; ++k) same = k == a || t->dim(k) == first->dim(k);
      if (!same)
        return fail("input " + std::to_string(j) + " is " + t->describe() + ", expected the type and dims of input 0 " +
                    first->describe() + " except on axis " + std::to_string(axis));
      total += t->dim(a);
    }
    int64_t dims[kMaxRank];
    for (int k = 0; k < r; ++k) dims[k] = k == a ? total : first->dim(k);
    TensorRef out;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, first->t.dtype, r, dims, out));
    const int64_t outer = product(dims, 0, a);
    const int64_t inner = product(dims, a + 1, r);
    if (outer * total * inner == 0) return ok_status();
    const size_t esize = dtype_size(first->t.dtype);
    const int64_t row = total * inner;
    PieceGroup group;
    int64_t offset = 0;
    for (int j = 0; j < n; ++j) {
      const TensorRef* t = ctx.input(j);
      const int64_t width = t->dim(a) * inner;
      if (width > 0) {
        group.data[group.count] = t->data();
        group.width[group.count] = width;
        group.offset[group.count] = offset;
        if (++group.count == kPiecesPerLaunch) {
          SY_SDK_RETURN_IF_ERROR(launch_pieces(false, group, out.data(), outer, row, esize, ctx.stream()));
          group.count = 0;
        }
      }
      offset += width;
    }
    return launch_pieces(false, group, out.data(), outer, row, esize, ctx.stream());
  }

 private:
  static constexpr int64_t kNoAxis = INT64_MIN;

  Status init(const KernelCreateInfo& info) const {
    if (axis_ == kNoAxis) return info.error("attribute 'axis' is required");
    SY_SDK_RETURN_IF_ERROR(check_axis_sign(info, axis_));
    // More than kMaxKernelInputs inputs: create_kernel declines the node first.
    for (int i = 0; i < info.num_inputs(); ++i) SY_SDK_RETURN_IF_ERROR(check_data_input(info, i));
    return ok_status();
  }

  int64_t axis_;
};

// ---- Split ---------------------------------------------------------------------------------

class SplitKernel final : public DataMovementKernel {
 public:
  SplitKernel(const KernelCreateInfo& info, Status& status)
      : DataMovementKernel(info), version_(info.since_version()), axis_(info.attr_int("axis", 0)) {
    if (version_ < 13) {
      has_split_attr_ = info.has_attr_ints("split");
      split_attr_ = info.attr_ints("split");
    }
    status = init(info);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* in = nullptr;
    SY_SDK_RETURN_IF_ERROR(required(ctx, 0, in));
    const int r = in->rank();
    int64_t axis = axis_;
    if (!provider_sdk::normalize_axis(axis, r))
      return fail("axis " + std::to_string(axis_) + " is out of range for input " + in->describe());
    const int a = static_cast<int>(axis);
    const int64_t dim = in->dim(a);
    const int n = ctx.num_outputs();
    if (n == 0) return ok_status();

    // Explicit sizes: host input 1 (opset 13+) or the attribute.
    bool explicit_split = false;
    const int64_t* split = nullptr;
    int64_t count = 0;
    if (version_ >= 13) {
      if (const TensorRef* t = ctx.input(1)) {
        SY_SDK_RETURN_IF_ERROR(host_ints(*t, 1, "split", false));
        explicit_split = true;
        split = t->data<const int64_t>();
        count = t->num_elements();
      }
    } else if (has_split_attr_) {
      explicit_split = true;
      split = split_attr_.data();
      count = static_cast<int64_t>(split_attr_.size());
    }
    const bool ceil_pieces = version_ >= 18;
    if (explicit_split) {
      if (count != n)
        return fail("split has " + std::to_string(count) + " entries but the node has " + std::to_string(n) +
                    " outputs");
      int64_t sum = 0;
      for (int j = 0; j < n; ++j) {
        if (split[j] < 0) return fail("split entry " + std::to_string(j) + " is negative (" + std::to_string(split[j]) + ")");
        sum += split[j];
      }
      if (sum != dim)
        return fail("split sizes " + ints_string(split, count) + " sum to " + std::to_string(sum) + " but axis " +
                    std::to_string(axis) + " of input " + in->describe() + " has size " + std::to_string(dim));
    } else if (!ceil_pieces && dim % n != 0) {
      return fail("axis " + std::to_string(axis) + " of input " + in->describe() + " (size " + std::to_string(dim) +
                  ") cannot be split into " + std::to_string(n) + " equal parts");
    }

    const int64_t outer = product(in->dims(), 0, a);
    const int64_t inner = product(in->dims(), a + 1, r);
    const int64_t row = dim * inner;
    const size_t esize = dtype_size(in->t.dtype);
    int64_t dims[kMaxRank];
    for (int k = 0; k < r; ++k) dims[k] = in->dim(k);
    PieceGroup group;
    int64_t offset = 0;
    for (int j = 0; j < n; ++j) {
      const int64_t size = explicit_split ? split[j] : split_piece(dim, n, j, ceil_pieces);
      dims[a] = size;
      TensorRef out;
      SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(j, in->t.dtype, r, dims, out));
      const int64_t width = size * inner;
      if (width > 0 && outer > 0 && ctx.output_requested(j)) {
        group.data[group.count] = out.data();
        group.width[group.count] = width;
        group.offset[group.count] = offset;
        if (++group.count == kPiecesPerLaunch) {
          SY_SDK_RETURN_IF_ERROR(launch_pieces(true, group, in->data(), outer, row, esize, ctx.stream()));
          group.count = 0;
        }
      }
      offset += width;
    }
    return launch_pieces(true, group, in->data(), outer, row, esize, ctx.stream());
  }

 private:
  Status init(const KernelCreateInfo& info) const {
    SY_SDK_RETURN_IF_ERROR(check_data_input(info, 0));
    SY_SDK_RETURN_IF_ERROR(check_axis_sign(info, axis_));
    if (version_ >= 13) SY_SDK_RETURN_IF_ERROR(check_index_type(info, 1, "split", false));
    constexpr int64_t kNone = INT64_MIN;
    const int64_t num_outputs = version_ >= 18 ? info.attr_int("num_outputs", kNone) : kNone;
    if (num_outputs != kNone && num_outputs != info.num_outputs())
      return info.error("num_outputs is " + std::to_string(num_outputs) + " but the node has " +
                        std::to_string(info.num_outputs()) + " outputs");
    if (num_outputs != kNone && info.has_input(1)) return info.error("'split' and 'num_outputs' cannot both be given");
    return ok_status();
  }

  int version_;
  int64_t axis_;
  bool has_split_attr_ = false;
  std::vector<int64_t> split_attr_;
};

// ---- Slice ---------------------------------------------------------------------------------

class SliceKernel final : public DataMovementKernel {
 public:
  SliceKernel(const KernelCreateInfo& info, Status& status)
      : DataMovementKernel(info), from_inputs_(info.since_version() >= 10) {
    if (!from_inputs_) {
      has_starts_ends_ = info.has_attr_ints("starts") && info.has_attr_ints("ends");
      starts_ = info.attr_ints("starts");
      ends_ = info.attr_ints("ends");
      has_axes_ = info.has_attr_ints("axes");
      axes_ = info.attr_ints("axes");
    }
    status = init(info);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* in = nullptr;
    SY_SDK_RETURN_IF_ERROR(required(ctx, 0, in));
    const int r = in->rank();
    const TensorRef* starts = nullptr;
    const TensorRef* ends = nullptr;
    const TensorRef* axes = nullptr;
    const TensorRef* steps = nullptr;
    int64_t n = static_cast<int64_t>(starts_.size());
    if (from_inputs_) {
      SY_SDK_RETURN_IF_ERROR(required(ctx, 1, starts));
      SY_SDK_RETURN_IF_ERROR(required(ctx, 2, ends));
      axes = ctx.input(3);
      steps = ctx.input(4);
      SY_SDK_RETURN_IF_ERROR(host_ints(*starts, 1, "starts", true));
      SY_SDK_RETURN_IF_ERROR(host_ints(*ends, 2, "ends", true));
      if (axes) SY_SDK_RETURN_IF_ERROR(host_ints(*axes, 3, "axes", true));
      if (steps) SY_SDK_RETURN_IF_ERROR(host_ints(*steps, 4, "steps", true));
      n = starts->num_elements();
      if (ends->num_elements() != n || (axes && axes->num_elements() != n) || (steps && steps->num_elements() != n))
        return fail("starts " + starts->describe() + ", ends " + ends->describe() +
                    (axes ? ", axes " + axes->describe() : "") + (steps ? ", steps " + steps->describe() : "") +
                    " must have the same length");
    }
    const bool has_axes = from_inputs_ ? axes != nullptr : has_axes_;
    if (n > r) return fail(std::to_string(n) + " axes to slice, but input " + in->describe() + " has rank " + std::to_string(r));

    SliceAxis sliced[kMaxRank];
    for (int k = 0; k < r; ++k) sliced[k] = SliceAxis{0, 1, in->dim(k)};
    unsigned seen = 0;
    for (int64_t i = 0; i < n; ++i) {
      const auto ui = static_cast<size_t>(i);
      const int64_t given = has_axes ? (from_inputs_ ? host_int(*axes, i) : axes_[ui]) : i;
      int64_t axis = given;
      if (!provider_sdk::normalize_axis(axis, r))
        return fail("axis " + std::to_string(given) + " is out of range for input " + in->describe());
      if (seen & (1u << axis)) return fail("axis " + std::to_string(given) + " is repeated");
      seen |= 1u << axis;
      const int64_t start = from_inputs_ ? host_int(*starts, i) : starts_[ui];
      const int64_t end = from_inputs_ ? host_int(*ends, i) : ends_[ui];
      const int64_t step = steps ? host_int(*steps, i) : 1;
      if (step == 0) return fail("step " + std::to_string(i) + " is 0");
      sliced[axis] = slice_axis(start, end, step, in->dim(static_cast<int>(axis)));
    }

    int64_t dims[kMaxRank];
    for (int k = 0; k < r; ++k) dims[k] = sliced[k].count;
    TensorRef out;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, in->t.dtype, r, dims, out));
    int64_t offset = 0;
    const StridedPlan plan = slice_plan(in->dims(), r, sliced, offset);
    if (plan.empty) return ok_status();
    const size_t esize = dtype_size(in->t.dtype);
    const void* src = static_cast<const char*>(in->data()) + offset * static_cast<int64_t>(esize);
    return launch_strided(plan, src, in->num_elements(), out.data(), esize, ctx.stream());
  }

 private:
  Status init(const KernelCreateInfo& info) const {
    SY_SDK_RETURN_IF_ERROR(check_data_input(info, 0));
    if (!from_inputs_) {
      if (!has_starts_ends_) return info.error("attributes 'starts' and 'ends' are required");
      if (starts_.size() != ends_.size() || (has_axes_ && axes_.size() != starts_.size()))
        return info.error("starts, ends and axes must have the same length (got " + std::to_string(starts_.size()) +
                          ", " + std::to_string(ends_.size()) + ", " + std::to_string(axes_.size()) + ")");
      return ok_status();
    }
    static const char* const kNames[] = {"data", "starts", "ends", "axes", "steps"};
    for (int i = 1; i < 5; ++i) SY_SDK_RETURN_IF_ERROR(check_index_type(info, i, kNames[i], true));
    return ok_status();
  }

  bool from_inputs_;
  bool has_starts_ends_ = false;
  bool has_axes_ = false;
  std::vector<int64_t> starts_, ends_, axes_;
};

// ---- Gather --------------------------------------------------------------------------------

class GatherKernel final : public DataMovementKernel {
 public:
  GatherKernel(const KernelCreateInfo& info, Status& status)
      : DataMovementKernel(info), axis_(info.attr_int("axis", 0)) {
    status = init_data_and_index(info, "indices", true);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* data = nullptr;
    const TensorRef* indices = nullptr;
    SY_SDK_RETURN_IF_ERROR(required(ctx, 0, data));
    SY_SDK_RETURN_IF_ERROR(required(ctx, 1, indices));
    if (indices->dtype() != DataType::kInt32 && indices->dtype() != DataType::kInt64)
      return fail("indices must be int32 or int64, got " + indices->describe());
    const int r = data->rank();
    const int q = indices->rank();
    int64_t axis = axis_;
    if (!provider_sdk::normalize_axis(axis, r))
      return fail("axis " + std::to_string(axis_) + " is out of range for data " + data->describe());
    const int a = static_cast<int>(axis);
    if (r - 1 + q > kMaxRank)
      return fail("the output rank " + std::to_string(r - 1 + q) + " is above " + std::to_string(kMaxRank));
    int64_t dims[kMaxRank];
    int out_rank = 0;
    for (int k = 0; k < a; ++k) dims[out_rank++] = data->dim(k);
    for (int k = 0; k < q; ++k) dims[out_rank++] = indices->dim(k);
    for (int k = a + 1; k < r; ++k) dims[out_rank++] = data->dim(k);
    TensorRef out;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, data->t.dtype, out_rank, dims, out));
    const int64_t outer = product(data->dims(), 0, a);
    const int64_t dim = data->dim(a);
    const int64_t inner = product(data->dims(), a + 1, r);
    const int64_t m = indices->num_elements();
    if (outer * m * inner == 0) return ok_status();

    const size_t esize = dtype_size(data->t.dtype);
    const size_t word = aligned_word(esize, inner, reinterpret_cast<uintptr_t>(data->data()),
                                     reinterpret_cast<uintptr_t>(out.data()));
    const int64_t wide_inner = inner / static_cast<int64_t>(word / esize);
    const int64_t n = outer * m * wide_inner;
    const bool index32 = indices->dtype() == DataType::kInt32;
    return dispatch_word(word, [&]<typename W>() {
      if (index32) {
        gather_kernel<W, int32_t><<<grid_size(n), kThreadsPerBlock, 0, ctx.stream()>>>(
            static_cast<W*>(out.data()), static_cast<const W*>(data->data()),
            indices->data<const int32_t>(), n, m, wide_inner, dim);
      } else {
        gather_kernel<W, int64_t><<<grid_size(n), kThreadsPerBlock, 0, ctx.stream()>>>(
            static_cast<W*>(out.data()), static_cast<const W*>(data->data()),
            indices->data<const int64_t>(), n, m, wide_inner, dim);
      }
      return check_launch("gather_kernel");
    });
  }

 private:
  int64_t axis_;
};

// ---- Expand / Tile -------------------------------------------------------------------------

class ExpandKernel final : public DataMovementKernel {
 public:
  ExpandKernel(const KernelCreateInfo& info, Status& status) : DataMovementKernel(info) {
    status = init_data_and_index(info, "shape", false);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* in = nullptr;
    const TensorRef* shape = nullptr;
    SY_SDK_RETURN_IF_ERROR(required(ctx, 0, in));
    SY_SDK_RETURN_IF_ERROR(required(ctx, 1, shape));
    SY_SDK_RETURN_IF_ERROR(host_ints(*shape, 1, "shape", false));
    const int64_t n = shape->num_elements();
    const int64_t* req = shape->data<const int64_t>();
    int64_t dims[kMaxRank];
    int rank = 0;
    StridedPlan plan;
    const std::string error =
        n > kMaxRank ? "the output rank " + std::to_string(n) + " is above " + std::to_string(kMaxRank)
                     : expand_plan(in->dims(), in->rank(), req, static_cast<int>(n), dims, rank, plan);
    if (!error.empty()) return fail("cannot expand " + in->describe() + " to " + ints_string(req, n) + ": " + error);
    return write_strided_output(ctx, *in, rank, dims, plan);
  }
};

class TileKernel final : public DataMovementKernel {
 public:
  TileKernel(const KernelCreateInfo& info, Status& status) : DataMovementKernel(info) {
    status = init_data_and_index(info, "repeats", false);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* in = nullptr;
    const TensorRef* repeats = nullptr;
    SY_SDK_RETURN_IF_ERROR(required(ctx, 0, in));
    SY_SDK_RETURN_IF_ERROR(required(ctx, 1, repeats));
    SY_SDK_RETURN_IF_ERROR(host_ints(*repeats, 1, "repeats", false));
    const int64_t* rep = repeats->data<const int64_t>();
    if (repeats->num_elements() != in->rank())
      return fail("repeats " + ints_string(rep, repeats->num_elements()) + " must have one entry per dim of input " +
                  in->describe());
    int64_t dims[kMaxRank];
    StridedPlan plan;
    const std::string error = tile_plan(in->dims(), in->rank(), rep, dims, plan);
    if (!error.empty()) return fail(error);
    return write_strided_output(ctx, *in, in->rank(), dims, plan);
  }
};

// ---- ConstantOfShape -----------------------------------------------------------------------

class ConstantOfShapeKernel final : public DataMovementKernel {
 public:
  ConstantOfShapeKernel(const KernelCreateInfo& info, Status& status) : DataMovementKernel(info) {
    status = init(info);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* shape = nullptr;
    SY_SDK_RETURN_IF_ERROR(required(ctx, 0, shape));
    SY_SDK_RETURN_IF_ERROR(host_ints(*shape, 0, "input", false));
    const int64_t r = shape->num_elements();
    const int64_t* req = shape->data<const int64_t>();
    if (r > kMaxRank) return fail("the output rank " + std::to_string(r) + " is above " + std::to_string(kMaxRank));
    for (int64_t k = 0; k < r; ++k)
      if (req[k] < 0) return fail("shape " + ints_string(req, r) + " has a negative dimension");
    TensorRef out;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, dtype_, static_cast<int>(r), req, out));
    const int64_t n = product(req, 0, static_cast<int>(r));
    if (n == 0) return ok_status();
    const size_t esize = dtype_size(dtype_);
    if (bits_ == 0)
      return cuda_status(cudaMemsetAsync(out.data(), 0, static_cast<size_t>(n) * esize, ctx.stream()),
                         "cudaMemsetAsync");
    return dispatch_element(esize, [&]<typename W>() {
      W value;
      std::memcpy(&value, &bits_, sizeof(W));
      fill_kernel<W><<<grid_size(n), kThreadsPerBlock, 0, ctx.stream()>>>(static_cast<W*>(out.data()), value, n);
      return check_launch("fill_kernel");
    });
  }

 private:
  Status init(const KernelCreateInfo& info) {
    SY_SDK_RETURN_IF_ERROR(check_index_type(info, 0, "input", false));
    TensorRef value;
    if (!info.attr_tensor("value", value)) return ok_status();  // float 0
    if (value.num_elements() != 1)
      return info.error("attribute 'value' must be a one-element tensor, got " + value.describe());
    if (value.dtype() == DataType::kString) return info.error("attribute 'value' must be numeric or bool, got string");
    const size_t esize = dtype_size(value.t.dtype);
    if (!movable(value.t.dtype))
      return info.unsupported(std::string("value of type ") + dtype_name(value.t.dtype) +
                              " is not handled by the CUDA data movement kernels");
    dtype_ = value.t.dtype;
    // The value's bytes, low address first: a fill of esize-byte words.
    std::memcpy(&bits_, value.data(), esize);
    return ok_status();
  }

  int32_t dtype_ = static_cast<int32_t>(DataType::kFloat);
  uint64_t bits_ = 0;  // float 0.0f by default
};

// ---- Trilu ---------------------------------------------------------------------------------

class TriluKernel final : public DataMovementKernel {
 public:
  TriluKernel(const KernelCreateInfo& info, Status& status)
      : DataMovementKernel(info), upper_(info.attr_int("upper", 1) != 0) {
    status = init_data_and_index(info, "k", false);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* in = nullptr;
    SY_SDK_RETURN_IF_ERROR(required(ctx, 0, in));
    const int r = in->rank();
    if (r < 2) return fail("input must have rank >= 2, got " + in->describe());
    int64_t k = 0;
    if (const TensorRef* kt = ctx.input(1)) {
      if (kt->dtype() != DataType::kInt64 || kt->num_elements() != 1)
        return fail("input 1 (k) must be an int64 scalar, got " + kt->describe());
      k = kt->data<const int64_t>()[0];
    }
    TensorRef out;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, in->t.dtype, r, in->dims(), out));
    const int64_t total = in->num_elements();
    if (total == 0) return ok_status();
    const int64_t n = in->dim(r - 2);
    const int64_t m = in->dim(r - 1);
    const int64_t kc = clamp_trilu_k(k, n, m);
    const bool upper = upper_;
    return dispatch_element(dtype_size(in->t.dtype), [&]<typename W>() {
      trilu_kernel<W><<<grid_size(total), kThreadsPerBlock, 0, ctx.stream()>>>(
          static_cast<W*>(out.data()), static_cast<const W*>(in->data()), total, n, m, kc, upper);
      return check_launch("trilu_kernel");
    });
  }

 private:
  bool upper_;
};

// ---- the table -----------------------------------------------------------------------------

// Rows start at the version a model of opset 7 resolves to; attributes that
// became host inputs get their own rows.
const CudaKernelDef kDataMovementDefs[] = {
    {"", "Reshape", 5, kLatest, 0, kMoveTypes, kHostInput1, &make_kernel<ReshapeKernel>},
    {"", "Flatten", 1, kLatest, 0, kMoveTypes, 0, &make_kernel<FlattenKernel>},
    {"", "Squeeze", 1, 12, 0, kMoveTypes, 0, &make_kernel<SqueezeKernel>},
    {"", "Squeeze", 13, kLatest, 0, kMoveTypes, kHostInput1, &make_kernel<SqueezeKernel>},
    {"", "Unsqueeze", 1, 12, 0, kMoveTypes, 0, &make_kernel<UnsqueezeKernel>},
    {"", "Unsqueeze", 13, kLatest, 0, kMoveTypes, kHostInput1, &make_kernel<UnsqueezeKernel>},
    {"", "Identity", 1, kLatest, 0, kMoveTypes, 0, &make_kernel<IdentityKernel>},
    {"", "Transpose", 1, kLatest, 0, kMoveTypes, 0, &make_kernel<TransposeKernel>},
    {"", "Concat", 4, kLatest, 0, kMoveTypes, 0, &make_kernel<ConcatKernel>},
    {"", "Split", 2, 12, 0, kMoveTypes, 0, &make_kernel<SplitKernel>},
    {"", "Split", 13, kLatest, 0, kMoveTypes, kHostInput1, &make_kernel<SplitKernel>},
    {"", "Slice", 1, 9, 0, kMoveTypes, 0, &make_kernel<SliceKernel>},
    // starts, ends, axes, steps
    {"", "Slice", 10, kLatest, 0, kMoveTypes, 0x1e, &make_kernel<SliceKernel>},
    {"", "Gather", 1, kLatest, 0, kMoveTypes, 0, &make_kernel<GatherKernel>},
    {"", "Expand", 8, kLatest, 0, kMoveTypes, kHostInput1, &make_kernel<ExpandKernel>},
    // Input 0 is the shape; the output type comes from the 'value' attribute.
    {"", "ConstantOfShape", 9, kLatest, 0, type_bit(DataType::kInt64), 1, &make_kernel<ConstantOfShapeKernel>},
    {"", "Trilu", 14, kLatest, 0, kMoveTypes, kHostInput1, &make_kernel<TriluKernel>},
    {"", "Tile", 6, kLatest, 0, kMoveTypes, kHostInput1, &make_kernel<TileKernel>},
};

}  // namespace

std::span<const CudaKernelDef> data_movement_kernel_defs() { return kDataMovementDefs; }

}  // namespace sy::cuda
