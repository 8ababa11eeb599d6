// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, ArgMax and
// ArgMin on the GPU, accumulating in float.
//
// Any axes set becomes a normpool::ReducePlan: output o reads the input at
// kept_offset(o) + reduced_offset(r) for r in [0, reduce_count). Two
// kernels cover the layouts:
//   a block per output   threads stride over r; used when the innermost
//                        dim is reduced (rows: the reads are contiguous),
//                        or when there are too few outputs for a thread
//                        each. Very long reductions with few outputs split
//                        r over several blocks and combine the partial
//                        accumulators in a second launch;
//   a thread per output  used for short reductions and when the innermost
//                        dim is kept ([K1, R, K2]: neighbouring threads
//                        read neighbouring addresses).
// ReduceLogSumExp takes the max of each output's elements first and sums
// exp(x - max), as the CPU provider does.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "switchyard/provider_sdk/axis.h"
#include "cuda_kernel.h"
#include "cuda_types.cuh"
#include "normpool_index.cuh"

namespace sy::cuda {
namespace {

using normpool::ArgCandidate;
using normpool::group_allreduce;
using normpool::nan_max;
using normpool::nan_min;
using normpool::ReducePlan;
using normpool::RowGroup;

// ---- ops ------------------------------------------------------------------------------
// init: the identity; step(acc, v, shift): fold in one element; combine:
// merge partial accumulators; finish(acc, count, shift): the result. shift
// is the output's max (LogSumExp only). NaN propagates through max and min,
// as in numpy and the CPU provider (normpool::nan_max, nan_min).

struct SumOp {
  static constexpr bool kNeedsMax = false;
  __device__ static float init() { return 0.0f; }
  __device__ static float step(float acc, float v, float) { return acc + v; }
  __device__ static float combine(float a, float b) { return a + b; }
  __device__ static float finish(float acc, int64_t, float) { return acc; }
};
struct MeanOp : SumOp {
  // An empty mean is 0 / 0 = NaN, as in numpy.
  __device__ static float finish(float acc, int64_t n, float) { return acc / static_cast<float>(n); }
};
struct ProdOp {
  static constexpr bool kNeedsMax = false;
  __device__ static float init() { return 1.0f; }
  __device__ static float step(float acc, float v, float) { return acc * v; }
  __device__ static float combine(float a, float b) { return a * b; }
  __device__ static float finish(float acc, int64_t, float) { return acc; }
};
struct MaxOp {
  static constexpr bool kNeedsMax = false;
  __device__ static float init() { return -INFINITY; }
  __device__ static float step(float acc, float v, float) { return nan_max(acc, v); }
  __device__ static float combine(float a, float b) { return nan_max(a, b); }
  __device__ static float finish(float acc, int64_t, float) { return acc; }
};
struct MinOp {
  static constexpr bool kNeedsMax = false;
  __device__ static float init() { return INFINITY; }
  __device__ static float step(float acc, float v, float) { return nan_min(acc, v); }
  __device__ static float combine(float a, float b) { return nan_min(a, b); }
  __device__ static float finish(float acc, int64_t, float) { return acc; }
};
struct L1Op : SumOp {
  __device__ static float step(float acc, float v, float) { return acc + fabsf(v); }
};
struct SumSquareOp : SumOp {
  __device__ static float step(float acc, float v, float) { return acc + v * v; }
};
struct L2Op : SumSquareOp {
  __device__ static float finish(float acc, int64_t, float) { return sqrtf(acc); }
};
struct LogSumOp : SumOp {
  __device__ static float finish(float acc, int64_t, float) { return logf(acc); }
};
struct LogSumExpOp : SumOp {
  static constexpr bool kNeedsMax = true;
  __device__ static float step(float acc, float v, float shift) { return acc + expf(v - shift); }
  // All -inf (or empty): the max is the answer; exp(-inf - -inf) is NaN.
  __device__ static float finish(float acc, int64_t, float shift) { return isinf(shift) ? shift : shift + logf(acc); }
};

template <typename Op>
struct Combine {
  __device__ float operator()(float a, float b) const { return Op::combine(a, b); }
};

// ---- kernels ----------------------------------------------------------------------------

// A block per (output, split); split s covers r in [s * chunk, (s + 1) *
// chunk). With one split the block writes the result, else its partial
// accumulator (partial[o * splits + s]). LogSumExp is never split.
template <typename Op, typename T>
__global__ void reduce_block_kernel(const T* x, T* y, float* partial, ReducePlan p, int64_t splits, int64_t chunk) {
  __shared__ float smem[32];
  const int64_t work = p.out_count * splits;
  for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
    const int64_t o = w / splits;
    const int64_t begin = (w % splits) * chunk;
    const int64_t end = begin + chunk < p.reduce_count ? begin + chunk : p.reduce_count;
    const T* xo = x + normpool::kept_offset(p, o);
    float shift = 0.0f;
    if (Op::kNeedsMax) {
      float m = MaxOp::init();
      for (int64_t r = begin + threadIdx.x; r < end; r += blockDim.x)
        m = MaxOp::step(m, to_float(xo[normpool::reduced_offset(p, r)]), 0.0f);
      shift = group_allreduce<true>(m, Combine<MaxOp>{}, smem);
    }
    float acc = Op::init();
    for (int64_t r = begin + threadIdx.x; r < end; r += blockDim.x)
      acc = Op::step(acc, to_float(xo[normpool::reduced_offset(p, r)]), shift);
    acc = group_allreduce<true>(acc, Combine<Op>{}, smem);
    if (threadIdx.x == 0) {
      if (partial != nullptr) {
        partial[w] = acc;
      } else {
        y[o] = from_float<T>(Op::finish(acc, p.reduce_count, shift));
      }
    }
  }
}

// Combines each output's `splits` partial accumulators.
template <typename Op, typename T>
__global__ void reduce_partials_kernel(const float* partial, T* y, int64_t out_count, int64_t splits, int64_t n) {
  for (int64_t o = thread_index(); o < out_count; o += grid_stride()) {
    float acc = partial[o * splits];
    for (int64_t s = 1; s < splits; ++s) acc = Op::combine(acc, partial[o * splits + s]);
    y[o] = from_float<T>(Op::finish(acc, n, 0.0f));
  }
}

// A thread per output. Also the path for empty reductions (reduce_count 0:
// the op's identity, finished) and for reducing only size-1 dims.
template <typename Op, typename T>
__global__ void reduce_thread_kernel(const T* x, T* y, ReducePlan p) {
  for (int64_t o = thread_index(); o < p.out_count; o += grid_stride()) {
    const T* xo = x + normpool::kept_offset(p, o);
    float shift = 0.0f;
    if (Op::kNeedsMax) {
      shift = MaxOp::init();
      for (int64_t r = 0; r < p.reduce_count; ++r)
        shift = MaxOp::step(shift, to_float(xo[normpool::reduced_offset(p, r)]), 0.0f);
    }
    float acc = Op::init();
    for (int64_t r = 0; r < p.reduce_count; ++r)
      acc = Op::step(acc, to_float(xo[normpool::reduced_offset(p, r)]), shift);
    y[o] = from_float<T>(Op::finish(acc, p.reduce_count, shift));
  }
}

// Up to this many reduced elements an output gets one thread.
constexpr int64_t kThreadReduceMax = 16;
// With the innermost dim kept, a thread per output once there are this many.
constexpr int64_t kThreadOutputsMin = 8192;
// Split long reductions until about this many blocks run.
constexpr int64_t kTargetBlocks = 1024;
constexpr int64_t kMinSplitChunk = 16384;

template <typename Op, typename T>
Status launch_reduce(KernelRunContext& ctx, const T* x, T* y, const ReducePlan& p) {
  const int64_t outputs = p.out_count, n = p.reduce_count;
  if (outputs == 0) return ok_status();
  const bool per_thread = n <= kThreadReduceMax || (!p.inner_reduced && outputs >= kThreadOutputsMin);
  if (per_thread) {
    reduce_thread_kernel<Op, T><<<grid_size(outputs), kThreadsPerBlock, 0, ctx.stream()>>>(x, y, p);
    return check_launch("reduce_thread_kernel");
  }
  const int threads = n >= 256 ? 256 : static_cast<int>((n + 31) / 32 * 32);
  int64_t splits = 1;
  if (!Op::kNeedsMax && outputs < kTargetBlocks && n >= 2 * kMinSplitChunk) {
    const int64_t by_blocks = (kTargetBlocks + outputs - 1) / outputs;
    const int64_t by_size = n / kMinSplitChunk;
    splits = by_blocks < by_size ? by_blocks : by_size;
  }
  const int64_t chunk = (n + splits - 1) / splits;
  splits = (n + chunk - 1) / chunk;  // no empty splits
  float* partial = nullptr;
  if (splits > 1) {
    void* mem = nullptr;
    SY_SDK_RETURN_IF_ERROR(ctx.scratch(static_cast<size_t>(outputs * splits) * sizeof(float), &mem));
    partial = static_cast<float*>(mem);
  }
  reduce_block_kernel<Op, T>
      <<<grid_size(outputs * splits, 1), threads, 0, ctx.stream()>>>(x, y, partial, p, splits, chunk);
  SY_SDK_RETURN_IF_ERROR(check_launch("reduce_block_kernel"));
  if (splits == 1) return ok_status();
  reduce_partials_kernel<Op, T>
      <<<grid_size(outputs), kThreadsPerBlock, 0, ctx.stream()>>>(partial, y, outputs, splits, n);
  return check_launch("reduce_partials_kernel");
}

// ---- Reduce* ------------------------------------------------------------------------------

// kAxesFromInput: the axes are input 1 (ReduceSum from opset 13, the others
// from 18, as the table's rows say), else the attribute.
template <typename Op, bool kAxesFromInput>
class ReduceKernel final : public CudaKernel {
 public:
  ReduceKernel(const KernelCreateInfo& info, Status& /*status*/) {
    name_ = info.describe();
    keepdims_ = info.attr_int("keepdims", 1) != 0;
    noop_with_empty_axes_ = info.attr_int("noop_with_empty_axes", 0) != 0;
    if (!kAxesFromInput) axes_ = info.attr_ints("axes");
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* x = ctx.input(0);
    if (x == nullptr) return invalid_argument(name_ + ": input 0 is missing");
    const int rank = x->rank();
    // The axes: the attribute, or input 1 (host memory).
    const int64_t* axes = axes_.data();
    int64_t count = static_cast<int64_t>(axes_.size());
    if (kAxesFromInput) {
      count = 0;
      if (const TensorRef* t = ctx.input(1)) {
        if (t->dtype() != DataType::kInt64)
          return invalid_argument(name_ + ": axes must be int64, got " + t->describe());
        if (t->rank() > 1) return invalid_argument(name_ + ": axes must be 1-D, got " + t->describe());
        axes = t->data<const int64_t>();
        count = t->num_elements();
      }
    }
    bool reduced[SY_MAX_RANK] = {};
    for (int64_t i = 0; i < count; ++i) {
      int64_t a = axes[i];
      if (!provider_sdk::normalize_axis(a, rank))
        return invalid_argument(name_ + ": axis " + std::to_string(axes[i]) + " is out of range for input " +
                                x->describe());
      if (reduced[a]) return invalid_argument(name_ + ": axis " + std::to_string(axes[i]) + " is given twice");
      reduced[a] = true;
    }
    // No axes: all of them, or none with noop_with_empty_axes, where the
    // op still applies its element step (ReduceSumSquare squares,
    // ReduceL2 takes |x|, ReduceLogSum logs), as the spec says.
    const bool noop = count == 0 && noop_with_empty_axes_;
    if (count == 0 && !noop)
      for (int d = 0; d < rank; ++d) reduced[d] = true;
    int64_t out_dims[SY_MAX_RANK];
    int out_rank = 0;
    for (int d = 0; d < rank; ++d) {
      if (!reduced[d]) {
        out_dims[out_rank++] = x->dim(d);
      } else if (keepdims_) {
        out_dims[out_rank++] = 1;
      }
    }
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, x->t.dtype, out_rank, out_dims, y));
    const ReducePlan plan = normpool::make_reduce_plan(rank, x->dims(), reduced);
    Status status;
    const bool handled = dispatch_float_type(x->t.dtype, [&]<typename T>() {
      status = launch_reduce<Op, T>(ctx, x->data<const T>(), y.data<T>(), plan);
    });
    if (!handled) return invalid_argument(name_ + ": unsupported input type " + x->describe());
    return status;
  }

 private:
  std::string name_;
  bool keepdims_ = true;
  bool noop_with_empty_axes_ = false;
  std::vector<int64_t> axes_;
};

