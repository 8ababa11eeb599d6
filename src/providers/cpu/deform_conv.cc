// DeformConv for 2-D images (X of rank 4): a convolution whose kernel taps
// sample X at their usual place plus a learned offset (per output
// position, per offset group), bilinearly with zeros outside the image,
// each sample scaled by the optional mask. This is what ONNX's reference
// computes through GridSample (align_corners, zeros padding), done here in
// pixel coordinates directly.
//
// Per (image, group, tile of output positions) a task gathers the sampled
// columns (in_channels_per_group * kH * kW rows, one column per position)
// into its lane's scratch and multiplies the group's weights by them with
// a GEMM (sgemm for float and the half types, widened to float; a plain
// loop for double), then adds the bias on the way to Y. Tasks run in
// parallel, each lane with its own column buffer.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/checked_math.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/gemm/naive_gemm.h"
#include "providers/cpu/gemm/sgemm.h"
#include "providers/cpu/scratch_carver.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// Column-buffer elements a task aims for (its tile of positions times the
// rows): 256 KiB of floats, which stays in L2 while the GEMM reads it.
constexpr int64_t kColumnTarget = int64_t{1} << 16;
// Sample positions beyond this are far outside any image.
constexpr double kFar = 1099511627776.0;  // 2^40

struct DeformGeometry {
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  int64_t out_channels = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 0, kernel_w = 0;
  int64_t group = 1, offset_group = 1;
  int64_t in_per_group = 0, out_per_group = 0, in_per_offset_group = 0;
  int64_t col_rows = 0;   // in_per_group * kernel_h * kernel_w
  int64_t positions = 0;  // out_h * out_w
  int64_t tile = 0;       // positions per task
  int64_t tiles = 0;
};

// X's plane sampled at (h, w) in pixels: bilinear, zero outside; the row
// blends first, then the column, as the reference's GridSample.
template <typename T, typename A>
A sample(const T* plane, int64_t height, int64_t width, A h, A w) {
  if (!(h > -kFar && h < kFar && w > -kFar && w < kFar)) return A(0);
  const A h_floor = std::floor(h);
  const A w_floor = std::floor(w);
  const auto h0 = static_cast<int64_t>(h_floor);
  const auto w0 = static_cast<int64_t>(w_floor);
  const A lh = h - h_floor;
  const A lw = w - w_floor;
  auto pixel = [&](int64_t y, int64_t x) {
    return y >= 0 && y < height && x >= 0 && x < width ? static_cast<A>(load(plane[y * width + x])) : A(0);
  };
  const A top = (1 - lw) * pixel(h0, w0) + lw * pixel(h0, w0 + 1);
  const A bottom = (1 - lw) * pixel(h0 + 1, w0) + lw * pixel(h0 + 1, w0 + 1);
  return (1 - lh) * top + lh * bottom;
}

