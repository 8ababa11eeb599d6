// ConvTranspose (float, 1-D to 6-D, groups, strides, dilations, pads,
// output_padding, output_shape, auto_pad) as a GEMM and a col2im.
//
// Each input position p spreads X[:, p] through the window: output
// position p * stride + tap * dilation - pad_begin gets W[:, m, tap] . X[:, p]
// for every tap. Per image and group, one GEMM makes all those products,
//   cols[(m, tap), p] = sum_c W[c, m, tap] * X[c, p]
// (W_g^T, packed once at creation when W is a constant, times X's columns,
// read in place), and the col2im adds each row of cols into Y at the
// positions its tap reaches. The input positions go in chunks, so cols
// stays a few MB however large the map.
//
// The col2im is split among the threads by output lines (all dims but the
// last): each (channel, line) gathers from the taps whose input line lands
// on it, then adds along the line. Every element of Y is written by one
// thread, and the first chunk's pass writes the bias before it adds, so Y
// is swept once per chunk and never cleared separately.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/conv/conv_util.h"
#include "providers/cpu/gemm/gemm_state.h"
#include "providers/cpu/gemm/sgemm.h"
#include "providers/cpu/scratch_carver.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// Floats of cols to aim for per chunk: big enough that each GEMM is wide,
// small enough to stay in L2/L3 until the col2im reads it.
constexpr int64_t kColumnBudgetFloats = int64_t{1} << 20;

// floor(a / b) and ceil(a / b) for b > 0 and any a.
int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b < 0 ? 1 : 0); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// The GEMM's sizes for one image and group, and how its columns are cut.
struct ProductShape {
  int64_t rows = 0;   // output channels of the group times taps
  int64_t depth = 0;  // input channels of the group
  int64_t chunk = 0;  // input positions per GEMM
  int64_t positions = 0;
  int64_t last() const { return positions % chunk == 0 ? chunk : positions % chunk; }
};

ProductShape product_shape(int64_t mg, int64_t taps, int64_t cg, int64_t in_size) {
  ProductShape p;
  p.rows = mg * taps;
  p.depth = cg;
  p.positions = in_size;
  p.chunk = std::min(in_size, std::max<int64_t>(64, kColumnBudgetFloats / std::max<int64_t>(p.rows, 1) / 16 * 16));
  p.chunk = std::max<int64_t>(p.chunk, 1);
  return p;
}

// out[iw * stride] += src[iw] for iw in [iw0, iw1).
void add_strided(float* out, const float* src, int64_t iw0, int64_t iw1, int64_t stride) {
  if (stride == 1) {
    for (int64_t iw = iw0; iw < iw1; ++iw) out[iw] += src[iw];
  } else {
    for (int64_t iw = iw0; iw < iw1; ++iw) out[iw * stride] += src[iw];
  }
}

// The K taps of a K-wide, stride-K window (the 2x2 and 4x4 upsamplers)
// cover a run of the line without overlap: out[(iw - iw0) * K + tw] +=
// src[tw][iw]. Written as one loop over the run so that it vectorizes.
constexpr int kMaxInterleave = 4;
template <int K>
void add_interleaved(float* out, const float* const* src, int64_t iw0, int64_t iw1) {
  for (int64_t iw = iw0; iw < iw1; ++iw) {
    for (int tw = 0; tw < K; ++tw) out[tw] += src[tw][iw];
    out += K;
  }
}

// What the col2im of one chunk reads and writes.
struct Col2ImArgs {
  const WindowGeometry* g = nullptr;
  const float* cols = nullptr;  // rows x (p1 - p0), row (m * taps + tap)
  int64_t p0 = 0, p1 = 0;       // the chunk's input positions
  float* y = nullptr;           // the group's Mg channels of one image
  const float* bias = nullptr;  // the group's Mg values, or nullptr
  bool first_chunk = false;     // write the bias (or zero) before adding
  int64_t taps = 0;
  // For each tap tw along the last dim, the input positions [lo, hi) whose
  // output iw * stride + tw * dilation - pad_begin lies on the line.
  const int64_t* tap_lo = nullptr;
  const int64_t* tap_hi = nullptr;
  // log2 of each dim's stride when it is a power of two, else -1: the
  // per-line landing test divides by the stride, which a shift does faster.
  int stride_log2[kMaxSpatialDims] = {};
};

