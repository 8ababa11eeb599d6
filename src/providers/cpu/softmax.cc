// Softmax, LogSoftmax and Hardmax.
//
// Before opset 13 the input is seen as a matrix [prod(dims[:axis]),
// prod(dims[axis:])] and each row is normalised; from 13 on only `axis` is.
// Both come down to [outer, n, inner]: inner == 1 gives contiguous rows
// (the common case, axis = -1); otherwise tiles of up to kTile columns are
// done together, so the loops still run over contiguous memory.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/softmax.h"
#include "providers/cpu/softmax_simd.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

enum class Mode { kSoftmax, kLogSoftmax, kHardmax };

// One contiguous row of n elements.
template <Mode kMode, typename T>
void normalize_row(const T* x, T* y, int64_t n) {
  using C = compute_t<T>;
  if constexpr (kMode == Mode::kHardmax) {
    // The first maximum wins, as numpy.argmax does.
    int64_t best = 0;
    C best_v = n > 0 ? load(x[0]) : C{0};
    for (int64_t j = 1; j < n; ++j) {
      const C v = load(x[j]);
      if (v > best_v) {
        best_v = v;
        best = j;
      }
    }
    for (int64_t j = 0; j < n; ++j) y[j] = store<T>(C{0});
    if (n > 0) y[best] = store<T>(C{1});
    return;
  }
  if constexpr (kMode == Mode::kSoftmax && std::is_same_v<T, float>) {
    softmax_row_f32(x, y, n);  // vectorised per ISA (softmax_simd.h)
    return;
  }
  const C mx = row_max(x, n);
  if constexpr (kMode == Mode::kLogSoftmax) {
    // The sum is about 1 plus small terms, and log(sum) is about the small
    // terms: a float sum would keep only their top bits. So sum in double,
    // and subtract as (x - max) - log(sum), which does not cancel either.
    double acc[kLanes] = {};
    int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes)
      for (int k = 0; k < kLanes; ++k) acc[k] += static_cast<double>(fast_exp(load(x[j + k]) - mx));
    for (; j < n; ++j) acc[0] += static_cast<double>(fast_exp(load(x[j]) - mx));
    double sum = 0;
    for (const double a : acc) sum += a;
    const auto log_sum = static_cast<C>(std::log(sum));
    for (int64_t j = 0; j < n; ++j) y[j] = store<T>((load(x[j]) - mx) - log_sum);
  } else if constexpr (kIsHalf<T>) {
    // 16-bit outputs cannot hold the unscaled exponentials precisely:
    // compute them twice instead.
    const C sum = row_sum(x, n, [mx](C v) { return fast_exp(v - mx); });
    const C inv = C{1} / sum;
    for (int64_t j = 0; j < n; ++j) y[j] = store<T>(fast_exp(load(x[j]) - mx) * inv);
  } else {
    for (int64_t j = 0; j < n; ++j) y[j] = fast_exp(x[j] - mx);
    const C inv = C{1} / row_sum(y, n, [](C v) { return v; });
    for (int64_t j = 0; j < n; ++j) y[j] *= inv;
  }
}

inline constexpr int64_t kTile = 128;

// Columns [c0, c0 + w) of one [n, inner] block, normalised along n.
template <Mode kMode, typename T>
void normalize_columns(const T* x, T* y, int64_t n, int64_t inner, int64_t w) {
  using C = compute_t<T>;
  C mx[kTile];
  double sum[kTile];  // double: see normalize_row
  int64_t arg[kTile];
  for (int64_t j = 0; j < w; ++j) {
    mx[j] = -std::numeric_limits<C>::infinity();
    sum[j] = 0.0;
    arg[j] = 0;
  }
  for (int64_t a = 0; a < n; ++a) {
    const T* row = x + a * inner;
    for (int64_t j = 0; j < w; ++j) {
      const C v = load(row[j]);
      if constexpr (kMode == Mode::kHardmax) {
        if (v > mx[j] || a == 0) {
          mx[j] = v;
          arg[j] = a;
        }
      } else {
        mx[j] = select(v > mx[j], v, mx[j]);
      }
    }
  }
  if constexpr (kMode == Mode::kHardmax) {
    for (int64_t a = 0; a < n; ++a)
      for (int64_t j = 0; j < w; ++j) y[a * inner + j] = store<T>(arg[j] == a ? C{1} : C{0});
    return;
  }
  for (int64_t a = 0; a < n; ++a) {
    const T* row = x + a * inner;
    for (int64_t j = 0; j < w; ++j) sum[j] += static_cast<double>(fast_exp(load(row[j]) - mx[j]));
  }
  for (int64_t j = 0; j < w; ++j) {
    sum[j] = kMode == Mode::kLogSoftmax ? std::log(sum[j]) : 1.0 / sum[j];
  }
  for (int64_t a = 0; a < n; ++a) {
    const T* row = x + a * inner;
    T* out = y + a * inner;
    for (int64_t j = 0; j < w; ++j) {
      if constexpr (kMode == Mode::kLogSoftmax) {
        out[j] = store<T>((load(row[j]) - mx[j]) - static_cast<C>(sum[j]));
      } else {
        out[j] = store<T>(fast_exp(load(row[j]) - mx[j]) * static_cast<C>(sum[j]));
      }
    }
  }
}

