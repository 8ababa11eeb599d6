// MaxPool (with the optional Indices output), AveragePool,
// GlobalAveragePool and GlobalMaxPool on the GPU, for 1 to 6 spatial dims
// (NCHW-style layouts), without cuDNN.
//
// MaxPool and AveragePool run a thread per output element; the window,
// the output shape and the padding rules are normpool::pool_window and
// normpool::compute_pool_geometry, which follow the CPU provider exactly
// and are tested on the host. The global pools reduce each (n, c) plane
// with a warp (planes of up to 1024 elements) or a block.
#include <cfloat>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda_kernel.h"
#include "cuda_types.cuh"
#include "normpool_index.cuh"

namespace sy::cuda {
namespace {

using normpool::AddF;
using normpool::AutoPad;
using normpool::group_allreduce;
using normpool::kMaxPoolDims;
using normpool::NanMaxF;
using normpool::PoolAttrs;
using normpool::PoolGeometry;
using normpool::RowGroup;

// The lowest finite value of T, as float: what MaxPool writes for a window
// that lies entirely in the padding (the CPU provider writes lowest()).
template <typename T>
float lowest_value() {
  if constexpr (std::is_same_v<T, __half>) {
    return -65504.0f;
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return -3.38953139e38f;
  } else {
    return -FLT_MAX;
  }
}

// ---- MaxPool / AveragePool ---------------------------------------------------------------

template <typename T>
struct PlaneLoad {
  const T* x;
  __host__ __device__ float operator()(int64_t off) const { return to_float(x[off]); }
};

// A thread per output element; `indices` (MaxPool only) may be null.
template <typename T, bool kMax>
__global__ void pool_kernel(const T* x, T* y, int64_t* indices, PoolGeometry g, int64_t planes, bool count_include_pad,
                            bool column_major, float lowest) {
  const int64_t out_size = g.out_size();
  const int64_t in_size = g.in_size();
  const int64_t total = planes * out_size;
  for (int64_t i = thread_index(); i < total; i += grid_stride()) {
    const int64_t plane = i / out_size;
    int64_t index = 0;
    const float v = normpool::pool_window<kMax>(g, i % out_size, PlaneLoad<T>{x + plane * in_size}, count_include_pad,
                                                column_major, lowest, indices != nullptr ? &index : nullptr);
    y[i] = from_float<T>(v);
    // Indices count over the whole flattened input, N and C included.
    if (indices != nullptr) indices[i] = plane * in_size + index;
  }
}

// Reads and checks auto_pad, kernel_shape, strides, dilations, pads and
// ceil_mode, as the CPU provider does.
Status read_pool_attrs(const KernelCreateInfo& info, PoolAttrs& a) {
  const std::string pad = info.attr_string("auto_pad", "NOTSET");
  if (!provider_sdk::parse_auto_pad(pad, a.auto_pad)) {
    return info.error("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID; got \"" + pad + "\"");
  }
  const std::vector<int64_t> kernel = info.attr_ints("kernel_shape");
  const std::vector<int64_t> strides = info.attr_ints("strides");
  const std::vector<int64_t> dilations = info.attr_ints("dilations");
  const std::vector<int64_t> pads = info.attr_ints("pads");
  a.ceil_mode = info.attr_int("ceil_mode", 0) != 0;
  if (kernel.empty()) return info.error("attribute kernel_shape is required");
  const size_t rank = kernel.size();
  if (rank > static_cast<size_t>(kMaxPoolDims))
    return info.error("at most " + std::to_string(kMaxPoolDims) + " spatial dims are supported; kernel_shape is " +
                      ints_string(kernel));
  for (int64_t k : kernel)
    if (k <= 0) return info.error("kernel_shape must be positive; got " + ints_string(kernel));
  for (int64_t s : strides)
    if (s <= 0) return info.error("strides must be positive; got " + ints_string(strides));
  for (int64_t d : dilations)
    if (d <= 0) return info.error("dilations must be positive; got " + ints_string(dilations));
  for (int64_t p : pads)
    if (p < 0) return info.error("pads must be >= 0; got " + ints_string(pads));
  if (!strides.empty() && strides.size() != rank)
    return info.error("strides " + ints_string(strides) + " must have one value per kernel dim " + ints_string(kernel));
  if (!dilations.empty() && dilations.size() != rank)
    return info.error("dilations " + ints_string(dilations) + " must have one value per kernel dim " +
                      ints_string(kernel));
  if (!pads.empty() && pads.size() != 2 * rank)
    return info.error("pads " + ints_string(pads) + " must have two values per kernel dim " + ints_string(kernel));
  a.rank = static_cast<int>(rank);
  for (size_t i = 0; i < rank; ++i) a.kernel[i] = kernel[i];
  a.n_strides = static_cast<int>(strides.size());
  for (size_t i = 0; i < strides.size(); ++i) a.strides[i] = strides[i];
  a.n_dilations = static_cast<int>(dilations.size());
  for (size_t i = 0; i < dilations.size(); ++i) a.dilations[i] = dilations[i];
  a.n_pads = static_cast<int>(pads.size());
  for (size_t i = 0; i < pads.size(); ++i) a.pads[i] = pads[i];
  return ok_status();
}

template <bool kMax>
class PoolKernel final : public CudaKernel {
 public:
  PoolKernel(const KernelCreateInfo& info, Status& status) {
    name_ = info.describe();
    status = read_pool_attrs(info, attrs_);
    if (!status.ok()) return;
    count_include_pad_ = info.attr_int("count_include_pad", 0) != 0;
    const int64_t order = info.attr_int("storage_order", 0);
    if (order != 0 && order != 1) {
      status = info.error("storage_order must be 0 or 1; got " + std::to_string(order));
      return;
    }
    column_major_ = order == 1;
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* x = ctx.input(0);
    if (x == nullptr) return invalid_argument(name_ + ": input 0 is missing");
    if (x->rank() < 3)
      return invalid_argument(name_ + ": X must have rank >= 3 (N, C, spatial...); got " + x->describe());
    PoolGeometry g;
    const std::string error = normpool::compute_pool_geometry(attrs_, x->rank() - 2, x->dims() + 2, g);
    if (!error.empty()) return invalid_argument(name_ + ": " + error + " (X " + x->describe() + ")");
    int64_t out_dims[SY_MAX_RANK] = {x->dim(0), x->dim(1)};
    for (int i = 0; i < g.rank; ++i) out_dims[i + 2] = g.out[i];
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, x->t.dtype, x->rank(), out_dims, y));
    int64_t* indices = nullptr;
    if (kMax && ctx.num_outputs() > 1 && ctx.output_requested(1)) {
      TensorRef ind;
      SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(1, static_cast<int32_t>(DataType::kInt64), x->rank(), out_dims, ind));
      indices = ind.data<int64_t>();
    }
    const int64_t planes = x->dim(0) * x->dim(1);
    const int64_t total = planes * g.out_size();
    if (total == 0) return ok_status();
    Status status;
    const bool handled = dispatch_float_type(x->t.dtype, [&]<typename T>() {
      pool_kernel<T, kMax><<<grid_size(total), kThreadsPerBlock, 0, ctx.stream()>>>(
          x->data<const T>(), y.data<T>(), indices, g, planes, count_include_pad_, column_major_,
          lowest_value<T>());
      status = check_launch(kMax ? "max_pool_kernel" : "average_pool_kernel");
    });
    if (!handled) return invalid_argument(name_ + ": unsupported input type " + x->describe());
    return status;
  }

 private:
  std::string name_;
  PoolAttrs attrs_;
  bool count_include_pad_ = false;
  bool column_major_ = false;
};