// n / stride when stride divides n (with log2 the stride's log2 or -1),
// else -1.
int64_t exact_quotient(int64_t n, int64_t stride, int log2) {
  if (log2 >= 0) return (n & (stride - 1)) == 0 ? n >> log2 : -1;
  return n % stride == 0 ? n / stride : -1;
}

// Adds the chunk into the output lines [line0, line1) of channel m.
void col2im_lines(const Col2ImArgs& a, int64_t m, int64_t line0, int64_t line1) {
  const WindowGeometry& g = *a.g;
  const int last = g.rank - 1;
  const int64_t in_last = g.in[last], out_last = g.out[last];
  const int64_t k_last = g.kernel[last], s_last = g.stride[last], d_last = g.dilation[last];
  const int64_t pb_last = g.pad_begin[last];
  const int64_t out_lines = g.out_size() / out_last;
  const int64_t outer_taps = a.taps / k_last;
  const int64_t width = a.p1 - a.p0;
  const float* channel_cols = a.cols + m * a.taps * width;
  // The first line's coordinates in the outer dims, then counted up.
  int64_t oc[kMaxSpatialDims] = {};
  for (int64_t d = last - 1, rest = line0; d >= 0; --d) {
    oc[d] = rest % g.out[d];
    rest /= g.out[d];
  }
  for (int64_t line = line0; line < line1; ++line) {
    float* dst = a.y + (m * out_lines + line) * out_last;
    if (a.first_chunk) std::fill(dst, dst + out_last, a.bias != nullptr ? a.bias[m] : 0.0f);
    int64_t tc[kMaxSpatialDims] = {};  // the outer tap's coordinates, counted up
    for (int64_t t = 0; t < outer_taps; ++t) {
      // The input line this outer tap brings here, if any.
      int64_t in_line = 0;
      bool lands = true;
      for (int d = 0; d < last && lands; ++d) {
        const int64_t i = exact_quotient(oc[d] + g.pad_begin[d] - tc[d] * g.dilation[d], g.stride[d], a.stride_log2[d]);
        lands = i >= 0 && i < g.in[d];
        in_line = in_line * g.in[d] + i;
      }
      for (int d = last - 1; d >= 0; --d) {
        if (++tc[d] < g.kernel[d]) break;
        tc[d] = 0;
      }
      if (!lands) continue;
      // The part of that input line inside the chunk.
      const int64_t line_start = in_line * in_last;
      const int64_t iw_chunk0 = std::max<int64_t>(0, a.p0 - line_start);
      const int64_t iw_chunk1 = std::min(in_last, a.p1 - line_start);
      if (iw_chunk0 >= iw_chunk1) continue;
      // Each inner tap's valid input range: ow = iw * s + tw * d - pb must
      // lie in [0, out_last).
      int64_t iw0[kMaxInterleave] = {}, iw1[kMaxInterleave] = {};
      const float* src[kMaxInterleave] = {};
      const bool interleave = s_last == k_last && d_last == 1 && (k_last == 2 || k_last == 4);
      int64_t mid0 = iw_chunk0, mid1 = iw_chunk1;
      for (int64_t tw = 0; tw < k_last; ++tw) {
        const int64_t shift = tw * d_last - pb_last;
        const int64_t lo = std::max(iw_chunk0, a.tap_lo[tw]);
        const int64_t hi = std::min(iw_chunk1, a.tap_hi[tw]);
        const float* from = channel_cols + (t * k_last + tw) * width + (line_start - a.p0);
        if (!interleave) {
          if (lo < hi) add_strided(dst + shift, from, lo, hi, s_last);
          continue;
        }
        iw0[tw] = lo;
        iw1[tw] = hi;
        src[tw] = from;
        mid0 = std::max(mid0, lo);
        mid1 = std::min(mid1, hi);
      }
      if (!interleave) continue;
      // Where every tap lands, the taps' rows interleave into one run of
      // the line; the few positions at the ends take the strided loop.
      if (mid0 >= mid1) mid0 = mid1 = iw_chunk0;
      float* run = dst + mid0 * k_last - pb_last;
      if (k_last == 2)
        add_interleaved<2>(run, src, mid0, mid1);
      else
        add_interleaved<4>(run, src, mid0, mid1);
      for (int64_t tw = 0; tw < k_last; ++tw) {
        const int64_t shift = tw - pb_last;
        if (iw0[tw] < std::min(mid0, iw1[tw])) add_strided(dst + shift, src[tw], iw0[tw], std::min(mid0, iw1[tw]), s_last);
        if (std::max(mid1, iw0[tw]) < iw1[tw]) add_strided(dst + shift, src[tw], std::max(mid1, iw0[tw]), iw1[tw], s_last);
      }
    }
    for (int d = last - 1; d >= 0; --d) {
      if (++oc[d] < g.out[d]) break;
      oc[d] = 0;
    }
  }
}

