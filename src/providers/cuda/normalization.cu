// Softmax, LogSoftmax, LayerNormalization, InstanceNormalization and
// BatchNormalization (inference) on the GPU.
//
// Softmax-like ops and the row normalisations reduce along contiguous rows:
// a row of up to 1024 elements goes to one warp (8 rows per block), a
// longer one to a whole block, so a 128-wide attention row and a
// 30522-wide vocabulary row both keep the GPU busy. Softmax takes its max
// and sum in one pass (online softmax, normpool::MaxSum) and writes in a
// second; the row is small enough to stay in L1/L2 between passes. Softmax
// along a non-last axis (opset 13+) uses a thread per column instead, whose
// reads are contiguous across the warp. Everything accumulates in float.
#include <cmath>
#include <string>
#include <utility>

#include "switchyard/provider_sdk/axis.h"
#include "cuda_kernel.h"
#include "cuda_types.cuh"
#include "normpool_index.cuh"

namespace sy::cuda {
namespace {

using normpool::AddF;
using normpool::group_allreduce;
using normpool::MaxSum;
using normpool::RowGroup;

// ---- row launches ------------------------------------------------------------------

constexpr int kWarpRowsThreads = 256;  // 8 warps, a row each
constexpr int64_t kWarpRowMax = 1024;  // longer rows get a block

struct RowLaunch {
  bool block = false;  // a row per block, else a row per warp
  int threads = kWarpRowsThreads;
  unsigned blocks = 1;
};

RowLaunch row_launch(int64_t rows, int64_t n) {
  RowLaunch l;
  if (n <= kWarpRowMax) {
    l.block = false;
    l.threads = kWarpRowsThreads;
    l.blocks = grid_size(rows, kWarpRowsThreads / 32);
  } else {
    l.block = true;
    l.threads = n >= 16384 ? 1024 : 512;  // the kernels' __launch_bounds__ allow 1024
    l.blocks = grid_size(rows, 1);
  }
  return l;
}

struct CombineMaxSum {
  __device__ MaxSum operator()(MaxSum a, MaxSum b) const { return normpool::max_sum_combine(a, b); }
};

// ---- Softmax / LogSoftmax --------------------------------------------------------------

template <typename T, bool kLog, bool kBlock>
__global__ void __launch_bounds__(1024) softmax_rows_kernel(const T* x, T* y, int64_t rows, int64_t n) {
  __shared__ MaxSum smem[32];
  const RowGroup<kBlock> g;
  for (int64_t row = g.first; row < rows; row += g.step) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    MaxSum ms = normpool::max_sum_empty();
    for (int64_t j = g.lane; j < n; j += g.width) ms = normpool::max_sum_add(ms, to_float(xr[j]));
    ms = group_allreduce<kBlock>(ms, CombineMaxSum{}, smem);
    if (kLog) {
      // (x - max) - log(sum), as the CPU provider: no cancellation.
      const float log_sum = logf(ms.s);
      for (int64_t j = g.lane; j < n; j += g.width) yr[j] = from_float<T>((to_float(xr[j]) - ms.m) - log_sum);
    } else {
      const float inv = 1.0f / ms.s;
      for (int64_t j = g.lane; j < n; j += g.width) yr[j] = from_float<T>(expf(to_float(xr[j]) - ms.m) * inv);
    }
  }
}

// Normalising along a non-last axis: a thread per (outer, inner) column,
// consecutive threads on consecutive addresses. Also rows of up to
// kThreadRowMax elements (inner 1), which would leave most of a warp idle.
constexpr int64_t kThreadRowMax = 16;
template <typename T, bool kLog>
__global__ void softmax_columns_kernel(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  const int64_t total = outer * inner;
  for (int64_t t = thread_index(); t < total; t += grid_stride()) {
    const int64_t base = (t / inner) * n * inner + t % inner;
    MaxSum ms = normpool::max_sum_empty();
    for (int64_t a = 0; a < n; ++a) ms = normpool::max_sum_add(ms, to_float(x[base + a * inner]));
    if (kLog) {
      const float log_sum = logf(ms.s);
      for (int64_t a = 0; a < n; ++a) {
        const int64_t i = base + a * inner;
        y[i] = from_float<T>((to_float(x[i]) - ms.m) - log_sum);
      }
    } else {
      const float inv = 1.0f / ms.s;
      for (int64_t a = 0; a < n; ++a) {
        const int64_t i = base + a * inner;
        y[i] = from_float<T>(expf(to_float(x[i]) - ms.m) * inv);
      }
    }
  }
}

template <bool kLog>
class SoftmaxKernel final : public CudaKernel {
 public:
  SoftmaxKernel(const KernelCreateInfo& info, Status& /*status*/) {
    // Before opset 13 the input is coerced to 2-D at `axis` (default 1).
    flatten_ = info.since_version() < 13;
    axis_ = info.attr_int("axis", flatten_ ? 1 : -1);
    name_ = info.describe();
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* x = ctx.input(0);
    if (x == nullptr) return invalid_argument(name_ + ": input 0 is missing");
    int64_t outer = 1, n = 1, inner = 1;
    if (!normpool::axis_layout(x->rank(), x->dims(), axis_, flatten_, outer, n, inner))
      return invalid_argument(name_ + ": axis " + std::to_string(axis_) + " is out of range for input " +
                              x->describe());
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, x->t.dtype, x->rank(), x->dims(), y));
    if (x->num_elements() == 0) return ok_status();
    Status status;
    const bool handled = dispatch_float_type(x->t.dtype, [&]<typename T>() {
      const T* xd = x->data<const T>();
      T* yd = y.data<T>();
      if (inner == 1 && n > kThreadRowMax) {
        const RowLaunch l = row_launch(outer, n);
        if (l.block) {
          softmax_rows_kernel<T, kLog, true><<<l.blocks, l.threads, 0, ctx.stream()>>>(xd, yd, outer, n);
        } else {
          softmax_rows_kernel<T, kLog, false><<<l.blocks, l.threads, 0, ctx.stream()>>>(xd, yd, outer, n);
        }
        status = check_launch("softmax_rows_kernel");
      } else {
        softmax_columns_kernel<T, kLog>
            <<<grid_size(outer * inner), kThreadsPerBlock, 0, ctx.stream()>>>(xd, yd, outer, n, inner);
        status = check_launch("softmax_columns_kernel");
      }
    });
    if (!handled) return invalid_argument(name_ + ": unsupported input type " + x->describe());
    return status;
  }

 private:
  bool flatten_ = false;
  int64_t axis_ = -1;
  std::string name_;
};

