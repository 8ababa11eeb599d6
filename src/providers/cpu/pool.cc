// MaxPool (with the optional Indices output), AveragePool, LpPool,
// GlobalMaxPool, GlobalAveragePool, GlobalLpPool. Windows are separable, so for each
// output position the in-bounds part of the window is a box: per spatial
// dim, the kernel taps [lo, hi) that land inside the input. Planes (n, c)
// run in parallel.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "providers/cpu/conv/conv_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// Kernel taps [lo, hi) of the window starting at `start` that fall inside
// [0, size); `pad_hi` is how many of them fall inside [-pad_begin, size +
// pad_end) (the count AveragePool divides by when it includes padding).
struct TapRange {
  int64_t lo, hi, pad_hi;
};

TapRange taps(int64_t start, int64_t kernel, int64_t dilation, int64_t size, int64_t pad_end) {
  TapRange r;
  r.lo = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  r.hi = size - 1 - start < 0 ? 0 : std::min(kernel, (size - 1 - start) / dilation + 1);
  r.pad_hi = size + pad_end - 1 - start < 0 ? 0 : std::min(kernel, (size + pad_end - 1 - start) / dilation + 1);
  if (r.hi < r.lo) r.hi = r.lo;
  return r;
}

enum class PoolKind { kMax, kAverage, kLp };

struct PoolParams {
  WindowGeometry g;
  bool count_include_pad = false;
  bool column_major = false;  // Indices in column-major spatial order
  double p = 2;               // LpPool's exponent
};

// LpPool's |v|^p and sum^(1/p), with the usual p spelled out.
double lp_power(double v, double p) {
  if (p == 1) return std::fabs(v);
  if (p == 2) return v * v;
  return std::pow(std::fabs(v), p);
}
double lp_root(double sum, double p) {
  if (p == 1) return sum;
  if (p == 2) return std::sqrt(sum);
  return std::pow(sum, 1 / p);
}

// One (n, c) plane. `base` is the plane's offset in the flattened input,
// for the Indices output.
template <PoolKind kKind, typename T>
void pool_plane(const T* x, T* y, int64_t* indices, int64_t base, const PoolParams& p) {
  const WindowGeometry& g = p.g;
  const int rank = g.rank;
  int64_t in_stride[kMaxSpatialDims];  // row-major strides of the input plane
  int64_t idx_stride[kMaxSpatialDims];  // strides used for Indices
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    in_stride[d] = s;
    s *= g.in[d];
  }
  s = 1;
  for (int d = 0; d < rank; ++d) {
    idx_stride[d] = p.column_major ? s : in_stride[d];
    s *= g.in[d];
  }
  int64_t o[kMaxSpatialDims] = {};
  const int64_t out_size = g.out_size();
  for (int64_t q = 0; q < out_size; ++q) {
    TapRange r[kMaxSpatialDims];
    int64_t start[kMaxSpatialDims];
    int64_t count = 1, pad_count = 1;
    for (int d = 0; d < rank; ++d) {
      start[d] = o[d] * g.stride[d] - g.pad_begin[d];
      r[d] = taps(start[d], g.kernel[d], g.dilation[d], g.in[d], g.pad_end[d]);
      count *= r[d].hi - r[d].lo;
      pad_count *= r[d].pad_hi;
    }
    if constexpr (kKind == PoolKind::kMax) {
      T best = std::numeric_limits<T>::lowest();
      int64_t best_index = 0;
      bool found = false;
      if (count > 0) {
        int64_t k[kMaxSpatialDims];
        for (int d = 0; d < rank; ++d) k[d] = r[d].lo;
        for (;;) {
          int64_t off = 0, ioff = 0;
          for (int d = 0; d < rank; ++d) {
            const int64_t i = start[d] + k[d] * g.dilation[d];
            off += i * in_stride[d];
            ioff += i * idx_stride[d];
          }
          const T v = x[off];
          if (!found || v > best) {  // the first of equal maxima gives the index
            best = v;
            best_index = ioff;
            found = true;
          }
          int d = rank - 1;
          for (; d >= 0; --d) {
            if (++k[d] < r[d].hi) break;
            k[d] = r[d].lo;
          }
          if (d < 0) break;
        }
      }
      y[q] = best;
      if (indices != nullptr) indices[q] = base + best_index;
    } else {
      // Average and Lp sum over the taps inside the input; the padding adds
      // zero to either sum.
      double sum = 0;
      if (count > 0) {
        int64_t k[kMaxSpatialDims];
        for (int d = 0; d < rank; ++d) k[d] = r[d].lo;
        for (;;) {
          int64_t off = 0;
          for (int d = 0; d < rank; ++d) off += (start[d] + k[d] * g.dilation[d]) * in_stride[d];
          const auto v = static_cast<double>(load(x[off]));
          if constexpr (kKind == PoolKind::kLp) {
            sum += lp_power(v, p.p);
          } else {
            sum += v;
          }
          int d = rank - 1;
          for (; d >= 0; --d) {
            if (++k[d] < r[d].hi) break;
            k[d] = r[d].lo;
          }
          if (d < 0) break;
        }
      }
      if constexpr (kKind == PoolKind::kLp) {
        y[q] = store<T>(static_cast<compute_t<T>>(lp_root(sum, p.p)));
      } else {
        const int64_t divisor = p.count_include_pad ? pad_count : count;
        y[q] = divisor > 0 ? static_cast<T>(sum / static_cast<double>(divisor)) : T(0);
      }
    }
    for (int d = rank - 1; d >= 0; --d) {
      if (++o[d] < g.out[d]) break;
      o[d] = 0;
    }
  }
}

