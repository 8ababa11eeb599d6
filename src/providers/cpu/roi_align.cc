// RoiAlign, with ONNX's reference semantics (Detectron's RoIAlign): each
// output bin of a RoI averages (or takes the largest of) grid_h x grid_w
// bilinear samples, the grid being sampling_ratio per axis or, when that
// is 0, ceil(RoI size / bins). A sample more than one pixel outside the map
// counts as zero; one less than a pixel outside is pulled to the edge.
// In max mode the reference takes the largest of the four weighted corner
// terms of each sample (not of the interpolated values); the node tests'
// expected data follow it, and so does this kernel.
//
// The samples are separable: a row position depends only on (bin row,
// grid row) and a column position only on (bin column, grid column), so
// each RoI's rows and columns are computed once, shared by its channels,
// and the (RoI, channel) planes run in parallel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/checked_math.h"
#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/scratch_carver.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// Bilinear taps along one axis: pixels `low` and `high`, weights h and l
// (h = 1 - l). A sample outside the map has both weights zero.
template <typename W>
struct AxisSample {
  int64_t low, high;
  W h, l;
};

// Where one RoI lies on the feature map, in pixels.
template <typename W>
struct RoiGeometry {
  W start_h, start_w;
  W bin_h, bin_w;
  int64_t grid_h, grid_w;  // samples per bin along each axis (may be 0)
  int64_t count;           // what an average divides by
};

// The taps of position v on an axis of `size` pixels.
template <typename W>
AxisSample<W> axis_sample(W v, int64_t size) {
  if (!(v >= W(-1) && v <= static_cast<W>(size))) return {0, 0, W(0), W(0)};
  v = std::max(v, W(0));
  auto low = static_cast<int64_t>(v);
  int64_t high = low + 1;
  if (low >= size - 1) {
    high = low = size - 1;
    v = static_cast<W>(low);
  }
  const W l = v - static_cast<W>(low);
  return {low, high, W(1) - l, l};
}

// The samples along one axis of a RoI starting at `start`: `grid` per bin
// of `bin` pixels, for `bins` bins, on an axis of `size` pixels.
template <typename W>
void axis_samples(W start, W bin, int64_t bins, int64_t grid, int64_t size, AxisSample<W>* out) {
  for (int64_t b = 0; b < bins; ++b)
    for (int64_t i = 0; i < grid; ++i)
      out[b * grid + i] = axis_sample<W>(
          start + static_cast<W>(b) * bin + (static_cast<W>(i) + W(0.5)) * bin / static_cast<W>(grid), size);
}

struct RoiParams {
  bool max_mode = false;
  bool half_pixel = false;
  int64_t out_h = 1, out_w = 1;
  int64_t sampling_ratio = 0;
  float spatial_scale = 1.0f;
};