class ConvTransposeKernel final : public Kernel {
 public:
  ConvTransposeKernel(const KernelCreateContext& ctx, Status& status) {
    status = read_window_attributes(ctx, false, false, attrs_);
    if (!status.ok()) return;
    const Node& n = ctx.node();
    group_ = n.attr_int("group", 1);
    if (group_ <= 0) {
      status = ctx.error("group must be positive; got " + std::to_string(group_));
      return;
    }
    output_padding_ = n.attr_ints("output_padding");
    output_shape_ = n.attr_ints("output_shape");
    for (int64_t v : output_padding_)
      if (v < 0) {
        status = ctx.error("output_padding must be non-negative; got " + ints_string(output_padding_));
        return;
      }
    for (int64_t v : output_shape_)
      if (v < 0) {
        status = ctx.error("output_shape must be non-negative; got " + ints_string(output_shape_));
        return;
      }
    const Tensor* w = ctx.constant_input(1);
    if (w == nullptr || w->dtype() != DataType::kFloat || w->shape().rank() < 3) return;
    const Shape& ws = w->shape();
    const int64_t c = ws[0], mg = ws[1], taps = ws.size_from(2);
    if (c % group_ != 0) {
      status = ctx.error("W " + ws.to_string() + " has " + std::to_string(c) + " input channels, not a multiple of group " +
                         std::to_string(group_));
      return;
    }
    const int64_t cg = c / group_, rows = mg * taps;
    if (rows * cg == 0) return;
    // W_g is cg x rows; the GEMM's A is its transpose.
    packed_w_.reserve(static_cast<size_t>(group_));
    for (int64_t g = 0; g < group_; ++g) {
      packed_w_.push_back(pack_a(true, rows, cg, w->data<float>() + g * cg * rows, rows));
      if (packed_w_.back().empty()) {
        status = Status(StatusCode::kOutOfMemory, ctx.node().describe() + ": cannot allocate packed weights");
        return;
      }
    }
    ctx.mark_prepacked(1);  // run() reads the packed copy only
  }

  bool prepares() const override { return true; }

  Result<std::unique_ptr<KernelState>> prepare(const KernelContext& ctx) const override {
    auto state = std::make_unique<GemmState>();
    WindowGeometry g;
    if (geometry(ctx, g).ok()) {
      const Shape& xs = ctx.input(0)->shape();
      const Shape& ws = ctx.input(1)->shape();
      const ProductShape p = product_shape(ws[1], g.kernel_size(), xs[1] / group_, g.in_size());
      if (p.rows * p.depth * p.positions > 0) {
        state->plans.add(p.rows, p.chunk, p.depth, &ctx.thread_pool());
        state->plans.add(p.rows, p.last(), p.depth, &ctx.thread_pool());
      }
    }
    return std::unique_ptr<KernelState>(std::move(state));
  }