// Elements of the framed row max_pool_plane_2d works in: the left padding
// and the input row, or as far as the last window reaches if that is more.
int64_t row_width(const WindowGeometry& g) {
  const int64_t reach = (g.out[1] - 1) * g.stride[1] + (g.kernel[1] - 1) * g.dilation[1] + 1;
  return std::max(g.pad_begin[1] + g.in[1], reach);
}

// MaxPool 2-D planes without Indices: the common CNN case. The window is
// separable, so each output row first takes the max over its window's input
// rows (contiguous loads, which the compiler vectorises), into `row`, a row
// framed by `lowest` where the padding is; then each output takes the max
// over its window's columns of that row, with no bounds checks. `row` holds
// at least row_width(g) elements. A window that lies wholly in the padding
// gives `lowest`, as in pool_plane.
template <typename T>
void max_pool_plane_2d(const T* x, T* y, const WindowGeometry& g, T* row) {
  const int64_t W = g.in[1];
  const int64_t OW = g.out[1];
  const int64_t width = row_width(g);
  const int64_t left = g.pad_begin[1];
  const T lowest = std::numeric_limits<T>::lowest();
  std::fill(row, row + left, lowest);
  std::fill(row + left + W, row + width, lowest);
  T* mid = row + left;
  const int64_t kw = g.kernel[1], sw = g.stride[1], dw = g.dilation[1];
  for (int64_t oh = 0; oh < g.out[0]; ++oh) {
    const int64_t hs = oh * g.stride[0] - g.pad_begin[0];
    const TapRange rh = taps(hs, g.kernel[0], g.dilation[0], g.in[0], g.pad_end[0]);
    if (rh.hi == rh.lo) {
      std::fill(mid, mid + W, lowest);
    } else {
      std::copy(x + (hs + rh.lo * g.dilation[0]) * W, x + (hs + rh.lo * g.dilation[0]) * W + W, mid);
      for (int64_t i = rh.lo + 1; i < rh.hi; ++i) {
        const T* in = x + (hs + i * g.dilation[0]) * W;
        for (int64_t w = 0; w < W; ++w) mid[w] = in[w] > mid[w] ? in[w] : mid[w];
      }
    }
    T* out = y + oh * OW;
    if (kw == 3 && sw == 2 && dw == 1) {  // ResNet's stem pool, spelled out: it vectorises (0.16 against 0.28 ms)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const T a = row[2 * ow], b = row[2 * ow + 1], c = row[2 * ow + 2];
        const T ab = b > a ? b : a;
        out[ow] = c > ab ? c : ab;
      }
      continue;
    }
    for (int64_t ow = 0; ow < OW; ++ow) {
      const T* win = row + ow * sw;
      T best = win[0];
      for (int64_t j = 1; j < kw; ++j) best = win[j * dw] > best ? win[j * dw] : best;
      out[ow] = best;
    }
  }
}

// The largest framed row max_pool_plane_2d takes from the stack; wider
// planes take the generic path.
constexpr int64_t kMaxPoolRowBytes = 32 * 1024;