// ---- ArgMax / ArgMin ------------------------------------------------------------------------

// Rows ([outer, n] with inner 1): a warp or a block per row, combining
// candidates with normpool::arg_pick (a total order, so the answer is the
// sequential scan's).
template <typename T, bool kBlock>
__global__ void arg_rows_kernel(const T* x, int64_t* y, int64_t rows, int64_t n, bool is_max, bool last) {
  __shared__ ArgCandidate smem[32];
  const RowGroup<kBlock> g;
  const auto pick = [is_max, last](ArgCandidate a, ArgCandidate b) { return normpool::arg_pick(a, b, is_max, last); };
  for (int64_t row = g.first; row < rows; row += g.step) {
    const T* xr = x + row * n;
    ArgCandidate best{0.0f, -1};
    for (int64_t j = g.lane; j < n; j += g.width) best = pick(best, ArgCandidate{to_float(xr[j]), j});
    best = group_allreduce<kBlock>(best, pick, smem);
    if (g.lane == 0) y[row] = best.i;
  }
}

// A thread per (outer, inner) column, scanning n in order.
template <typename T>
__global__ void arg_columns_kernel(const T* x, int64_t* y, int64_t outer, int64_t n, int64_t inner, bool is_max,
                                   bool last) {
  const int64_t total = outer * inner;
  for (int64_t t = thread_index(); t < total; t += grid_stride()) {
    const T* base = x + (t / inner) * n * inner + t % inner;
    ArgCandidate best{to_float(base[0]), 0};
    for (int64_t a = 1; a < n; ++a)
      best = normpool::arg_pick(best, ArgCandidate{to_float(base[a * inner]), a}, is_max, last);
    y[t] = best.i;
  }
}