// x seen as [outer, n, inner], normalised along n into y.
template <Mode kMode, typename T>
void normalize_along(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, ThreadPool& pool) {
  if (inner == 1) {
    parallel_range(pool, outer, std::max<int64_t>(1, kMathChunk / n), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) normalize_row<kMode>(x + o * n, y + o * n, n);
    });
    return;
  }
  const int64_t tiles = (inner + kTile - 1) / kTile;
  parallel_range(pool, outer * tiles, std::max<int64_t>(1, kMathChunk / (n * kTile)), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / tiles;
      const int64_t c0 = (t % tiles) * kTile;
      const int64_t offset = o * n * inner + c0;
      normalize_columns<kMode>(x + offset, y + offset, n, inner, std::min(kTile, inner - c0));
    }
  });
}

template <Mode kMode>
class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(const KernelCreateContext& ctx, Status& /*status*/) {
    legacy_ = ctx.opset() < 13;
    axis_ = ctx.node().attr_int("axis", legacy_ ? 1 : -1);
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return kernel_error(ctx, "input 0 is missing");
    const auto rank = static_cast<int64_t>(x->shape().rank());
    int64_t axis = axis_;
    // A scalar has one row of one element.
    if (!(rank == 0 && (axis == 0 || axis == -1)) && !normalize_axis(axis, rank))
      return kernel_error(ctx, "axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    const auto ax = static_cast<size_t>(std::max<int64_t>(axis, 0));
    const Shape& shape = x->shape();
    const int64_t outer = shape.size_to(ax);
    const int64_t n = rank == 0 ? 1 : (legacy_ ? shape.size_from(ax) : shape[ax]);
    const int64_t inner = (legacy_ || rank == 0) ? 1 : shape.size_from(ax + 1);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), shape));
    if (x->num_elements() == 0) return ok_status();
    const bool handled = visit_type(FloatTypes{}, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      normalize_along<kMode>(x->data<T>(), y->data<T>(), outer, n, inner, ctx.thread_pool());
    });
    if (!handled)
      return kernel_error(ctx, "input 0 has unsupported type " + std::string(data_type_name(x->dtype())));
    return ok_status();
  }

 private:
  bool legacy_ = false;
  int64_t axis_ = -1;
};

constexpr uint64_t kFloatMask = type_mask(FloatTypes{});

constexpr KernelDef kSoftmaxKernels[] = {
    {"", "Softmax", 1, kLatestVersion, 0, kFloatMask, &make_kernel<SoftmaxKernel<Mode::kSoftmax>>},
    {"", "LogSoftmax", 1, kLatestVersion, 0, kFloatMask, &make_kernel<SoftmaxKernel<Mode::kLogSoftmax>>},
    {"", "Hardmax", 1, kLatestVersion, 0, kFloatMask, &make_kernel<SoftmaxKernel<Mode::kHardmax>>},
};

}  // namespace

bool log_softmax_along(DataType dtype, const void* x, void* y, int64_t outer, int64_t n, int64_t inner,
                       ThreadPool& pool) {
  return visit_type(FloatTypes{}, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (outer == 0 || n == 0 || inner == 0) return;
    normalize_along<Mode::kLogSoftmax>(static_cast<const T*>(x), static_cast<T*>(y), outer, n, inner, pool);
  });
}

std::span<const KernelDef> softmax_kernels() { return kSoftmaxKernels; }

}  // namespace sy::cpu