class PoolKernel final : public Kernel {
 public:
  PoolKernel(const KernelCreateContext& ctx, Status& status, PoolKind kind) : kind_(kind) {
    // LpPool has ceil_mode from version 18 on.
    status = read_window_attributes(ctx, true, kind != PoolKind::kLp || ctx.opset() >= 18, attrs_);
    if (!status.ok()) return;
    if (kind == PoolKind::kLp) {
      // p is a float in version 1 and an int from 2 on.
      p_ = ctx.opset() < 2 ? static_cast<double>(ctx.node().attr_float("p", 2.0f))
                           : static_cast<double>(ctx.node().attr_int("p", 2));
      if (!(p_ > 0)) {
        status = ctx.error("attribute p must be positive, got " + std::to_string(p_));
        return;
      }
    }
    count_include_pad_ = ctx.node().attr_int("count_include_pad", 0) != 0;
    const int64_t order = ctx.node().attr_int("storage_order", 0);
    if (order != 0 && order != 1) {
      status = ctx.error("storage_order must be 0 or 1; got " + std::to_string(order));
      return;
    }
    column_major_ = order == 1;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Shape& xs = x.shape();
    if (xs.rank() < 3) return kernel_error(ctx, "X must have rank >= 3 (N, C, spatial...); got " + xs.to_string());
    PoolParams p;
    SY_RETURN_IF_ERROR(compute_window_geometry(ctx, attrs_, {}, xs.dims().subspan(2), p.g));
    p.count_include_pad = count_include_pad_;
    p.column_major = column_major_;
    p.p = p_;
    Shape ys;
    ys.push_back(xs[0]);
    ys.push_back(xs[1]);
    for (int i = 0; i < p.g.rank; ++i) ys.push_back(p.g.out[i]);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), ys));
    int64_t* indices = nullptr;
    if (kind_ == PoolKind::kMax && ctx.num_outputs() > 1 && ctx.output_requested(1)) {
      SY_ASSIGN_OR_RETURN(Tensor * ind, ctx.allocate_output(1, DataType::kInt64, ys));
      indices = ind->data<int64_t>();
    }
    if (y->num_elements() == 0) return ok_status();
    switch (x.dtype()) {
      case DataType::kFloat: return dispatch<float>(ctx, x, *y, indices, p);
      case DataType::kDouble: return dispatch<double>(ctx, x, *y, indices, p);
      case DataType::kFloat16:
        if (kind_ == PoolKind::kLp) return dispatch<Float16>(ctx, x, *y, indices, p);
        break;
      case DataType::kBfloat16:
        if (kind_ == PoolKind::kLp) return dispatch<BFloat16>(ctx, x, *y, indices, p);
        break;
      case DataType::kInt8:
        if (kind_ == PoolKind::kMax) return dispatch<int8_t>(ctx, x, *y, indices, p);
        break;
      case DataType::kUint8:
        if (kind_ == PoolKind::kMax) return dispatch<uint8_t>(ctx, x, *y, indices, p);
        break;
      default: break;
    }
    return kernel_error(ctx, "unsupported type " + x.describe());
  }

 private:
  template <typename T>
  Status dispatch(KernelContext& ctx, const Tensor& x, Tensor& y, int64_t* indices, const PoolParams& p) const {
    const int64_t planes = x.shape()[0] * x.shape()[1];
    const int64_t in_size = p.g.in_size();
    const int64_t out_size = p.g.out_size();
    const T* xd = x.data<T>();
    T* yd = y.data<T>();
    const int64_t work = std::max<int64_t>(1, out_size * p.g.kernel_size());
    const bool row_fits = kind_ == PoolKind::kMax && indices == nullptr && p.g.rank == 2 &&
                          row_width(p.g) * static_cast<int64_t>(sizeof(T)) <= kMaxPoolRowBytes;
    ctx.thread_pool().parallel_for(planes, std::max<int64_t>(1, 32768 / work), [&](int64_t begin, int64_t end) {
      [[maybe_unused]] alignas(64) T row[kMaxPoolRowBytes / sizeof(T)];
      for (int64_t plane = begin; plane < end; ++plane) {
        const T* xp = xd + plane * in_size;
        T* yp = yd + plane * out_size;
        if constexpr (kIsHalf<T>) {
          pool_plane<PoolKind::kLp, T>(xp, yp, nullptr, 0, p);  // only LpPool takes 16-bit floats
        } else if (kind_ == PoolKind::kLp) {
          pool_plane<PoolKind::kLp, T>(xp, yp, nullptr, 0, p);
        } else if (kind_ == PoolKind::kAverage) {
          pool_plane<PoolKind::kAverage, T>(xp, yp, nullptr, 0, p);
        } else if (row_fits) {
          max_pool_plane_2d<T>(xp, yp, p.g, row);
        } else {
          pool_plane<PoolKind::kMax, T>(xp, yp, indices != nullptr ? indices + plane * out_size : nullptr,
                                        plane * in_size, p);
        }
      }
    });
    return ok_status();
  }

  PoolKind kind_;
  WindowAttributes attrs_;
  bool count_include_pad_ = false;
  bool column_major_ = false;
  double p_ = 2;
};

// MaxPool, AveragePool or LpPool: a PoolKernel of one kind, with the
// constructor make_kernel calls.
template <PoolKind kKind>
class WindowPoolKernel final : public Kernel {
 public:
  WindowPoolKernel(const KernelCreateContext& ctx, Status& status) : impl_(ctx, status, kKind) {}
  Status run(KernelContext& ctx) const override { return impl_.run(ctx); }

 private:
  PoolKernel impl_;
};