template <bool kMax>
class ArgKernel final : public CudaKernel {
 public:
  ArgKernel(const KernelCreateInfo& info, Status& /*status*/) {
    name_ = info.describe();
    axis_ = info.attr_int("axis", 0);
    keepdims_ = info.attr_int("keepdims", 1) != 0;
    last_ = info.attr_int("select_last_index", 0) != 0;
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* x = ctx.input(0);
    if (x == nullptr) return invalid_argument(name_ + ": input 0 is missing");
    const int rank = x->rank();
    int64_t axis = axis_;
    if (!provider_sdk::normalize_axis(axis, rank))
      return invalid_argument(name_ + ": axis " + std::to_string(axis_) + " is out of range for input " +
                              x->describe());
    int64_t outer = 1, n = 1, inner = 1;
    static_cast<void>(normpool::axis_layout(rank, x->dims(), axis, false, outer, n, inner));
    if (n == 0)
      return invalid_argument(name_ + ": cannot take the arg-extreme over an empty axis " + std::to_string(axis) +
                              " of " + x->describe());
    int64_t out_dims[SY_MAX_RANK];
    int out_rank = 0;
    for (int d = 0; d < rank; ++d) {
      if (d != axis) {
        out_dims[out_rank++] = x->dim(d);
      } else if (keepdims_) {
        out_dims[out_rank++] = 1;
      }
    }
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, static_cast<int32_t>(DataType::kInt64), out_rank, out_dims, y));
    if (outer * inner == 0) return ok_status();
    int64_t* yd = y.data<int64_t>();
    Status status;
    const bool handled = dispatch_float_type(x->t.dtype, [&]<typename T>() {
      const T* xd = x->data<const T>();
      if (inner == 1 && n > kThreadReduceMax) {
        if (n > 4096) {
          arg_rows_kernel<T, true><<<grid_size(outer, 1), 256, 0, ctx.stream()>>>(xd, yd, outer, n, kMax, last_);
        } else {
          arg_rows_kernel<T, false><<<grid_size(outer, 8), 256, 0, ctx.stream()>>>(xd, yd, outer, n, kMax, last_);
        }
        status = check_launch("arg_rows_kernel");
      } else {
        arg_columns_kernel<T>
            <<<grid_size(outer * inner), kThreadsPerBlock, 0, ctx.stream()>>>(xd, yd, outer, n, inner, kMax, last_);
        status = check_launch("arg_columns_kernel");
      }
    });
    if (!handled) return invalid_argument(name_ + ": unsupported input type " + x->describe());
    return status;
  }

 private:
  std::string name_;
  int64_t axis_ = 0;
  bool keepdims_ = true;
  bool last_ = false;
};