  Status run(KernelContext& ctx) const override {
    WindowGeometry g;
    SY_RETURN_IF_ERROR(geometry(ctx, g));
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor* b = ctx.input(2);
    const Shape& xs = x.shape();
    const Shape& ws = w.shape();
    const int64_t N = xs[0], C = xs[1], mg = ws[1], M = mg * group_;
    if (b != nullptr && (b->dtype() != DataType::kFloat || b->shape().rank() != 1 || b->shape()[0] != M))
      return kernel_error(ctx, "B must be float [" + std::to_string(M) + "]; got " + b->describe());
    Shape ys;
    ys.push_back(N);
    ys.push_back(M);
    for (int i = 0; i < g.rank; ++i) ys.push_back(g.out[i]);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat, ys));
    if (y->num_elements() == 0) return ok_status();

    ThreadPool& pool = ctx.thread_pool();
    const int64_t cg = C / group_, taps = g.kernel_size();
    const int64_t in_size = g.in_size(), out_size = g.out_size();
    const float* bias = b != nullptr ? b->data<float>() : nullptr;
    const ProductShape p = product_shape(mg, taps, cg, in_size);
    if (p.rows * p.depth * p.positions == 0) {
      // Nothing reaches Y but the bias.
      float* yd = y->data<float>();
      pool.parallel_for(N * M, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          std::fill(yd + i * out_size, yd + (i + 1) * out_size, bias != nullptr ? bias[i % M] : 0.0f);
      });
      return ok_status();
    }
    if (!packed_w_.empty() && (packed_w_[0].rows() != p.rows || packed_w_[0].cols() != cg))
      return kernel_error(ctx, "W " + ws.to_string() + " does not fit the weights prepared at creation");

    const GemmPlan chunk_plan = gemm_plans(ctx).get(p.rows, p.chunk, p.depth, &pool);
    const GemmPlan last_plan = gemm_plans(ctx).get(p.rows, p.last(), p.depth, &pool);
    ScratchCarver carver;
    const size_t cols_at = carver.add<float>(p.rows * p.chunk);
    const int64_t k_last = g.kernel[g.rank - 1];
    const size_t taps_at = carver.add<int64_t>(2 * k_last);
    const size_t gemm_at = carver.add<char>(
        static_cast<int64_t>(std::max(chunk_plan.workspace_bytes, last_plan.workspace_bytes)));
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(carver.total()));
    float* cols = ScratchCarver::pointer<float>(scratch, cols_at);
    void* gemm_ws = ScratchCarver::pointer<char>(scratch, gemm_at);
    int64_t* tap_lo = ScratchCarver::pointer<int64_t>(scratch, taps_at);
    int64_t* tap_hi = tap_lo + k_last;
    const int64_t s_last = g.stride[g.rank - 1], out_last = g.out[g.rank - 1];
    for (int64_t tw = 0; tw < k_last; ++tw) {
      const int64_t shift = tw * g.dilation[g.rank - 1] - g.pad_begin[g.rank - 1];
      tap_lo[tw] = ceil_div(-shift, s_last);
      tap_hi[tw] = floor_div(out_last - 1 - shift, s_last) + 1;
    }

    const int64_t out_lines = out_size / g.out[g.rank - 1];
    const int64_t line_grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, g.out[g.rank - 1] * taps));
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t gi = 0; gi < group_; ++gi) {
        const float* xg = x.data<float>() + (n * C + gi * cg) * in_size;
        const float* wg = w.data<float>() + gi * cg * p.rows;
        Col2ImArgs args;
        args.g = &g;
        args.cols = cols;
        args.y = y->data<float>() + (n * M + gi * mg) * out_size;
        args.bias = bias != nullptr ? bias + gi * mg : nullptr;
        args.taps = taps;
        args.tap_lo = tap_lo;
        args.tap_hi = tap_hi;
        for (int d = 0; d < g.rank; ++d)
          args.stride_log2[d] = (g.stride[d] & (g.stride[d] - 1)) == 0 ? __builtin_ctzll(static_cast<uint64_t>(g.stride[d])) : -1;
        for (int64_t p0 = 0; p0 < in_size; p0 += p.chunk) {
          const int64_t width = std::min(p.chunk, in_size - p0);
          const GemmPlan& plan = width == p.chunk ? chunk_plan : last_plan;
          if (!packed_w_.empty()) {
            sgemm_packed_a(plan, packed_w_[static_cast<size_t>(gi)], false, p.rows, width, cg, 1.0f, xg + p0, in_size,
                           0.0f, cols, width, &pool, gemm_ws);
          } else {
            sgemm(plan, true, false, p.rows, width, cg, 1.0f, wg, p.rows, xg + p0, in_size, 0.0f, cols, width, &pool,
                  gemm_ws);
          }
          args.p0 = p0;
          args.p1 = p0 + width;
          args.first_chunk = p0 == 0;
          pool.parallel_for(mg * out_lines, line_grain, [&](int64_t begin, int64_t end) {
            // Items are (channel, line), lines fastest.
            for (int64_t item = begin; item < end;) {
              const int64_t m = item / out_lines, line = item % out_lines;
              const int64_t stop = std::min(end, (m + 1) * out_lines);
              col2im_lines(args, m, line, line + (stop - item));
              item = stop;
            }
          });
        }
      }
    }
    return ok_status();
  }

 private:
  // Checks X, W and the attributes against each other and works out the
  // output's spatial dims and the pads that crop it.
  Status geometry(const KernelContext& ctx, WindowGeometry& g) const {
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    if (x.dtype() != DataType::kFloat || w.dtype() != DataType::kFloat)
      return kernel_error(ctx, "X and W must be float; got " + x.describe() + " and " + w.describe());
    const Shape& xs = x.shape();
    const Shape& ws = w.shape();
    if (xs.rank() < 3 || ws.rank() != xs.rank() || xs.rank() > 2 + kMaxSpatialDims)
      return kernel_error(ctx, "X " + xs.to_string() + " and W " + ws.to_string() +
                                   " must have the same rank, 3 to " + std::to_string(2 + kMaxSpatialDims) +
                                   " (N, C, spatial...)");
    if (xs[1] != ws[0] || xs[1] % group_ != 0)
      return kernel_error(ctx, "X has " + std::to_string(xs[1]) + " channels and W is " + ws.to_string() +
                                   " with group " + std::to_string(group_) +
                                   "; expected W[0] == C and C a multiple of group");
    const int rank = static_cast<int>(xs.rank()) - 2;
    const auto r = static_cast<size_t>(rank);
    const std::span<const int64_t> kernel = ws.dims().subspan(2);
    if (!attrs_.kernel_shape.empty() &&
        !std::equal(kernel.begin(), kernel.end(), attrs_.kernel_shape.begin(), attrs_.kernel_shape.end()))
      return kernel_error(ctx, "kernel_shape " + ints_string(attrs_.kernel_shape) + " does not match W " + ws.to_string());
    if ((!attrs_.strides.empty() && attrs_.strides.size() != r) ||
        (!attrs_.dilations.empty() && attrs_.dilations.size() != r) ||
        (!attrs_.pads.empty() && attrs_.pads.size() != 2 * r) ||
        (!output_padding_.empty() && output_padding_.size() != r) ||
        (!output_shape_.empty() && output_shape_.size() != r && output_shape_.size() != r + 2))
      return kernel_error(ctx, "strides, dilations, pads, output_padding or output_shape do not match the " +
                                   std::to_string(rank) + " spatial dims of X " + xs.to_string());
    const size_t shape_skip = output_shape_.size() == r + 2 ? 2 : 0;
    g.rank = rank;
    for (size_t i = 0; i < r; ++i) {
      g.in[i] = xs[i + 2];
      g.kernel[i] = kernel[i];
      g.stride[i] = attrs_.strides.empty() ? 1 : attrs_.strides[i];
      g.dilation[i] = attrs_.dilations.empty() ? 1 : attrs_.dilations[i];
      const int64_t out_pad = output_padding_.empty() ? 0 : output_padding_[i];
      if (out_pad >= std::max(g.stride[i], g.dilation[i]))
        return kernel_error(ctx, "output_padding " + ints_string(output_padding_) +
                                     " must be less than the stride or the dilation in each dim");
      provider_sdk::WindowDim wd;
      const std::string problem = provider_sdk::transposed_window_dim(
          static_cast<int>(i), g.in[i], g.kernel[i], g.stride[i], g.dilation[i], attrs_.auto_pad,
          attrs_.pads.empty() ? 0 : attrs_.pads[i], attrs_.pads.empty() ? 0 : attrs_.pads[i + r], out_pad,
          output_shape_.empty() ? -1 : output_shape_[i + shape_skip], wd);
      if (!problem.empty()) return kernel_error(ctx, problem);
      g.out[i] = wd.out;
      g.pad_begin[i] = wd.pad_begin;
      g.pad_end[i] = wd.pad_end;
    }
    return ok_status();
  }

  WindowAttributes attrs_;
  int64_t group_ = 1;
  std::vector<int64_t> output_padding_;
  std::vector<int64_t> output_shape_;
  std::vector<PackedMatrix> packed_w_;  // W_g^T per group, when W is a constant
};

const KernelDef kConvTransposeKernels[] = {
    {"", "ConvTranspose", 1, kLatestVersion, 0, type_bit(DataType::kFloat), &make_kernel<ConvTransposeKernel>},
};

}  // namespace

std::span<const KernelDef> conv_transpose_kernels() { return kConvTransposeKernels; }

}  // namespace sy::cpu