// ---- LayerNormalization / InstanceNormalization -------------------------------------------

// Statistics in the stash type (float, double or bfloat16).
__device__ inline void store_stat(void* out, int32_t dtype, int64_t i, float v) {
  switch (static_cast<DataType>(dtype)) {
    case DataType::kDouble: static_cast<double*>(out)[i] = static_cast<double>(v); break;
    case DataType::kBfloat16: static_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16_rn(v); break;
    default: static_cast<float*>(out)[i] = v; break;
  }
}

// Where the affine parameters of a row normalisation come from.
template <typename T>
struct RowAffine {
  const T* scale = nullptr;
  const T* bias = nullptr;    // may be null (LayerNorm's B is optional)
  int64_t channels = 0;       // > 0: InstanceNorm, parameters per row (row % channels)
  bool scale_scalar = false;  // LayerNorm: one value for every column
  bool bias_scalar = false;
};

// Mean first, then the variance around it (two passes, no cancellation),
// then the output; the CPU provider's formulas for each op.
template <typename T, bool kBlock>
__global__ void __launch_bounds__(1024)
    norm_rows_kernel(const T* x, T* y, int64_t rows, int64_t n, float epsilon, RowAffine<T> p, void* mean_out,
                     void* inv_out, int32_t stat_dtype) {
  __shared__ float smem[32];
  const RowGroup<kBlock> g;
  const float inv_n = 1.0f / static_cast<float>(n);
  for (int64_t row = g.first; row < rows; row += g.step) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    float sum = 0.0f;
    for (int64_t j = g.lane; j < n; j += g.width) sum += to_float(xr[j]);
    const float mean = group_allreduce<kBlock>(sum, AddF{}, smem) * inv_n;
    float sq = 0.0f;
    for (int64_t j = g.lane; j < n; j += g.width) {
      const float d = to_float(xr[j]) - mean;
      sq += d * d;
    }
    const float var = group_allreduce<kBlock>(sq, AddF{}, smem) * inv_n;
    const float inv = 1.0f / sqrtf(var + epsilon);
    if (g.lane == 0) {
      if (mean_out != nullptr) store_stat(mean_out, stat_dtype, row, mean);
      if (inv_out != nullptr) store_stat(inv_out, stat_dtype, row, inv);
    }
    if (p.channels > 0) {
      const int64_t c = row % p.channels;
      const float a = to_float(p.scale[c]) * inv;
      const float b = to_float(p.bias[c]) - mean * a;
      for (int64_t j = g.lane; j < n; j += g.width) yr[j] = from_float<T>(to_float(xr[j]) * a + b);
    } else {
      for (int64_t j = g.lane; j < n; j += g.width) {
        const float s = to_float(p.scale[p.scale_scalar ? 0 : j]);
        float v = (to_float(xr[j]) - mean) * inv * s;
        if (p.bias != nullptr) v += to_float(p.bias[p.bias_scalar ? 0 : j]);
        yr[j] = from_float<T>(v);
      }
    }
  }
}