class RoiAlignKernel final : public Kernel {
 public:
  RoiAlignKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    const std::string mode = node.attr_string("mode", "avg");
    if (mode != "avg" && mode != "max") {
      status = ctx.error("mode '" + mode + "' is not supported (expected avg or max)");
      return;
    }
    p_.max_mode = mode == "max";
    // Opset 10 has no coordinate_transformation_mode: it behaves as
    // output_half_pixel. From 16 the default is half_pixel.
    if (ctx.opset() >= 16) {
      const std::string ctm = node.attr_string("coordinate_transformation_mode", "half_pixel");
      if (ctm != "half_pixel" && ctm != "output_half_pixel") {
        status = ctx.error("coordinate_transformation_mode '" + ctm +
                           "' is not supported (expected half_pixel or output_half_pixel)");
        return;
      }
      p_.half_pixel = ctm == "half_pixel";
    }
    p_.out_h = node.attr_int("output_height", 1);
    p_.out_w = node.attr_int("output_width", 1);
    p_.sampling_ratio = node.attr_int("sampling_ratio", 0);
    p_.spatial_scale = node.attr_float("spatial_scale", 1.0f);
    if (p_.out_h < 1 || p_.out_w < 1 || p_.out_h > kMaxBins || p_.out_w > kMaxBins) {
      status = ctx.error("output_height and output_width must be in [1, " + std::to_string(kMaxBins) + "], got " +
                         std::to_string(p_.out_h) + " and " + std::to_string(p_.out_w));
      return;
    }
    if (p_.sampling_ratio < 0 || p_.sampling_ratio > kMaxGrid) {
      status = ctx.error("sampling_ratio must be in [0, " + std::to_string(kMaxGrid) + "], got " +
                         std::to_string(p_.sampling_ratio));
      return;
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* rois = ctx.input(1);
    const Tensor* indices = ctx.input(2);
    if (x == nullptr || rois == nullptr || indices == nullptr)
      return kernel_error(ctx, "inputs X, rois and batch_indices are required");
    const Shape& xs = x->shape();
    if (xs.rank() != 4) return kernel_error(ctx, describe_input(ctx, 0, "X") + " must have rank 4 [N, C, H, W]");
    if (rois->dtype() != x->dtype() || rois->shape().rank() != 2 || rois->shape()[1] != 4)
      return kernel_error(ctx, describe_input(ctx, 1, "rois") + " must have X's type and shape [num_rois, 4]");
    const int64_t num_rois = rois->shape()[0];
    if (indices->dtype() != DataType::kInt64 || indices->shape() != Shape({num_rois}))
      return kernel_error(
          ctx, describe_input(ctx, 2, "batch_indices") + " must be int64 of shape [" + std::to_string(num_rois) + "]");
    const int64_t* batch = indices->data<int64_t>();
    for (int64_t r = 0; r < num_rois; ++r)
      if (batch[r] < 0 || batch[r] >= xs[0])
        return kernel_error(ctx, "batch_indices[" + std::to_string(r) + "] = " + std::to_string(batch[r]) +
                                     " is out of range for X " + xs.to_string());
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), Shape({num_rois, xs[1], p_.out_h, p_.out_w})));
    if (y->num_elements() == 0) return ok_status();
    if (xs[2] == 0 || xs[3] == 0)
      return kernel_error(ctx, describe_input(ctx, 0, "X") + " has an empty feature map: there is nothing to sample");
    Status status;
    const bool handled = visit_type(FloatTypes{}, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      status = run_typed<T>(ctx, *x, *rois, batch, *y);
    });
    if (!handled) return kernel_error(ctx, describe_input(ctx, 0, "X") + " has an unsupported type");
    return status;
  }

 private:
  // Bounds that keep the per-RoI sample counts (and their products) far
  // from overflow; a RoI needing more samples is refused, not attempted.
  static constexpr int64_t kMaxBins = int64_t{1} << 20;
  static constexpr int64_t kMaxGrid = int64_t{1} << 20;

  template <typename W>
  Status geometry(const KernelContext& ctx, const Tensor& rois, int64_t r, RoiGeometry<W>& g) const {
    const auto scale = static_cast<W>(p_.spatial_scale);
    const W offset = p_.half_pixel ? W(0.5) : W(0);
    const W start_w = static_cast<W>(number_at(rois, r * 4 + 0)) * scale - offset;
    const W start_h = static_cast<W>(number_at(rois, r * 4 + 1)) * scale - offset;
    const W end_w = static_cast<W>(number_at(rois, r * 4 + 2)) * scale - offset;
    const W end_h = static_cast<W>(number_at(rois, r * 4 + 3)) * scale - offset;
    W roi_w = end_w - start_w;
    W roi_h = end_h - start_h;
    if (!p_.half_pixel) {
      // Malformed RoIs are forced to 1 x 1.
      roi_w = std::max(roi_w, W(1));
      roi_h = std::max(roi_h, W(1));
    }
    g.start_h = start_h;
    g.start_w = start_w;
    g.bin_h = roi_h / static_cast<W>(p_.out_h);
    g.bin_w = roi_w / static_cast<W>(p_.out_w);
    if (p_.sampling_ratio > 0) {
      g.grid_h = g.grid_w = p_.sampling_ratio;
    } else {
      const W gh = std::ceil(roi_h / static_cast<W>(p_.out_h));
      const W gw = std::ceil(roi_w / static_cast<W>(p_.out_w));
      if (!(std::fabs(gh) <= W(kMaxGrid) && std::fabs(gw) <= W(kMaxGrid)))
        return kernel_invalid_argument(ctx, "RoI " + std::to_string(r) + " needs " + std::to_string(gh) + " x " +
                                                std::to_string(gw) + " samples per bin; at most " +
                                                std::to_string(kMaxGrid) + " per axis are supported");
      g.grid_h = static_cast<int64_t>(gh);
      g.grid_w = static_cast<int64_t>(gw);
    }
    g.count = std::max<int64_t>(g.grid_h * g.grid_w, 1);
    g.grid_h = std::max<int64_t>(g.grid_h, 0);
    g.grid_w = std::max<int64_t>(g.grid_w, 0);
    return ok_status();
  }

  template <typename T>
  Status run_typed(KernelContext& ctx, const Tensor& x, const Tensor& rois, const int64_t* batch, Tensor& y) const {
    using W = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const Shape& xs = x.shape();
    const int64_t channels = xs[1], height = xs[2], width = xs[3];
    const int64_t num_rois = rois.shape()[0];

    // Each RoI's rows (out_h * grid_h) and columns (out_w * grid_w) of
    // samples, one after another: first their count, then the scratch.
    int64_t total_samples = 0;
    for (int64_t r = 0; r < num_rois; ++r) {
      RoiGeometry<W> g;
      SY_RETURN_IF_ERROR(geometry(ctx, rois, r, g));
      const int64_t n = p_.out_h * g.grid_h + p_.out_w * g.grid_w;
      if (!checked_add(total_samples, n, total_samples) || total_samples > (int64_t{1} << 34))
        return kernel_invalid_argument(ctx, "the RoIs need too many samples to plan");
    }
    ScratchCarver carver;
    const size_t geometry_at = carver.add<RoiGeometry<W>>(num_rois);
    const size_t first_at = carver.add<int64_t>(num_rois);
    const size_t samples_at = carver.add<AxisSample<W>>(total_samples);
    SY_ASSIGN_OR_RETURN(void* base, ctx.scratch(carver.total()));
    auto* geo = ScratchCarver::pointer<RoiGeometry<W>>(base, geometry_at);
    auto* first = ScratchCarver::pointer<int64_t>(base, first_at);
    auto* samples = ScratchCarver::pointer<AxisSample<W>>(base, samples_at);
    int64_t at = 0;
    for (int64_t r = 0; r < num_rois; ++r) {
      SY_RETURN_IF_ERROR(geometry(ctx, rois, r, geo[r]));
      first[r] = at;
      at += p_.out_h * geo[r].grid_h + p_.out_w * geo[r].grid_w;
    }
    ThreadPool& pool = ctx.thread_pool();
    parallel_range(pool, num_rois, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const RoiGeometry<W>& g = geo[r];
        AxisSample<W>* rows = samples + first[r];
        AxisSample<W>* cols = rows + p_.out_h * g.grid_h;
        axis_samples(g.start_h, g.bin_h, p_.out_h, g.grid_h, height, rows);
        axis_samples(g.start_w, g.bin_w, p_.out_w, g.grid_w, width, cols);
      }
    });

    const T* xd = x.data<T>();
    T* yd = y.data<T>();
    const int64_t plane = height * width;
    const int64_t bins = p_.out_h * p_.out_w;
    const bool max_mode = p_.max_mode;
    const int64_t out_h = p_.out_h, out_w = p_.out_w;
    parallel_range(pool, num_rois * channels, std::max<int64_t>(1, kMathChunk / bins), [&](int64_t begin, int64_t end) {
      for (int64_t rc = begin; rc < end; ++rc) {
        const int64_t r = rc / channels;
        const int64_t c = rc % channels;
        const RoiGeometry<W>& g = geo[r];
        const AxisSample<W>* rows = samples + first[r];
        const AxisSample<W>* cols = rows + out_h * g.grid_h;
        const T* src = xd + (batch[r] * channels + c) * plane;
        T* dst = yd + rc * bins;
        for (int64_t ph = 0; ph < out_h; ++ph) {
          for (int64_t pw = 0; pw < out_w; ++pw) {
            W acc = 0;
            bool any = false;
            for (int64_t iy = 0; iy < g.grid_h; ++iy) {
              const AxisSample<W>& sy = rows[ph * g.grid_h + iy];
              const T* row_low = src + sy.low * width;
              const T* row_high = src + sy.high * width;
              for (int64_t ix = 0; ix < g.grid_w; ++ix) {
                const AxisSample<W>& sx = cols[pw * g.grid_w + ix];
                const W t1 = sy.h * sx.h * static_cast<W>(load(row_low[sx.low]));
                const W t2 = sy.h * sx.l * static_cast<W>(load(row_low[sx.high]));
                const W t3 = sy.l * sx.h * static_cast<W>(load(row_high[sx.low]));
                const W t4 = sy.l * sx.l * static_cast<W>(load(row_high[sx.high]));
                if (max_mode) {
                  const W v = std::max(std::max(t1, t2), std::max(t3, t4));
                  acc = any ? std::max(acc, v) : v;
                  any = true;
                } else {
                  acc += t1 + t2 + t3 + t4;
                }
              }
            }
            if (!max_mode) acc /= static_cast<W>(g.count);
            dst[ph * out_w + pw] = store<T>(static_cast<compute_t<T>>(acc));
          }
        }
      }
    });
    return ok_status();
  }

  RoiParams p_;
};

constexpr uint64_t kFloatMask = type_mask(FloatTypes{});

const KernelDef kRoiAlignKernels[] = {
    {"", "RoiAlign", 10, kLatestVersion, 0, kFloatMask, &make_kernel<RoiAlignKernel>},
};

}  // namespace

std::span<const KernelDef> roi_align_kernels() { return kRoiAlignKernels; }

}  // namespace sy::cpu
