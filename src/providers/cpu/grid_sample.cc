// GridSample for 1-D, 2-D and 3-D images (X of rank 3, 4 or 5), with ONNX's
// reference semantics (PyTorch's grid_sample):
//   - a grid value g in [-1, 1] maps to the source coordinate
//     ((g + 1) * size - 1) / 2, or (g + 1) / 2 * (size - 1) with
//     align_corners;
//   - nearest rounds half to even;
//   - a coordinate outside the borders ([-0.5, size - 0.5], or
//     [0, size - 1] with align_corners) is first clamped (border) or
//     reflected (reflection); then each interpolation tap outside the image
//     reads zero, the clamped or the reflected pixel;
//   - linear and cubic (Keys, a = -0.75) blend the innermost axis first,
//     then each outer one.
// The taps and weights of an output point do not depend on the channel, so
// they are computed once per point and applied to every channel; points run
// in parallel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

enum class SampleMode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

constexpr int kMaxGridDims = 3;
// Coordinates beyond this are far outside any image: indices are clamped
// here so that integer arithmetic on them cannot overflow.
constexpr double kFar = 1099511627776.0;  // 2^40

// The image axes of one run, outermost first.
struct Axes {
  int64_t size[kMaxGridDims] = {};
  int64_t stride[kMaxGridDims] = {};  // element strides within one (n, c) plane
  double lo[kMaxGridDims] = {};       // the borders coordinates are clamped or reflected into
  double hi[kMaxGridDims] = {};
  bool align_corners = false;
  Padding padding = Padding::kZeros;
};

// Reflects x into [lo, hi] by folding at the nearest border until it lands
// inside, as the reference does (in double).
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (!(range > 0)) return lo;  // a one-pixel axis with align_corners
  if (x >= lo && x <= hi) return x;
  const double dx = x < lo ? lo - x : x - hi;
  const double folds = dx / range;
  if (!(folds < kFar)) return lo;  // NaN or absurdly far: any pixel is as good
  const auto n = static_cast<int64_t>(folds);
  const double r = dx - static_cast<double>(n) * range;
  if (x < lo) return n % 2 == 0 ? lo + r : hi - r;
  return n % 2 == 0 ? hi - r : lo + r;
}

// The pixel that integer position i of axis a reads, or -1 for zero.
int64_t tap_index(const Axes& axes, int a, int64_t i) {
  const int64_t size = axes.size[a];
  if (i >= 0 && i < size) return i;
  switch (axes.padding) {
    case Padding::kZeros:
      return -1;
    case Padding::kBorder:
      return std::clamp<int64_t>(i, 0, size - 1);
    case Padding::kReflection:
      break;
  }
  const auto r = static_cast<int64_t>(reflect(static_cast<double>(i), axes.lo[a], axes.hi[a]));
  return std::clamp<int64_t>(r, 0, size - 1);
}

// floor(x) (trunc(x) when `truncate`) as an integer, pinned to +-kFar so
// NaN and huge coordinates give an index outside every image.
template <typename W>
int64_t to_index(W x, bool truncate) {
  if (!(x > -kFar && x < kFar)) return x > 0 ? static_cast<int64_t>(kFar) : -static_cast<int64_t>(kFar);
  return static_cast<int64_t>(truncate ? std::trunc(x) : std::floor(x));
}