template <typename T>
Status launch_norm_rows(cudaStream_t stream, const T* x, T* y, int64_t rows, int64_t n, float epsilon,
                        const RowAffine<T>& p, void* mean_out, void* inv_out, int32_t stat_dtype) {
  const RowLaunch l = row_launch(rows, n);
  if (l.block) {
    norm_rows_kernel<T, true>
        <<<l.blocks, l.threads, 0, stream>>>(x, y, rows, n, epsilon, p, mean_out, inv_out, stat_dtype);
  } else {
    norm_rows_kernel<T, false>
        <<<l.blocks, l.threads, 0, stream>>>(x, y, rows, n, epsilon, p, mean_out, inv_out, stat_dtype);
  }
  return check_launch("norm_rows_kernel");
}

// Whether input i, when given, has dtype `want`.
bool same_type_or_absent(const KernelCreateInfo& info, int i, int32_t want) {
  const int32_t t = info.input_dtype(i);
  return t == 0 || t == want;
}

class LayerNormKernel final : public CudaKernel {
 public:
  LayerNormKernel(const KernelCreateInfo& info, Status& status) {
    name_ = info.describe();
    axis_ = info.attr_int("axis", -1);
    epsilon_ = info.attr_float("epsilon", 1e-5f);
    const int64_t stash = info.attr_int("stash_type", 1);
    // Statistics are computed in float (as the CPU provider does for float
    // and 16-bit inputs) and written in the stash type.
    if (stash != static_cast<int64_t>(DataType::kFloat) && stash != static_cast<int64_t>(DataType::kDouble) &&
        stash != static_cast<int64_t>(DataType::kBfloat16)) {
      status = info.error("attribute stash_type must be 1 (float), 11 (double) or 16 (bfloat16), got " +
          std::to_string(stash));
      return;
    }
    stash_ = static_cast<int32_t>(stash);
    const int32_t xt = info.input_dtype(0);
    if (!same_type_or_absent(info, 1, xt) || !same_type_or_absent(info, 2, xt)) {
      status = info.error(std::string("Scale and B must have X's type ") + dtype_name(xt));
      return;
    }
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* x = ctx.input(0);
    const TensorRef* scale = ctx.input(1);
    const TensorRef* bias = ctx.input(2);
    if (x == nullptr || scale == nullptr) return invalid_argument(name_ + ": inputs X and Scale are required");
    const int rank = x->rank();
    int64_t axis = axis_;
    if (!provider_sdk::normalize_axis(axis, rank))
      return invalid_argument(name_ + ": axis " + std::to_string(axis_) + " is out of range for X " + x->describe());
    int64_t rows = 1, n = 1;
    for (int d = 0; d < rank; ++d) (d < axis ? rows : n) *= x->dim(d);
    for (const TensorRef* p : {scale, bias}) {
      if (p == nullptr) continue;
      if (p->t.dtype != x->t.dtype)
        return invalid_argument(name_ + ": Scale and B must have X's type, got " + p->describe() + " for X " +
                                x->describe());
      if (p->num_elements() != n && p->num_elements() != 1)
        return invalid_argument(name_ + ": Scale and B must have the normalized shape (" + std::to_string(n) +
                                " elements, X " + x->describe() + " from axis " + std::to_string(axis) + "), got " +
                                p->describe());
    }
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, x->t.dtype, rank, x->dims(), y));
    // Mean and InvStdDev: X's leading dims, then ones.
    int64_t stat_dims[SY_MAX_RANK];
    for (int d = 0; d < rank; ++d) stat_dims[d] = d < axis ? x->dim(d) : 1;
    void* stats[2] = {nullptr, nullptr};
    for (int i = 1; i <= 2; ++i) {
      if (ctx.num_outputs() <= i || !ctx.output_requested(i)) continue;
      TensorRef s;
      SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(i, stash_, rank, stat_dims, s));
      stats[i - 1] = s.data();
    }
    if (x->num_elements() == 0) return ok_status();
    Status status;
    const bool handled = dispatch_float_type(x->t.dtype, [&]<typename T>() {
      RowAffine<T> p;
      p.scale = scale->data<const T>();
      p.scale_scalar = scale->num_elements() == 1;
      p.bias = bias != nullptr ? bias->data<const T>() : nullptr;
      p.bias_scalar = bias != nullptr && bias->num_elements() == 1;
      status = launch_norm_rows<T>(ctx.stream(), x->data<const T>(), y.data<T>(), rows, n, epsilon_, p,
          stats[0], stats[1], stash_);
    });
    if (!handled) return invalid_argument(name_ + ": unsupported input type " + x->describe());
    return status;
  }

 private:
  std::string name_;
  int64_t axis_ = -1;
  float epsilon_ = 1e-5f;
  int32_t stash_ = static_cast<int32_t>(DataType::kFloat);
};