class DeformConvKernel final : public Kernel {
 public:
  DeformConvKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    const ValueType* x = ctx.input_type(0);
    if (x != nullptr && x->has_shape && x->rank() != 4) {
      status =
          ctx.unsupported("DeformConv is implemented for 2-D images (X of rank 4) only, got X " + x->shape_string());
      return;
    }
    kernel_shape_ = node.attr_ints("kernel_shape");
    strides_ = node.attr_ints("strides");
    dilations_ = node.attr_ints("dilations");
    pads_ = node.attr_ints("pads");
    if (strides_.empty()) strides_ = {1, 1};
    if (dilations_.empty()) dilations_ = {1, 1};
    if (pads_.empty()) pads_ = {0, 0, 0, 0};
    group_ = node.attr_int("group", 1);
    offset_group_ = node.attr_int("offset_group", 1);
    if ((!kernel_shape_.empty() && kernel_shape_.size() != 2) || strides_.size() != 2 || dilations_.size() != 2 ||
        pads_.size() != 4) {
      status = ctx.error("kernel_shape, strides and dilations must have 2 values and pads 4 (2-D images)");
      return;
    }
    for (size_t d = 0; d < 2; ++d) {
      if (strides_[d] < 1 || dilations_[d] < 1 || pads_[d] < 0 || pads_[d + 2] < 0 ||
          (!kernel_shape_.empty() && kernel_shape_[d] < 1)) {
        status = ctx.error("kernel_shape, strides and dilations must be 1 or more and pads 0 or more");
        return;
      }
    }
    if (group_ < 1 || offset_group_ < 1)
      status = ctx.error("group and offset_group must be 1 or more, got " + std::to_string(group_) + " and " +
                         std::to_string(offset_group_));
  }

  Status run(KernelContext& ctx) const override {
    for (size_t i = 0; i < 3; ++i)
      if (ctx.input(i) == nullptr) return kernel_error(ctx, "inputs X, W and offset are required");
    DeformGeometry g;
    SY_RETURN_IF_ERROR(geometry(ctx, g));
    const Tensor& x = *ctx.input(0);
    SY_ASSIGN_OR_RETURN(Tensor * y,
                        ctx.allocate_output(0, x.dtype(), Shape({g.batch, g.out_channels, g.out_h, g.out_w})));
    if (y->num_elements() == 0) return ok_status();
    Status status;
    const bool handled = visit_type(FloatTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      status = run_typed<T>(ctx, g, *y);
    });
    if (!handled) return kernel_error(ctx, describe_input(ctx, 0, "X") + " has an unsupported type");
    return status;
  }

 private:
  Status geometry(const KernelContext& ctx, DeformGeometry& g) const {
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor& offset = *ctx.input(2);
    const Tensor* bias = ctx.input(3);
    const Tensor* mask = ctx.input(4);
    for (size_t i = 1; i < 5; ++i) {
      const Tensor* t = ctx.input(i);
      if (t != nullptr && t->dtype() != x.dtype())
        return kernel_error(ctx, "input " + std::to_string(i) + " " + t->describe() + " must have X's type " +
                                     std::string(data_type_name(x.dtype())));
    }
    const Shape& xs = x.shape();
    const Shape& ws = w.shape();
    if (xs.rank() != 4) return kernel_error(ctx, describe_input(ctx, 0, "X") + " must have rank 4 [N, C, H, W]");
    g.batch = xs[0];
    g.channels = xs[1];
    g.height = xs[2];
    g.width = xs[3];
    g.group = group_;
    g.offset_group = offset_group_;
    int64_t grouped = 0;
    if (ws.rank() != 4 || !checked_mul(ws[1], group_, grouped) || grouped != g.channels || ws[0] % group_ != 0)
      return kernel_error(ctx, describe_input(ctx, 1, "W") +
                                   " must have shape [oC, C / group, kH, kW] with oC and C = " +
                                   std::to_string(g.channels) + " divisible by group " + std::to_string(group_));
    if (!kernel_shape_.empty() && (kernel_shape_[0] != ws[2] || kernel_shape_[1] != ws[3]))
      return kernel_error(ctx, "kernel_shape does not match " + describe_input(ctx, 1, "W"));
    if (g.channels % offset_group_ != 0)
      return kernel_error(ctx, "the channels of X (" + std::to_string(g.channels) +
                                   ") must be divisible by offset_group " + std::to_string(offset_group_));
    g.out_channels = ws[0];
    g.kernel_h = ws[2];
    g.kernel_w = ws[3];
    g.in_per_group = ws[1];
    g.out_per_group = g.out_channels / group_;
    g.in_per_offset_group = g.channels / offset_group_;
    int64_t out[2] = {};
    for (size_t d = 0; d < 2; ++d) {
      int64_t span = 0, room = 0;
      if (!checked_mul(dilations_[d], ws[d + 2] - 1, span) || !checked_add(span, 1, span) ||
          !checked_add(xs[d + 2], pads_[d], room) || !checked_add(room, pads_[d + 2], room) ||
          !checked_sub(room, span, room) || room < 0)
        return kernel_invalid_argument(ctx, "the kernel of " + describe_input(ctx, 1, "W") + " does not fit X " +
                                                xs.to_string() + " with its padding");
      out[d] = room / strides_[d] + 1;
    }
    g.out_h = out[0];
    g.out_w = out[1];
    g.positions = g.out_h * g.out_w;
    const int64_t taps = g.kernel_h * g.kernel_w;
    g.col_rows = g.in_per_group * taps;
    // offset_group * taps fits: it is at most offset's channel count when
    // the shapes below match, which they must.
    int64_t offset_channels = 0;
    if (!checked_mul(offset_group_, taps, offset_channels) || !checked_mul(offset_channels, 2, offset_channels) ||
        offset.shape() != Shape({g.batch, offset_channels, g.out_h, g.out_w}))
      return kernel_error(ctx, describe_input(ctx, 2, "offset") + " must have shape [" + std::to_string(g.batch) +
                                   ", offset_group * kH * kW * 2, " + std::to_string(g.out_h) + ", " +
                                   std::to_string(g.out_w) + "]");
    if (mask != nullptr && mask->shape() != Shape({g.batch, offset_channels / 2, g.out_h, g.out_w}))
      return kernel_error(ctx, describe_input(ctx, 4, "mask") + " must have shape [" + std::to_string(g.batch) + ", " +
                                   std::to_string(offset_channels / 2) + ", " + std::to_string(g.out_h) + ", " +
                                   std::to_string(g.out_w) + "]");
    if (bias != nullptr && bias->shape() != Shape({g.out_channels}))
      return kernel_error(ctx,
                          describe_input(ctx, 3, "B") + " must have shape [" + std::to_string(g.out_channels) + "]");
    g.tile = std::min(std::max<int64_t>(g.positions, 1),
                      std::max<int64_t>(16, kColumnTarget / std::max<int64_t>(g.col_rows, 1)));
    g.tiles = (g.positions + g.tile - 1) / g.tile;
    return ok_status();
  }

  template <typename T>
  Status run_typed(KernelContext& ctx, const DeformGeometry& g, Tensor& y) const {
    // float for float and the half types, double for double.
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const T* offset = ctx.input(2)->data<T>();
    const T* bias = ctx.input(3) != nullptr ? ctx.input(3)->data<T>() : nullptr;
    const T* mask = ctx.input(4) != nullptr ? ctx.input(4)->data<T>() : nullptr;
    ThreadPool& pool = ctx.thread_pool();
    const int64_t tasks = g.batch * g.group * g.tiles;
    const int64_t lanes = std::max<int64_t>(1, std::min<int64_t>(pool.num_threads(), tasks));
    const int64_t col_size = g.col_rows * g.tile;
    const int64_t out_size = g.out_per_group * g.tile;
    size_t workspace_bytes = 0;
    if constexpr (std::is_same_v<A, float>)
      workspace_bytes = KernelContext::scratch_align(sgemm_workspace_bound(g.out_per_group, g.tile, g.col_rows));

    ScratchCarver carver;
    const bool widen = !std::is_same_v<T, A>;
    const size_t weights_at = carver.add<A>(widen ? w.num_elements() : 0);
    const size_t lanes_at = carver.add<A>(lanes * (col_size + out_size));
    const size_t workspace_at = carver.add<char>(lanes * static_cast<int64_t>(workspace_bytes));
    SY_ASSIGN_OR_RETURN(void* base, ctx.scratch(carver.total()));
    const A* weights = nullptr;
    if constexpr (std::is_same_v<T, A>) {
      weights = w.data<T>();
    } else {
      A* wide = ScratchCarver::pointer<A>(base, weights_at);
      const T* src = w.data<T>();
      for (int64_t i = 0; i < w.num_elements(); ++i) wide[i] = static_cast<A>(load(src[i]));
      weights = wide;
    }
    A* lane_buffers = ScratchCarver::pointer<A>(base, lanes_at);
    char* workspaces = ScratchCarver::pointer<char>(base, workspace_at);

    const T* xd = x.data<T>();
    T* yd = y.data<T>();
    const int64_t plane = g.height * g.width;
    const int64_t taps = g.kernel_h * g.kernel_w;
    pool.run_tasks(lanes, tasks, [&](int64_t lane, int64_t task) {
      const int64_t n = task / (g.group * g.tiles);
      const int64_t grp = task / g.tiles % g.group;
      const int64_t p0 = task % g.tiles * g.tile;
      const int64_t np = std::min(g.tile, g.positions - p0);
      A* col = lane_buffers + lane * (col_size + out_size);
      A* out = col + col_size;

      // The sampled columns: row (channel, kernel row, kernel column), ld np.
      for (int64_t icl = 0; icl < g.in_per_group; ++icl) {
        const int64_t ic = grp * g.in_per_group + icl;
        const int64_t og = ic / g.in_per_offset_group;
        const T* src = xd + (n * g.channels + ic) * plane;
        for (int64_t a = 0; a < g.kernel_h; ++a) {
          for (int64_t b = 0; b < g.kernel_w; ++b) {
            const int64_t tap = (og * g.kernel_h + a) * g.kernel_w + b;
            const T* off_h = offset + ((n * g.offset_group * taps + tap) * 2) * g.positions;
            const T* off_w = off_h + g.positions;
            const T* m = mask != nullptr ? mask + (n * g.offset_group * taps + tap) * g.positions : nullptr;
            A* row = col + ((icl * g.kernel_h + a) * g.kernel_w + b) * np;
            int64_t i = p0 / g.out_w;
            int64_t j = p0 % g.out_w;
            for (int64_t p = p0; p < p0 + np; ++p) {
              const A h =
                  static_cast<A>(i * strides_[0] - pads_[0] + a * dilations_[0]) + static_cast<A>(load(off_h[p]));
              const A wpos =
                  static_cast<A>(j * strides_[1] - pads_[1] + b * dilations_[1]) + static_cast<A>(load(off_w[p]));
              A v = sample<T, A>(src, g.height, g.width, h, wpos);
              if (m != nullptr) v *= static_cast<A>(load(m[p]));
              row[p - p0] = v;
              if (++j == g.out_w) {
                j = 0;
                ++i;
              }
            }
          }
        }
      }

      const A* wg = weights + grp * g.out_per_group * g.col_rows;
      if (g.col_rows == 0) {
        std::fill(out, out + g.out_per_group * np, A(0));
      } else if constexpr (std::is_same_v<A, float>) {
        const GemmPlan plan = plan_sgemm_one_task(g.out_per_group, np, g.col_rows);
        sgemm(plan, false, false, g.out_per_group, np, g.col_rows, 1.0f, wg, g.col_rows, col, np, 0.0f, out, np,
              nullptr, workspaces + lane * static_cast<int64_t>(workspace_bytes));
      } else {
        std::fill(out, out + g.out_per_group * np, A(0));
        naive_gemm<A>(false, false, g.out_per_group, np, g.col_rows, A(1), wg, g.col_rows, col, np, out, np, nullptr);
      }

      for (int64_t o = 0; o < g.out_per_group; ++o) {
        const int64_t oc = grp * g.out_per_group + o;
        const A add = bias != nullptr ? static_cast<A>(load(bias[oc])) : A(0);
        T* dst = yd + (n * g.out_channels + oc) * g.positions + p0;
        const A* src = out + o * np;
        for (int64_t q = 0; q < np; ++q) dst[q] = store<T>(static_cast<compute_t<T>>(src[q] + add));
      }
    });
    return ok_status();
  }

  std::vector<int64_t> kernel_shape_, strides_, dilations_, pads_;
  int64_t group_ = 1;
  int64_t offset_group_ = 1;
};

constexpr uint64_t kFloatMask = type_mask(FloatTypes{});

const KernelDef kDeformConvKernels[] = {
    {"", "DeformConv", 19, kLatestVersion, 0, kFloatMask, &make_kernel<DeformConvKernel>},
};

}  // namespace

std::span<const KernelDef> deform_conv_kernels() { return kDeformConvKernels; }

}  // namespace sy::cpu