template <PoolKind kKind>
class GlobalPoolKernel final : public Kernel {
 public:
  GlobalPoolKernel(const KernelCreateContext& ctx, Status& status) {
    if constexpr (kKind == PoolKind::kLp) {
      // GlobalLpPool-1 writes p as a float, later versions as an int.
      p_ = ctx.opset() < 2 ? ctx.node().attr_float("p", 2.0f) : static_cast<double>(ctx.node().attr_int("p", 2));
      if (!(p_ > 0) || !std::isfinite(p_)) status = ctx.error("p must be positive; got " + std::to_string(p_));
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Shape& xs = x.shape();
    if (xs.rank() < 3) return kernel_error(ctx, "X must have rank >= 3 (N, C, spatial...); got " + xs.to_string());
    Shape ys;
    ys.push_back(xs[0]);
    ys.push_back(xs[1]);
    for (size_t i = 2; i < xs.rank(); ++i) ys.push_back(1);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), ys));
    if (y->num_elements() == 0) return ok_status();
    if (x.dtype() == DataType::kFloat) return reduce<float>(ctx, x, *y, p_);
    if (x.dtype() == DataType::kDouble) return reduce<double>(ctx, x, *y, p_);
    return kernel_error(ctx, "unsupported type " + x.describe());
  }

 private:
  template <typename T>
  static Status reduce(KernelContext& ctx, const Tensor& x, Tensor& y, double p) {
    const int64_t planes = x.shape()[0] * x.shape()[1];
    const int64_t size = x.shape().size_from(2);
    const T* xd = x.data<T>();
    T* yd = y.data<T>();
    ctx.thread_pool().parallel_for(planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, size)),
                                   [&](int64_t begin, int64_t end) {
                                     for (int64_t plane = begin; plane < end; ++plane) {
                                       const T* xp = xd + plane * size;
                                       if constexpr (kKind == PoolKind::kMax) {
                                         T best = size > 0 ? xp[0] : T(0);
                                         for (int64_t i = 1; i < size; ++i)
                                           best = xp[i] > best ? xp[i] : best;
                                         yd[plane] = best;
                                       } else if constexpr (kKind == PoolKind::kLp) {
                                         double sum = 0.0;
                                         for (int64_t i = 0; i < size; ++i) sum += lp_power(static_cast<double>(xp[i]), p);
                                         yd[plane] = static_cast<T>(lp_root(sum, p));
                                       } else {
                                         // Four partial sums: vectorisable without reassociation flags.
                                         T s[4] = {};
                                         int64_t i = 0;
                                         for (; i + 4 <= size; i += 4)
                                           for (int j = 0; j < 4; ++j) s[j] += xp[i + j];
                                         for (; i < size; ++i) s[0] += xp[i];
                                         yd[plane] = size > 0 ? (s[0] + s[1] + s[2] + s[3]) / static_cast<T>(size) : T(0);
                                       }
                                     }
                                   });
    return ok_status();
  }

  double p_ = 2;  // GlobalLpPool's exponent
};

constexpr uint64_t kFloatTypes = type_bit(DataType::kFloat) | type_bit(DataType::kDouble);

const KernelDef kPoolKernels[] = {
    {"", "MaxPool", 1, 11, 0, kFloatTypes, &make_kernel<WindowPoolKernel<PoolKind::kMax>>},
    {"", "MaxPool", 12, kLatestVersion, 0, kFloatTypes | type_bit(DataType::kInt8) | type_bit(DataType::kUint8),
     &make_kernel<WindowPoolKernel<PoolKind::kMax>>},
    {"", "AveragePool", 1, kLatestVersion, 0, kFloatTypes, &make_kernel<WindowPoolKernel<PoolKind::kAverage>>},
    // Version 22 adds bfloat16.
    {"", "LpPool", 1, 21, 0, kFloatTypes | type_bit(DataType::kFloat16),
     &make_kernel<WindowPoolKernel<PoolKind::kLp>>},
    {"", "LpPool", 22, kLatestVersion, 0, type_mask(FloatTypes{}), &make_kernel<WindowPoolKernel<PoolKind::kLp>>},
    {"", "GlobalAveragePool", 1, kLatestVersion, 0, kFloatTypes, &make_kernel<GlobalPoolKernel<PoolKind::kAverage>>},
    {"", "GlobalMaxPool", 1, kLatestVersion, 0, kFloatTypes, &make_kernel<GlobalPoolKernel<PoolKind::kMax>>},
    {"", "GlobalLpPool", 1, kLatestVersion, 0, kFloatTypes, &make_kernel<GlobalPoolKernel<PoolKind::kLp>>},
};

}  // namespace

std::span<const KernelDef> pool_kernels() { return kPoolKernels; }

}  // namespace sy::cpu