class InstanceNormKernel final : public CudaKernel {
 public:
  InstanceNormKernel(const KernelCreateInfo& info, Status& status) {
    name_ = info.describe();
    epsilon_ = info.attr_float("epsilon", 1e-5f);
    const int32_t xt = info.input_dtype(0);
    if (!same_type_or_absent(info, 1, xt) || !same_type_or_absent(info, 2, xt))
      status = info.error(std::string("scale and B must have input's type ") + dtype_name(xt));
  }

  Status run(KernelRunContext& ctx) const override {
    for (int i = 0; i < 3; ++i)
      if (ctx.input(i) == nullptr) return invalid_argument(name_ + ": input " + std::to_string(i) + " is missing");
    const TensorRef& x = *ctx.input(0);
    const TensorRef& scale = *ctx.input(1);
    const TensorRef& bias = *ctx.input(2);
    if (x.rank() < 2) return invalid_argument(name_ + ": X must have rank 2 or more, got " + x.describe());
    const int64_t channels = x.dim(1);
    int64_t spatial = 1;
    for (int d = 2; d < x.rank(); ++d) spatial *= x.dim(d);
    for (const TensorRef* p : {&scale, &bias}) {
      if (p->num_elements() != channels || p->t.dtype != x.t.dtype)
        return invalid_argument(name_ + ": scale and B must be " + dtype_name(x.t.dtype) + " tensors of " +
                                std::to_string(channels) + " elements (the channels of X " + x.describe() + "), got " +
                                p->describe());
    }
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, x.t.dtype, x.rank(), x.dims(), y));
    if (x.num_elements() == 0) return ok_status();
    Status status;
    const bool handled = dispatch_float_type(x.t.dtype, [&]<typename T>() {
      RowAffine<T> p;
      p.scale = scale.data<const T>();
      p.bias = bias.data<const T>();
      p.channels = channels;
      status = launch_norm_rows<T>(ctx.stream(), x.data<const T>(), y.data<T>(), x.dim(0) * channels,
          spatial, epsilon_, p, nullptr, nullptr, 0);
    });
    if (!handled) return invalid_argument(name_ + ": unsupported input type " + x.describe());
    return status;
  }

 private:
  std::string name_;
  float epsilon_ = 1e-5f;
};