// ---- the table ------------------------------------------------------------------------------

constexpr uint64_t kAxesInput = uint64_t{1} << 1;

// Before its axes-as-input version an op reads the attribute; from it,
// input 1 lives on the host.
template <typename Op>
constexpr CudaKernelDef attr_row(const char* op, int end) {
  return {"", op, 1, end, 0, kFloatTypes, 0, &make_kernel<ReduceKernel<Op, false>>};
}
template <typename Op>
constexpr CudaKernelDef input_row(const char* op, int since) {
  return {"", op, since, kLatest, 0, kFloatTypes, kAxesInput, &make_kernel<ReduceKernel<Op, true>>};
}

constexpr CudaKernelDef kReductionDefs[] = {
    attr_row<SumOp>("ReduceSum", 12),
    input_row<SumOp>("ReduceSum", 13),
    attr_row<MeanOp>("ReduceMean", 17),
    input_row<MeanOp>("ReduceMean", 18),
    attr_row<MaxOp>("ReduceMax", 17),
    input_row<MaxOp>("ReduceMax", 18),
    attr_row<MinOp>("ReduceMin", 17),
    input_row<MinOp>("ReduceMin", 18),
    attr_row<ProdOp>("ReduceProd", 17),
    input_row<ProdOp>("ReduceProd", 18),
    attr_row<L1Op>("ReduceL1", 17),
    input_row<L1Op>("ReduceL1", 18),
    attr_row<L2Op>("ReduceL2", 17),
    input_row<L2Op>("ReduceL2", 18),
    attr_row<LogSumOp>("ReduceLogSum", 17),
    input_row<LogSumOp>("ReduceLogSum", 18),
    attr_row<LogSumExpOp>("ReduceLogSumExp", 17),
    input_row<LogSumExpOp>("ReduceLogSumExp", 18),
    attr_row<SumSquareOp>("ReduceSumSquare", 17),
    input_row<SumSquareOp>("ReduceSumSquare", 18),
    {"", "ArgMax", 1, kLatest, 0, kFloatTypes, 0, &make_kernel<ArgKernel<true>>},
    {"", "ArgMin", 1, kLatest, 0, kFloatTypes, 0, &make_kernel<ArgKernel<false>>},
};

}  // namespace

std::span<const CudaKernelDef> reduction_kernel_defs() { return kReductionDefs; }

}  // namespace sy::cuda