// Cubic convolution weights (Keys, a = -0.75) of the taps at -1, 0, 1, 2
// for fractional position t.
template <typename W>
void cubic_weights(W t, W* w) {
  const W a = W(-0.75);
  const W x = std::fabs(t);
  w[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  w[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  w[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  w[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

// The taps along one axis: pixel indices (-1: zero) and their weights.
template <typename W>
struct AxisTaps {
  int64_t index[4];
  W weight[4];
};

// The source coordinate of grid value g along axis a, rounded (nearest),
// then clamped or reflected when it lies outside the borders.
template <typename W>
W source_coordinate(const Axes& axes, int a, W g, SampleMode mode) {
  const auto size = static_cast<W>(axes.size[a]);
  W x = axes.align_corners ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2;
  if (mode == SampleMode::kNearest) x = std::nearbyint(x);
  if (x < axes.lo[a] || x > axes.hi[a]) {
    if (axes.padding == Padding::kBorder) x = std::clamp(x, W(0), size - 1);
    if (axes.padding == Padding::kReflection) x = static_cast<W>(reflect(x, axes.lo[a], axes.hi[a]));
  }
  return x;
}

template <typename W>
void axis_taps(const Axes& axes, int a, W x, SampleMode mode, AxisTaps<W>& taps) {
  const int64_t x0 = to_index(x, false);
  // Far outside (zeros padding only): every tap reads zero; a zero fraction
  // keeps the weights finite.
  const W t = std::abs(x0) >= static_cast<int64_t>(kFar) ? W(0) : x - static_cast<W>(x0);
  if (mode == SampleMode::kLinear) {
    taps.index[0] = tap_index(axes, a, x0);
    taps.index[1] = tap_index(axes, a, x0 + 1);
    taps.weight[0] = 1 - t;
    taps.weight[1] = t;
    return;
  }
  cubic_weights(t, taps.weight);
  for (int k = 0; k < 4; ++k) taps.index[k] = tap_index(axes, a, x0 - 1 + k);
}

// The blend of taps along axes [A, D) from `base`, innermost axis first.
template <typename T, typename W, int K, int D, int A>
W blend(const T* base, const AxisTaps<W>* taps, const int64_t* stride) {
  W acc = 0;
  for (int k = 0; k < K; ++k) {
    const int64_t i = taps[A].index[k];
    W v = 0;
    if (i >= 0) {
      if constexpr (A + 1 == D) {
        v = static_cast<W>(load(base[i]));
      } else {
        v = blend<T, W, K, D, A + 1>(base + i * stride[A], taps, stride);
      }
    }
    acc += taps[A].weight[k] * v;
  }
  return acc;
}

struct SampleJob {
  Axes axes;
  SampleMode mode = SampleMode::kLinear;
  int64_t batch = 0, channels = 0;
  int64_t plane = 0;   // elements of one (n, c) plane of X
  int64_t points = 0;  // output points per (n, c)
};

template <typename T, int D>
void sample(const SampleJob& job, const T* x, const Tensor& grid, T* y, ThreadPool& pool) {
  using W = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const Axes& axes = job.axes;
  const int64_t taps_per_point = job.mode == SampleMode::kNearest  ? 1
                                 : job.mode == SampleMode::kLinear ? 1 << D
                                                                   : 1 << (2 * D);
  const int64_t chunk = std::max<int64_t>(1, kMathChunk / std::max<int64_t>(1, job.channels * taps_per_point));
  parallel_range(pool, job.batch * job.points, chunk, [&](int64_t begin, int64_t end) {
    for (int64_t q = begin; q < end; ++q) {
      const int64_t n = q / job.points;
      const int64_t p = q % job.points;
      W coord[D];
      for (int a = 0; a < D; ++a) {
        // The grid lists coordinates innermost axis first (x, y, z).
        const auto g = static_cast<W>(number_at(grid, q * D + (D - 1 - a)));
        coord[a] = source_coordinate(axes, a, g, job.mode);
      }
      const T* xn = x + n * job.channels * job.plane;
      T* yn = y + n * job.channels * job.points + p;
      if (job.mode == SampleMode::kNearest) {
        int64_t offset = 0;
        for (int a = 0; a < D && offset >= 0; ++a) {
          const int64_t i = tap_index(axes, a, to_index(coord[a], true));
          offset = i < 0 ? -1 : offset + i * axes.stride[a];
        }
        for (int64_t c = 0; c < job.channels; ++c)
          yn[c * job.points] = offset >= 0 ? xn[c * job.plane + offset] : store<T>(0);
        continue;
      }
      AxisTaps<W> taps[D];
      for (int a = 0; a < D; ++a) axis_taps(axes, a, coord[a], job.mode, taps[a]);
      for (int64_t c = 0; c < job.channels; ++c) {
        const T* plane = xn + c * job.plane;
        const W v = job.mode == SampleMode::kLinear ? blend<T, W, 2, D, 0>(plane, taps, axes.stride)
                                                    : blend<T, W, 4, D, 0>(plane, taps, axes.stride);
        yn[c * job.points] = store<T>(static_cast<compute_t<T>>(v));
      }
    }
  });
}

class GridSampleKernel final : public Kernel {
 public:
  GridSampleKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    const bool v16 = ctx.opset() < 20;
    const std::string mode = node.attr_string("mode", v16 ? "bilinear" : "linear");
    if (mode == "nearest") {
      mode_ = SampleMode::kNearest;
    } else if (mode == (v16 ? "bilinear" : "linear")) {
      mode_ = SampleMode::kLinear;
    } else if (mode == (v16 ? "bicubic" : "cubic")) {
      mode_ = SampleMode::kCubic;
    } else {
      status = ctx.error("mode '" + mode + "' is not supported at opset " + std::to_string(ctx.opset()));
      return;
    }
    const std::string padding = node.attr_string("padding_mode", "zeros");
    if (padding == "zeros") {
      padding_ = Padding::kZeros;
    } else if (padding == "border") {
      padding_ = Padding::kBorder;
    } else if (padding == "reflection") {
      padding_ = Padding::kReflection;
    } else {
      status = ctx.error("padding_mode '" + padding + "' is not supported (expected zeros, border or reflection)");
      return;
    }
    const int64_t align = node.attr_int("align_corners", 0);
    if (align != 0 && align != 1) {
      status = ctx.error("align_corners must be 0 or 1, got " + std::to_string(align));
      return;
    }
    align_corners_ = align == 1;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* grid = ctx.input(1);
    if (x == nullptr || grid == nullptr) return kernel_error(ctx, "inputs X and grid are required");
    const Shape& xs = x->shape();
    const Shape& gs = grid->shape();
    if (xs.rank() < 3 || xs.rank() > 2 + kMaxGridDims)
      return kernel_error(ctx, describe_input(ctx, 0, "X") + " must have rank 3, 4 or 5 (1 to 3 spatial dims)");
    const int dims = static_cast<int>(xs.rank()) - 2;
    if (gs.rank() != xs.rank() || gs[0] != xs[0] || gs[gs.rank() - 1] != dims)
      return kernel_error(ctx, describe_input(ctx, 1, "grid") + " must have shape [" + std::to_string(xs[0]) +
                                   ", O1.." + std::to_string(dims) + ", " + std::to_string(dims) + "] for X " +
                                   xs.to_string());
    const DataType gt = grid->dtype();
    if (gt != DataType::kFloat && gt != DataType::kDouble && gt != DataType::kFloat16 && gt != DataType::kBfloat16)
      return kernel_error(ctx, describe_input(ctx, 1, "grid") + " must be a float tensor");

    SampleJob job;
    job.mode = mode_;
    job.batch = xs[0];
    job.channels = xs[1];
    job.plane = xs.size_from(2);
    job.points = gs.size_from(1) / dims;
    Shape ys;
    ys.push_back(xs[0]);
    ys.push_back(xs[1]);
    for (size_t d = 1; d + 1 < gs.rank(); ++d) ys.push_back(gs[d]);
    Axes& axes = job.axes;
    axes.align_corners = align_corners_;
    axes.padding = padding_;
    int64_t stride = 1;
    for (int a = dims - 1; a >= 0; --a) {
      const int64_t size = xs[static_cast<size_t>(a) + 2];
      axes.size[a] = size;
      axes.stride[a] = stride;
      stride *= size;
      axes.lo[a] = align_corners_ ? 0.0 : -0.5;
      axes.hi[a] = align_corners_ ? static_cast<double>(size) - 1.0 : static_cast<double>(size) - 0.5;
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), ys));
    if (y->num_elements() == 0) return ok_status();
    if (job.plane == 0 && padding_ != Padding::kZeros)
      return kernel_error(ctx, describe_input(ctx, 0, "X") +
                                   " has an empty spatial dim: there is no border pixel to clamp or reflect to");

    const bool handled = visit_type(FloatTypes{}, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xd = x->data<T>();
      T* yd = y->data<T>();
      if (dims == 1) sample<T, 1>(job, xd, *grid, yd, ctx.thread_pool());
      if (dims == 2) sample<T, 2>(job, xd, *grid, yd, ctx.thread_pool());
      if (dims == 3) sample<T, 3>(job, xd, *grid, yd, ctx.thread_pool());
    });
    if (!handled) return kernel_error(ctx, describe_input(ctx, 0, "X") + " has an unsupported type");
    return ok_status();
  }

 private:
  SampleMode mode_ = SampleMode::kLinear;
  Padding padding_ = Padding::kZeros;
  bool align_corners_ = false;
};

constexpr uint64_t kFloatMask = type_mask(FloatTypes{});

const KernelDef kGridSampleKernels[] = {
    {"", "GridSample", 16, kLatestVersion, 0, kFloatMask, &make_kernel<GridSampleKernel>},
};

}  // namespace

std::span<const KernelDef> grid_sample_kernels() { return kGridSampleKernels; }

}  // namespace sy::cpu