// ---- BatchNormalization (inference) ---------------------------------------------------------

bool is_param_type(int32_t t) {
  const auto d = static_cast<DataType>(t);
  return d == DataType::kFloat || d == DataType::kFloat16 || d == DataType::kBfloat16 || d == DataType::kDouble;
}

// scale, B, mean and var may each have their own float type (T1/T2 from
// opset 15), so they are read through a switch that is the same for every
// thread.
struct Param {
  const void* data;
  int32_t dtype;
  __device__ float operator[](int64_t i) const {
    switch (static_cast<DataType>(dtype)) {
      case DataType::kFloat16: return __half2float(static_cast<const __half*>(data)[i]);
      case DataType::kBfloat16: return __bfloat162float(static_cast<const __nv_bfloat16*>(data)[i]);
      case DataType::kDouble: return static_cast<float>(static_cast<const double*>(data)[i]);
      default: return static_cast<const float*>(data)[i];
    }
  }
};

// y = (x - mean) / sqrt(var + eps) * scale + B, per element; the four
// parameters are tiny and stay in cache.
template <typename T>
__global__ void batch_norm_kernel(const T* x, T* y, int64_t total, int64_t spatial, int64_t channels, Param scale,
                                  Param bias, Param mean, Param var, float epsilon) {
  for (int64_t i = thread_index(); i < total; i += grid_stride()) {
    const int64_t c = (i / spatial) % channels;
    const float m = scale[c] / sqrtf(var[c] + epsilon);
    const float o = bias[c] - mean[c] * m;
    y[i] = from_float<T>(to_float(x[i]) * m + o);
  }
}

class BatchNormKernel final : public CudaKernel {
 public:
  BatchNormKernel(const KernelCreateInfo& info, Status& status) {
    name_ = info.describe();
    epsilon_ = info.attr_float("epsilon", 1e-5f);
    const int version = info.since_version();
    if (info.attr_int("training_mode", 0) != 0) {
      status = info.unsupported(
          "BatchNormalization with training_mode=1 is not implemented on CUDA (inference only)");
      return;
    }
    if (version < 9 && info.attr_int("spatial", 1) == 0) {
      status = info.unsupported("BatchNormalization with spatial=0 is not implemented on CUDA");
      return;
    }
    // Before opset 14 the extra outputs exist only in training mode.
    for (int i = 1; i < info.num_outputs(); ++i) {
      TensorRef t;
      if (version < 14 && info.output_type(i, t)) {
        status = info.unsupported("BatchNormalization with training outputs (mean, var, saved_mean, saved_var) is "
                                    "not implemented on CUDA (inference only)");
        return;
      }
    }
    for (int i = 1; i <= 4; ++i) {
      const int32_t t = info.input_dtype(i);
      if (t != 0 && !is_param_type(t)) {
        status = info.error("input " + std::to_string(i) + " must be a float tensor, got " + dtype_name(t));
        return;
      }
    }
  }