// ---- GlobalAveragePool / GlobalMaxPool -------------------------------------------------------

template <typename T, bool kMax, bool kBlock>
__global__ void global_pool_kernel(const T* x, T* y, int64_t planes, int64_t n) {
  __shared__ float smem[32];
  const RowGroup<kBlock> g;
  for (int64_t plane = g.first; plane < planes; plane += g.step) {
    const T* xp = x + plane * n;
    float acc = kMax ? -INFINITY : 0.0f;
    for (int64_t j = g.lane; j < n; j += g.width) {
      const float v = to_float(xp[j]);
      acc = kMax ? NanMaxF{}(acc, v) : acc + v;
    }
    if (kMax) {
      acc = group_allreduce<kBlock>(acc, NanMaxF{}, smem);
    } else {
      acc = group_allreduce<kBlock>(acc, AddF{}, smem) / static_cast<float>(n);
    }
    if (g.lane == 0) y[plane] = from_float<T>(acc);
  }
}

template <bool kMax>
class GlobalPoolKernel final : public CudaKernel {
 public:
  GlobalPoolKernel(const KernelCreateInfo& info, Status& /*status*/) { name_ = info.describe(); }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* x = ctx.input(0);
    if (x == nullptr) return invalid_argument(name_ + ": input 0 is missing");
    if (x->rank() < 3)
      return invalid_argument(name_ + ": X must have rank >= 3 (N, C, spatial...); got " + x->describe());
    int64_t out_dims[SY_MAX_RANK];
    int64_t spatial = 1;
    for (int d = 0; d < x->rank(); ++d) {
      out_dims[d] = d < 2 ? x->dim(d) : 1;
      if (d >= 2) spatial *= x->dim(d);
    }
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, x->t.dtype, x->rank(), out_dims, y));
    const int64_t planes = x->dim(0) * x->dim(1);
    if (planes == 0) return ok_status();
    // Empty planes give 0, as on the CPU; zero bits are 0 in all three types.
    if (spatial == 0)
      return cuda_status(cudaMemsetAsync(y.data(), 0, y.byte_size(), ctx.stream()), "global pool of empty planes");
    Status status;
    const bool handled = dispatch_float_type(x->t.dtype, [&]<typename T>() {
      const T* xd = x->data<const T>();
      T* yd = y.data<T>();
      if (spatial <= 1024) {
        global_pool_kernel<T, kMax, false><<<grid_size(planes, 8), 256, 0, ctx.stream()>>>(xd, yd, planes, spatial);
      } else {
        global_pool_kernel<T, kMax, true><<<grid_size(planes, 1), 256, 0, ctx.stream()>>>(xd, yd, planes, spatial);
      }
      status = check_launch("global_pool_kernel");
    });
    if (!handled) return invalid_argument(name_ + ": unsupported input type " + x->describe());
    return status;
  }

 private:
  std::string name_;
};

// One row per op from version 1: later versions add attributes (storage_order
// and Indices at 8, ceil_mode at 10, dilations for AveragePool at 19) or
// types, which the kernels read when present.
constexpr CudaKernelDef kPoolDefs[] = {
    {"", "MaxPool", 1, kLatest, 0, kFloatTypes, 0, &make_kernel<PoolKernel<true>>},
    {"", "AveragePool", 1, kLatest, 0, kFloatTypes, 0, &make_kernel<PoolKernel<false>>},
    {"", "GlobalAveragePool", 1, kLatest, 0, kFloatTypes, 0, &make_kernel<GlobalPoolKernel<false>>},
    {"", "GlobalMaxPool", 1, kLatest, 0, kFloatTypes, 0, &make_kernel<GlobalPoolKernel<true>>},
};

}  // namespace

std::span<const CudaKernelDef> pool_kernel_defs() { return kPoolDefs; }

}  // namespace sy::cuda