  Status run(KernelRunContext& ctx) const override {
    for (int i = 0; i < 5; ++i)
      if (ctx.input(i) == nullptr) return invalid_argument(name_ + ": input " + std::to_string(i) + " is missing");
    const TensorRef& x = *ctx.input(0);
    if (x.rank() < 1) return invalid_argument(name_ + ": X must have rank 1 or more, got a scalar");
    // Rank 1 is (N) with C = 1.
    const int64_t channels = x.rank() >= 2 ? x.dim(1) : 1;
    int64_t spatial = 1;
    for (int d = 2; d < x.rank(); ++d) spatial *= x.dim(d);
    Param params[4];
    for (int i = 1; i <= 4; ++i) {
      const TensorRef& p = *ctx.input(i);
      if (p.num_elements() != channels || !is_param_type(p.t.dtype))
        return invalid_argument(name_ + ": input " + std::to_string(i) + " must be a float tensor of " +
                                std::to_string(channels) + " elements (the channels of X " + x.describe() + "), got " +
                                p.describe());
      params[i - 1] = Param{p.data(), p.t.dtype};
    }
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, x.t.dtype, x.rank(), x.dims(), y));
    // In inference mode the running mean and var pass through when asked
    // for (opset 14+), as on the CPU.
    for (int i = 1; i <= 2 && i < ctx.num_outputs(); ++i) {
      if (!ctx.output_requested(i)) continue;
      const TensorRef& src = *ctx.input(i + 2);
      TensorRef out;
      SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(i, src.t.dtype, src.rank(), src.dims(), out));
      if (src.byte_size() > 0)
        SY_SDK_RETURN_IF_ERROR(cuda_status(
            cudaMemcpyAsync(out.data(), src.data(), src.byte_size(), cudaMemcpyDeviceToDevice, ctx.stream()),
            "BatchNormalization: copying the running statistics"));
    }
    const int64_t total = x.num_elements();
    if (total == 0) return ok_status();
    Status status;
    const bool handled = dispatch_float_type(x.t.dtype, [&]<typename T>() {
      batch_norm_kernel<T><<<grid_size(total), kThreadsPerBlock, 0, ctx.stream()>>>(
          x.data<const T>(), y.data<T>(), total, spatial, channels, params[0], params[1], params[2], params[3],
          epsilon_);
      status = check_launch("batch_norm_kernel");
    });
    if (!handled) return invalid_argument(name_ + ": unsupported input type " + x.describe());
    return status;
  }

 private:
  std::string name_;
  float epsilon_ = 1e-5f;
};

// Softmax-1 and -11 are the coerced-to-2-D forms; the kernel reads the
// version. BatchNormalization from 7 (6 has the is_test attribute).
constexpr CudaKernelDef kNormalizationDefs[] = {
    {"", "Softmax", 1, kLatest, 0, kFloatTypes, 0, &make_kernel<SoftmaxKernel<false>>},
    {"", "LogSoftmax", 1, kLatest, 0, kFloatTypes, 0, &make_kernel<SoftmaxKernel<true>>},
    {"", "LayerNormalization", 17, kLatest, 0, kFloatTypes, 0, &make_kernel<LayerNormKernel>},
    {"", "InstanceNormalization", 6, kLatest, 0, kFloatTypes, 0, &make_kernel<InstanceNormKernel>},
    {"", "BatchNormalization", 7, kLatest, 0, kFloatTypes, 0, &make_kernel<BatchNormKernel>},
};

}  // namespace

std::span<const CudaKernelDef> normalization_kernel_defs() { return kNormalizationDefs; }

}  // namespace sy::cuda
