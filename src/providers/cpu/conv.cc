// Conv (float, 1-D to 6-D, groups, dilations, strides, pads, auto_pad).
//
// Per shape:
// - depthwise 2-D (group == C == M): vectorised across blocks of channels
//   (conv/depthwise_blocked.h), W interleaved once at creation;
// - 3x3, stride 1, dilation 1, group 1 with a constant W and maps of at
//   least 7x7: Winograd (conv/winograd.h), F(4x4, 3x3) with 4x fewer
//   multiplies, F(5x5, 3x3) where tiles of 5 cover the map more tightly
//   (14x14), or F(2x2, 3x3) on maps of few tiles (7x7); a 7x7 stride-2
//   stem over up to 4 channels (ResNet's) as F(4x4, 4x4) on its
//   space-to-depth phases;
// - group 1, 2-D, few input channels times taps (an image stem, C * kh * kw
//   up to 160: ResNet's 7x7 over RGB is 147) and no residual: a direct kernel (conv/direct_few_channels.h)
//   with no im2col, W packed once at creation;
// - 1x1, stride 1, no padding: the input already is the GEMM's B matrix;
// - otherwise: im2col into scratch, a chunk of output positions at a time
//   so the buffer stays a few MB, then a GEMM.
// The GEMMs are W_g (M/g x C/g*k, packed once at creation when W is a
// constant) times the columns, with the bias and the optional fused
// activation (see conv/conv_util.h) applied as C is stored.
//
// Small maps (group 1, fewer than kTransposedMaxPositions output positions
// known at creation, e.g. ResNet's 7x7 stage) turn the product around:
// Y^T [positions x M] = columns^T . W^T, W^T packed once as the B operand.
// The micro-kernel's wide, vectorised side then runs over the output
// channels (hundreds) instead of the few dozen positions, which would fill
// under 80% of its 64 columns; each block of Y^T is transposed into place
// (simd/transpose_store.h) as soon as the GEMM has it. Where the map's
// size is not known at creation (a streaming model's window is a symbolic
// dim), small weights are packed both ways and run() takes the transposed
// product for maps under a vector's width of positions, the plain one's
// tiles being mostly empty there.
//
// The same kernel runs FusedConv (com.switchyard, schema/fused.cc): Conv
// plus a residual input 3 and an activation applied as Y is stored, and
// the layouts of its tensors.
//
// Channel-blocked tensors (NCHW16c, conv/blocked_layout.h), set up by the
// optimizer's conv_blocked_layout pass over whole chains of Convs (ResNet's
// and MobileNetV2's bodies): FusedConv's input_layout, output_layout and
// residual_layout say which of X, Y and the residual are blocked.
// Depthwise and Winograd fill their channel blocks by row copies from a
// blocked X and store blocked Y rows as they are. Every other group-1
// Conv with a blocked side runs the transposed product: a 1x1 one reads
// X^T from the blocks in place (no packing), others read im2col rows built
// from the blocks (im2row_blocked); its GEMM stores Y^T straight into
// blocks, with the blocked residual added on the way. A blocked region's
// last Conv (NCHW Y, blocked residual) builds Y blocked in scratch, then
// transposes it.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "providers/cpu/conv/blocked_layout.h"
#include "providers/cpu/conv/conv_util.h"
#include "providers/cpu/conv/depthwise_blocked.h"
#include "providers/cpu/conv/direct_few_channels.h"
#include "providers/cpu/conv/winograd.h"
#include "providers/cpu/gemm/gemm_state.h"
#include "providers/cpu/gemm/sgemm.h"
#include "providers/cpu/simd/transpose_store.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// Floats of im2col buffer to aim for: big enough that each GEMM is wide,
// small enough to stay in L2/L3.
constexpr int64_t kColumnBudgetFloats = int64_t{1} << 20;

// Below this many output positions per image the transposed product wins
// (measured: 49 positions x 512 channels x K 4608 runs at 107 GFLOP/s
// transposed against 84 plain; at 196 positions the two are level).
constexpr int64_t kTransposedMaxPositions = 128;

// Where the map's size is unknown at creation, W^T is packed as well when
// W has at most this many floats (1 MiB: the small convolutions of
// streaming models, not a large CNN's whose memory it would double), and
// used for maps of fewer than kNarrowMapPositions positions (measured: a
// 129->128 channel, width-3 Conv1d over 4 positions runs in 16 us plain
// and in under half that transposed).
constexpr int64_t kAlternateWtMaxFloats = int64_t{1} << 18;
constexpr int64_t kNarrowMapPositions = 16;

// The 2-D window of `g`, as the depthwise and direct kernels take it.
Window2d window_2d(const WindowGeometry& g) {
  Window2d s;
  s.H = g.in[0];
  s.W = g.in[1];
  s.OH = g.out[0];
  s.OW = g.out[1];
  s.kh = g.kernel[0];
  s.kw = g.kernel[1];
  s.stride_h = g.stride[0];
  s.stride_w = g.stride[1];
  s.dilation_h = g.dilation[0];
  s.dilation_w = g.dilation[1];
  s.pad_top = g.pad_begin[0];
  s.pad_left = g.pad_begin[1];
  return s;
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(const KernelCreateContext& ctx, Status& status) {
    status = read_window_attributes(ctx, false, false, attrs_);
    if (!status.ok()) return;
    // FusedConv's epilogue and layouts; a plain Conv has none.
    const bool fused = is_fused_op(ctx);
    if (fused) {
      status = read_fused_activation(ctx, activation_);
      if (!status.ok()) return;
      // The Winograd and depthwise paths apply the activation as a clamp.
      if (activation_.activation == GemmActivation::kGeluErf || activation_.activation == GemmActivation::kGeluTanh) {
        status = ctx.error(std::string(kActivationAttr) + " of a FusedConv must be \"Relu\" or \"Clip\"");
        return;
      }
      residual_ = ctx.node().has_input(3);
    }
    group_ = ctx.node().attr_int("group", 1);
    if (group_ <= 0) {
      status = ctx.error("group must be positive; got " + std::to_string(group_));
      return;
    }
    if (fused) {
      status = read_layouts(ctx);
      if (!status.ok()) return;
    }
    const Tensor* w = ctx.constant_input(1);
    if (w == nullptr || w->dtype() != DataType::kFloat || w->shape().rank() < 3) {
      if (blocked_output_) status = ctx.error(std::string(kOutputLayoutAttr) + " needs a constant float W");
      return;
    }
    const Shape& ws = w->shape();
    if (blocked_output_ && ws[0] % kLayoutBlock != 0) {
      status = ctx.error(std::string(kOutputLayoutAttr) + " needs output channels in whole blocks of " +
                         std::to_string(kLayoutBlock) + "; W is " + ws.to_string());
      return;
    }
    const int64_t m = ws[0];
    if (m % group_ != 0) {
      status = ctx.error("W has " + std::to_string(m) + " output channels, not a multiple of group " +
                         std::to_string(group_));
      return;
    }
    const int64_t mg = m / group_;
    const int64_t k = ws.size_from(1);
    if (mg * k == 0) return;
    if (winograd_applies(ctx, ws)) {
      winograd_ = std::make_unique<WinogradConv>();
      // The tiles cover Y's map; where Y's shape is not known, X's (known:
      // winograd_applies) stands in, the same size under 'same' padding.
      const ValueType* y = ctx.output_type(0);
      const bool y_known =
          y != nullptr && y->has_shape && y->rank() == 4 && y->dims[2].is_known() && y->dims[3].is_known();
      const ValueType* map = y_known ? y : ctx.input_type(0);
      const int64_t stride = attrs_.strides.empty() ? 1 : attrs_.strides[0];
      const int64_t tile = stride == 1 ? WinogradConv::tile_for(map->dims[2].value, map->dims[3].value)
                                       : WinogradConv::strided_tile_for(ws[2], map->dims[2].value, map->dims[3].value);
      if (winograd_->init(w->data<float>(), ws[0], ws[1], ws[2], stride, tile)) {
        ctx.mark_prepacked(1);  // run() reads the transformed weights only
        return;
      }
      winograd_.reset();  // out of memory for the larger weights: the GEMM path
    }
    // The transposed product's rows of channels per position are what a
    // blocked output is made of, and what a blocked input is read as,
    // whatever the map's size.
    if (group_ == 1 && (blocked_output_ || blocked_input_ || residual_blocked_ || few_output_positions(ctx, ws))) {
      // A blocked X is read through im2row_blocked, whose k runs tap by tap,
      // each tap over the channels: W^T in that order (the same for 1x1).
      const int64_t taps = k / ws[1];
      std::vector<float> taps_major;
      if (blocked_input_ && taps > 1) {
        taps_major.resize(static_cast<size_t>(m * k));
        const float* wd = w->data<float>();
        for (int64_t o = 0; o < m; ++o)
          for (int64_t c = 0; c < ws[1]; ++c)
            for (int64_t t = 0; t < taps; ++t)
              taps_major[static_cast<size_t>(o * k + t * ws[1] + c)] = wd[o * k + c * taps + t];
      }
      packed_wt_ = pack_b(true, k, m, taps_major.empty() ? w->data<float>() : taps_major.data(), k);
      if (packed_wt_.empty()) {
        status = Status(StatusCode::kOutOfMemory, ctx.node().describe() + ": cannot allocate packed weights");
        return;
      }
      ctx.mark_prepacked(1);
      return;
    }
    // Few input channels (an image stem): the direct kernel, without the
    // residual, which it does not add.
    if (group_ == 1 && ws.rank() == 4 && !residual_ && direct_few_channels_suits(ws[1], ws[2], ws[3])) {
      packed_direct_ = pack_direct_weights(w->data<float>(), m, k);
      ctx.mark_prepacked(1);
      return;
    }
    // Depthwise 2-D (each of the M == group channels has its own filter):
    // W goes channel-interleaved, as depthwise_blocked reads it.
    if (ws.rank() == 4 && ws[1] == 1 && mg == 1) {
      packed_dw_ = pack_depthwise_weights(w->data<float>(), m, ws[2] * ws[3]);
      ctx.mark_prepacked(1);
      return;
    }
    packed_w_.reserve(static_cast<size_t>(group_));
    for (int64_t g = 0; g < group_; ++g) {
      packed_w_.push_back(pack_a(false, mg, k, w->data<float>() + g * mg * k, k));
      if (packed_w_.back().empty()) {
        status = Status(StatusCode::kOutOfMemory, ctx.node().describe() + ": cannot allocate packed weights");
        return;
      }
    }
    if (group_ == 1 && !residual_blocked_ && !output_positions_known(ctx, ws) && m * k <= kAlternateWtMaxFloats) {
      narrow_map_wt_ = pack_b(true, k, m, w->data<float>(), k);
      if (narrow_map_wt_.empty()) {
        status = Status(StatusCode::kOutOfMemory, ctx.node().describe() + ": cannot allocate packed weights");
        return;
      }
    }
    ctx.mark_prepacked(1);  // run() reads the packed copy only
  }

  bool prepares() const override { return true; }

  // Plans the GEMMs of the path run() takes for these shapes (the same
  // choices, from the same helpers). Shapes run() refuses get no plans.
  Result<std::unique_ptr<KernelState>> prepare(const KernelContext& ctx) const override {
    auto state = std::make_unique<GemmState>();
    const Shape& xs = ctx.input(0)->shape();
    const Shape& ws = ctx.input(1)->shape();
    if (xs.rank() < 3 || ws.rank() != xs.rank() || group_ <= 0 || xs[1] != ws[1] * group_ || ws[0] % group_ != 0)
      return std::unique_ptr<KernelState>(std::move(state));
    WindowGeometry g;
    if (!compute_window_geometry(ctx, attrs_, ws.dims().subspan(2), xs.dims().subspan(2), g).ok() || g.out_size() <= 0)
      return std::unique_ptr<KernelState>(std::move(state));
    ThreadPool& pool = ctx.thread_pool();
    const int64_t M = ws[0], mg = M / group_, out_size = g.out_size();
    const int64_t K = xs[1] / group_ * g.kernel_size();
    const bool depthwise = g.rank == 2 && group_ == xs[1] && M == xs[1];
    GemmPlans& plans = state->plans;
    if (!packed_wt_.empty()) {
      plans.add(out_size, M, K, &pool, true, false);
      if (transposed_rows_only(out_size)) plans.add(out_size, M, K, &pool, true, true);
    } else if (!packed_direct_.empty()) {
      // The direct kernel runs no GEMM.
    } else if (winograd_ != nullptr) {
      if (g.rank == 2) winograd_->plan(g.out[0], g.out[1], pool, plans);
    } else if (takes_narrow_map_path(out_size, xs[1] / group_ * g.kernel_size(), M)) {
      plans.add(out_size, M, K, &pool, true, false);
    } else if (!depthwise) {
      const int64_t chunk = gemm_chunk(out_size, K, is_pointwise(g));
      plans.add(mg, chunk, K, &pool);
      plans.add(mg, last_chunk(out_size, chunk), K, &pool);
    }
    return std::unique_ptr<KernelState>(std::move(state));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor* b = ctx.input(2);
    const Shape& xs = x.shape();
    const Shape& ws = w.shape();
    if (xs.rank() < 3 || ws.rank() != xs.rank())
      return kernel_error(ctx, "X " + xs.to_string() + " and W " + ws.to_string() +
                                   " must have the same rank, at least 3 (N, C, spatial...)");
    const int64_t N = xs[0], C = xs[1], M = ws[0];
    if (C != ws[1] * group_ || M % group_ != 0)
      return kernel_error(ctx, "X has " + std::to_string(C) + " channels and W is " + ws.to_string() + " with group " +
                                   std::to_string(group_) + "; expected C == W[1] * group and W[0] % group == 0");
    if (b != nullptr && (b->shape().rank() != 1 || b->shape()[0] != M))
      return kernel_error(ctx, "B must be [" + std::to_string(M) + "]; got " + b->shape().to_string());
    const std::span<const int64_t> kernel = ws.dims().subspan(2);
    if (!attrs_.kernel_shape.empty() && !std::equal(kernel.begin(), kernel.end(), attrs_.kernel_shape.begin(),
                                                    attrs_.kernel_shape.end()))
      return kernel_error(ctx, "kernel_shape does not match W " + ws.to_string());
    WindowGeometry g;
    SY_RETURN_IF_ERROR(compute_window_geometry(ctx, attrs_, kernel, xs.dims().subspan(2), g));
    Shape ys;
    ys.push_back(N);
    ys.push_back(M);
    for (int i = 0; i < g.rank; ++i) ys.push_back(g.out[i]);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat, ys));
    if (y->num_elements() == 0) return ok_status();

    const Tensor* z = nullptr;
    if (residual_) {
      z = ctx.input(3);
      if (z == nullptr || z->dtype() != DataType::kFloat || z->shape() != ys)
        return kernel_error(ctx, "the residual input 3 must be float " + ys.to_string() + " like Y; got " +
                                     (z == nullptr ? std::string("nothing") : z->shape().to_string()));
    }
    const float* bias = b != nullptr ? b->data<float>() : nullptr;
    const float* xd = x.data<float>();
    const float* wd = w.data<float>();
    float* yd = y->data<float>();
    ThreadPool& pool = ctx.thread_pool();
    const int64_t cg = C / group_, mg = M / group_;
    const int64_t in_size = g.in_size(), out_size = g.out_size();
    const int64_t K = cg * g.kernel_size();
    const bool pointwise = is_pointwise(g);

    // The transposed product adds the residual and applies the activation as
    // it stores Y. Winograd and depthwise store Y without the residual; with
    // one, they run without the activation, and residual and activation
    // follow in one pass. The plain GEMM path below adds it in its epilogue
    // instead.
    const bool depthwise = g.rank == 2 && group_ == C && M == C;
    // Blocked sides run on the paths that read and write them: depthwise,
    // Winograd and the transposed product (set up at creation for them).
    const bool blocked_path = depthwise || winograd_ != nullptr || !packed_wt_.empty();
    if (blocked_input_ && !((blocked_path || (group_ == 1 && pointwise)) && g.rank == 2 && C % kLayoutBlock == 0))
      return kernel_error(ctx, std::string(kInputLayoutAttr) + " " + kNchw16c +
                                   " is for a 2-D Conv over whole blocks of " + std::to_string(kLayoutBlock) +
                                   " channels, depthwise or group 1 with a constant W; X is " + xs.to_string());
    if (blocked_output_ && !(blocked_path && g.rank == 2))
      return kernel_error(ctx, std::string(kOutputLayoutAttr) + " " + kNchw16c +
                                   " does not fit this Conv's X " + xs.to_string());
    if (!packed_wt_.empty()) {
      if (packed_wt_.rows() != K || packed_wt_.cols() != M || group_ != 1)
        return kernel_error(ctx, "W " + ws.to_string() + " does not fit the weights prepared at creation");
      return run_transposed(ctx, packed_wt_, xd, bias, z != nullptr ? z->data<float>() : nullptr, yd, N, C, M, K, g,
                            pointwise);
    }
    if (takes_narrow_map_path(out_size, K, M) && !blocked_input_ && !blocked_output_)
      return run_transposed(ctx, narrow_map_wt_, xd, bias, z != nullptr ? z->data<float>() : nullptr, yd, N, C, M, K,
                            g, pointwise);
    if (!packed_direct_.empty()) {
      if (g.rank != 2 || group_ != 1 || z != nullptr ||
          static_cast<int64_t>(packed_direct_.size()) !=
              (M + kDirectCoBlock - 1) / kDirectCoBlock * kDirectCoBlock * K)
        return kernel_error(ctx, "W " + ws.to_string() + " does not fit the weights prepared at creation");
      return run_direct(ctx, xd, bias, yd, N, C, M, g);
    }
    if (winograd_ != nullptr || depthwise) {
      GemmEpilogue ep = activation_;
      if (z != nullptr) ep.activation = GemmActivation::kNone;
      ep.bias = bias;
      if (winograd_ != nullptr) {
        if (g.rank != 2 || C != winograd_->in_channels() || M != winograd_->out_channels())
          return kernel_error(ctx, "X " + xs.to_string() + " does not fit the weights prepared at creation");
        const GemmPlans& plans = gemm_plans(ctx);
        const size_t ws_bytes = winograd_->workspace_size(g.out[0], g.out[1], pool, plans);
        SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(ws_bytes));
        for (int64_t n = 0; n < N; ++n)
          winograd_->run(xd + n * C * in_size, g.in[0], g.in[1], yd + n * M * out_size, g.out[0], g.out[1],
                         g.pad_begin[0], g.pad_begin[1], ep, plans, scratch, pool, blocked_input_, blocked_output_);
      } else {
        SY_RETURN_IF_ERROR(run_depthwise(ctx, xd, wd, yd, N, C, g, ep));
      }
      if (z != nullptr && residual_blocked_ && !blocked_output_) {
        add_blocked_residual(yd, z->data<float>(), N, M, out_size, activation_, pool);
      } else if (z != nullptr) {
        add_residual(yd, z->data<float>(), y->num_elements(), activation_, pool);
      }
      return ok_status();
    }

    GemmEpilogue ep = activation_;
    if (blocked_input_) ep.b_block_stride = in_size * kLayoutBlock;  // pointwise, group 1: X read from NCHW16c
    // The residual goes in with the bias; one computed in place (z is Y's
    // buffer) is accumulated onto instead.
    const float* zd = z != nullptr && z->data<float>() != yd ? z->data<float>() : nullptr;
    const float beta = z != nullptr && zd == nullptr ? 1.0f : 0.0f;
    const bool packed = !packed_w_.empty() && packed_w_[0].rows() == mg && packed_w_[0].cols() == K;

    const int64_t chunk = gemm_chunk(out_size, K, pointwise);
    // A plan, and workspace, for each chunk width used.
    const GemmPlan chunk_plan = gemm_plans(ctx).get(mg, chunk, K, &pool);
    const GemmPlan last_plan = gemm_plans(ctx).get(mg, last_chunk(out_size, chunk), K, &pool);
    const size_t gemm_ws = std::max(chunk_plan.workspace_bytes, last_plan.workspace_bytes);
    const size_t col_bytes = pointwise ? 0 : KernelContext::scratch_align(static_cast<size_t>(K * chunk) * sizeof(float));
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(col_bytes + gemm_ws));
    float* col = static_cast<float*>(scratch);
    void* ws_gemm = static_cast<char*>(scratch) + col_bytes;

    for (int64_t n = 0; n < N; ++n) {
      for (int64_t gi = 0; gi < group_; ++gi) {
        const float* xg = xd + (n * C + gi * cg) * in_size;
        float* yg = yd + (n * M + gi * mg) * out_size;
        const float* zg = zd != nullptr ? zd + (n * M + gi * mg) * out_size : nullptr;
        ep.bias = bias != nullptr ? bias + gi * mg : nullptr;
        ep.bias_per_row = true;
        for (int64_t p0 = 0; p0 < out_size; p0 += chunk) {
          const int64_t cols = std::min(chunk, out_size - p0);
          ep.residual = zg != nullptr ? zg + p0 : nullptr;
          const float* bmat = xg;
          int64_t ldb = in_size;
          if (blocked_input_) {
            bmat = xg + p0 * kLayoutBlock;  // column p0 of X in NCHW16c
          } else if (!pointwise) {
            im2col(xg, cg, g, p0, p0 + cols, col, cols, &pool);
            bmat = col;
            ldb = cols;
          }
          const GemmPlan& plan = cols == chunk ? chunk_plan : last_plan;
          if (packed) {
            sgemm_packed_a(plan, packed_w_[static_cast<size_t>(gi)], false, mg, cols, K, 1.0f, bmat, ldb, beta,
                           yg + p0, out_size, &pool, ws_gemm, ep);
          } else {
            sgemm(plan, false, false, mg, cols, K, 1.0f, wd + gi * mg * K, K, bmat, ldb, beta, yg + p0, out_size, &pool,
                  ws_gemm, ep);
          }
        }
      }
    }
    return ok_status();
  }

 private:
  // A 1x1 window at stride 1 without padding: X is the GEMM's B as it is.
  static bool is_pointwise(const WindowGeometry& g) {
    bool pointwise = g.no_padding();
    for (int i = 0; i < g.rank; ++i) pointwise = pointwise && g.kernel[i] == 1 && g.stride[i] == 1;
    return pointwise;
  }
  // The GEMM path's columns per product: all positions (pointwise), or as
  // many as keep the im2col columns within kColumnBudgetFloats.
  static int64_t gemm_chunk(int64_t out_size, int64_t K, bool pointwise) {
    if (pointwise) return out_size;
    return std::min(out_size, std::max<int64_t>(64, kColumnBudgetFloats / std::max<int64_t>(K, 1) / 64 * 64));
  }
  static int64_t last_chunk(int64_t out_size, int64_t chunk) { return out_size % chunk == 0 ? chunk : out_size % chunk; }
  // The transposed product's blocked stores split by position among the
  // threads for maps this large (blocked_layout.h's kSpatialSplitPositions).
  static bool transposed_rows_only(int64_t out_size) { return out_size >= kSpatialSplitPositions; }

  WindowAttributes attrs_;
  GemmEpilogue activation_;
  int64_t group_ = 1;
  // 3x3 stride 1, or 7x7 or 3x3 stride 2 (WinogradConv::strided_worthwhile),
  // with a constant W and known, large enough maps.
  bool winograd_applies(const KernelCreateContext& ctx, const Shape& ws) const {
    if (ws.rank() != 4 || ws[2] != ws[3] || group_ != 1) return false;
    for (int64_t d : attrs_.dilations)
      if (d != 1) return false;
    const ValueType* x = ctx.input_type(0);
    if (x == nullptr || !x->has_shape || x->rank() != 4 || !x->dims[2].is_known() || !x->dims[3].is_known())
      return false;
    const int64_t stride = attrs_.strides.empty() ? 1 : attrs_.strides[0];
    for (int64_t s : attrs_.strides)
      if (s != stride) return false;
    if (stride == 1) return ws[2] == 3 && WinogradConv::worthwhile(ws[1], ws[0], x->dims[2].value, x->dims[3].value);
    const ValueType* y = ctx.output_type(0);
    if (stride != 2 || y == nullptr || !y->has_shape || y->rank() != 4 || !y->dims[2].is_known() ||
        !y->dims[3].is_known())
      return false;
    return WinogradConv::strided_worthwhile(ws[1], ws[0], ws[2], y->dims[2].value, y->dims[3].value);
  }

  // Whether the output map's size is known at creation.
  static bool output_positions_known(const KernelCreateContext& ctx, const Shape& ws) {
    const ValueType* y = ctx.output_type(0);
    if (y == nullptr || !y->has_shape || y->rank() != ws.rank()) return false;
    for (size_t d = 2; d < y->rank(); ++d)
      if (!y->dims[d].is_known()) return false;
    return true;
  }

  // Whether run() takes the transposed product with narrow_map_wt_ for a
  // map of `positions` (and W^T of K x M).
  bool takes_narrow_map_path(int64_t positions, int64_t K, int64_t M) const {
    return !narrow_map_wt_.empty() && positions < kNarrowMapPositions && narrow_map_wt_.rows() == K &&
           narrow_map_wt_.cols() == M;
  }

  // Whether the output map is known at creation and small enough for the
  // transposed product.
  bool few_output_positions(const KernelCreateContext& ctx, const Shape& ws) const {
    const ValueType* y = ctx.output_type(0);
    if (y == nullptr || !y->has_shape || y->rank() != ws.rank()) return false;
    int64_t positions = 1;
    for (size_t d = 2; d < y->rank(); ++d) {
      if (!y->dims[d].is_known()) return false;
      positions *= y->dims[d].value;
    }
    return positions > 0 && positions < kTransposedMaxPositions;
  }

  // Y^T = columns^T . W^T for each image (group 1). Each block of Y^T goes
  // into place (transposed, plus the residual z and the activation) as soon
  // as the GEMM has it, while it is still in cache.
  Status run_transposed(KernelContext& ctx, const PackedMatrix& wt, const float* xd, const float* bias, const float* zd,
                        float* yd, int64_t N, int64_t C, int64_t M, int64_t K, const WindowGeometry& g,
                        bool pointwise) const {
    ThreadPool& pool = ctx.thread_pool();
    const int64_t in_size = g.in_size(), out_size = g.out_size();
    const size_t col_bytes = pointwise ? 0 : KernelContext::scratch_align(static_cast<size_t>(K * out_size) * sizeof(float));
    // A blocked output is stored by the GEMM itself, with its bias and clamp.
    const size_t yt_bytes =
        blocked_output_ ? 0 : KernelContext::scratch_align(static_cast<size_t>(out_size * M) * sizeof(float));
    // Blocked stores may split by rows only; the transposing store does not.
    const bool rows_only = transposed_rows_only(out_size);
    const GemmPlan plan = gemm_plans(ctx).get(out_size, M, K, &pool, true, false);
    const GemmPlan blocked_plan = rows_only ? gemm_plans(ctx).get(out_size, M, K, &pool, true, true) : plan;
    const size_t gemm_ws = std::max(plan.workspace_bytes, blocked_plan.workspace_bytes);
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(col_bytes + yt_bytes + gemm_ws));
    float* col = static_cast<float*>(scratch);
    float* yt = reinterpret_cast<float*>(static_cast<char*>(scratch) + col_bytes);
    void* ws_gemm = static_cast<char*>(scratch) + col_bytes + yt_bytes;
    struct Store {
      TransposeStoreArgs args;  // the whole of Y^T -> Y for this image
      static void block(void* self, int64_t r0, int64_t rows, int64_t c0, int64_t cols) {
        TransposeStoreArgs a = static_cast<const Store*>(self)->args;
        a.src += r0 * a.ld_src + c0;
        a.dst += c0 * a.ld_dst + r0;
        if (a.residual != nullptr) a.residual += c0 * a.ld_dst + r0;
        a.rows = rows;
        a.cols = cols;
        transpose_store_f32(a);
      }
    } store;
    store.args.src = yt;
    store.args.ld_src = M;
    store.args.ld_dst = out_size;
    store.args.clamp = activation_clamp(activation_, &store.args.lo, &store.args.hi);
    GemmEpilogue ep;  // bias only: the residual and activation follow it in the store
    ep.bias = bias;
    ep.bias_per_row = false;  // Y^T's columns are the output channels
    if (blocked_input_ && pointwise) ep.a_block_stride = in_size * kLayoutBlock;  // X^T read from NCHW16c
    ep.block_done = &Store::block;
    ep.block_done_context = &store;
    GemmEpilogue blocked = activation_;
    blocked.bias = bias;
    blocked.c_block_stride = out_size * kLayoutBlock;
    blocked.a_block_stride = ep.a_block_stride;
    // Blocked maps of many positions split by position among the threads
    // (blocked_layout.h's kSpatialSplitPositions).
    blocked.split_rows_only = rows_only;
    for (int64_t n = 0; n < N; ++n) {
      // A: X^T itself (pointwise), rows of a blocked X's windows (read in
      // place, k contiguous), or NCHW im2col columns (packed transposed).
      const float* xn = xd + n * C * in_size;
      const float* a = xn;
      bool a_trans = !blocked_input_;
      int64_t lda = out_size;
      if (!pointwise && blocked_input_) {
        im2row_blocked(xn, C, g, col, &pool);
        a = col;
        lda = K;
      } else if (!pointwise) {
        im2col(xn, C, g, 0, out_size, col, out_size, &pool);
        a = col;
      }
      if (blocked_output_) {
        // The residual, blocked like Y, goes in with the bias; one computed
        // in place (z is Y's buffer) is accumulated onto instead.
        float* yn = yd + n * M * out_size;
        const float* zn = zd != nullptr ? zd + n * M * out_size : nullptr;
        blocked.residual = zn != yn ? zn : nullptr;
        sgemm_packed_b(blocked_plan, a_trans, out_size, M, K, 1.0f, a, lda, wt,
                       zn == yn && zn != nullptr ? 1.0f : 0.0f, yn, 0, &pool, ws_gemm, blocked);
        continue;
      }
      if (residual_blocked_ && zd != nullptr) {
        // Y leaves the blocked region but its residual is blocked: Y blocked
        // into the scratch first, then to NCHW (a region's last Conv only).
        blocked.residual = zd + n * M * out_size;
        sgemm_packed_b(blocked_plan, a_trans, out_size, M, K, 1.0f, a, lda, wt, 0.0f, yt, 0, &pool, ws_gemm,
                       blocked);
        unblock_channels(yt, M, out_size, yd + n * M * out_size, pool);
        continue;
      }
      store.args.dst = yd + n * M * out_size;
      store.args.residual = zd != nullptr ? zd + n * M * out_size : nullptr;
      sgemm_packed_b(plan, a_trans, out_size, M, K, 1.0f, a, lda, wt, 0.0f, yt, M, &pool, ws_gemm, ep);
    }
    return ok_status();
  }

  // Few input channels, group 1, 2-D: W packed at creation.
  Status run_direct(KernelContext& ctx, const float* xd, const float* bias, float* yd, int64_t N, int64_t C, int64_t M,
                    const WindowGeometry& g) const {
    DirectConvShape s{window_2d(g)};
    s.C = C;
    s.M = M;
    float lo = 0.0f, hi = 0.0f;
    activation_clamp(activation_, &lo, &hi);
    ThreadPool& pool = ctx.thread_pool();
    SY_ASSIGN_OR_RETURN(void* scratch,
                        ctx.scratch(static_cast<size_t>(direct_few_channels_scratch_floats(s)) * sizeof(float)));
    for (int64_t n = 0; n < N; ++n)
      direct_few_channels(s, xd + n * C * g.in_size(), packed_direct_.data(), bias, lo, hi,
                          yd + n * M * g.out_size(), static_cast<float*>(scratch), pool);
    return ok_status();
  }

  // Depthwise 2-D: W packed here when it was not a constant at creation.
  Status run_depthwise(KernelContext& ctx, const float* xd, const float* wd, float* yd, int64_t N, int64_t C,
                       const WindowGeometry& g, const GemmEpilogue& ep) const {
    DepthwiseShape s{window_2d(g)};
    s.N = N;
    s.C = C;
    const int64_t taps = s.kh * s.kw;
    const bool prepacked = static_cast<int64_t>(packed_dw_.size()) == packed_depthwise_weights_size(C, taps);
    ThreadPool& pool = ctx.thread_pool();
    const size_t w_bytes =
        prepacked ? 0 : KernelContext::scratch_align(static_cast<size_t>(packed_depthwise_weights_size(C, taps)) * sizeof(float));
    const size_t work_bytes = static_cast<size_t>(depthwise_blocked_scratch_floats(s, pool)) * sizeof(float);
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(w_bytes + work_bytes));
    const float* packed = packed_dw_.data();
    if (!prepacked) {
      pack_depthwise_weights_into(wd, C, taps, static_cast<float*>(scratch));
      packed = static_cast<const float*>(scratch);
    }
    float lo = 0.0f, hi = 0.0f;
    activation_clamp(ep, &lo, &hi);
    s.x_blocked16 = blocked_input_;
    s.y_blocked16 = blocked_output_;
    depthwise_blocked(s, xd, packed, ep.bias, lo, hi, yd,
                      reinterpret_cast<float*>(static_cast<char*>(scratch) + w_bytes), pool);
    return ok_status();
  }

  // y = act(y + z) for y in NCHW and z in NCHW16c: a blocked region's last
  // Conv, when Winograd or the depthwise kernel stored y.
  static void add_blocked_residual(float* y, const float* z, int64_t N, int64_t M, int64_t positions,
                                   const GemmEpilogue& act, ThreadPool& pool) {
    pool.parallel_for(N * M, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t nc = c0; nc < c1; ++nc) {
        const int64_t n = nc / M, c = nc % M;
        float* yc = y + nc * positions;
        const float* zc = z + (n * M + c / kLayoutBlock * kLayoutBlock) * positions + c % kLayoutBlock;
        for (int64_t p = 0; p < positions; ++p) yc[p] += zc[p * kLayoutBlock];
        apply_activation(yc, positions, act);
      }
    });
  }

  // One image's C channels of `positions` each from NCHW16c to NCHW.
  static void unblock_channels(const float* x, int64_t C, int64_t positions, float* dst, ThreadPool& pool) {
    pool.parallel_for(C / kLayoutBlock, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        transpose_f32(x + b * positions * kLayoutBlock, kLayoutBlock, positions, kLayoutBlock,
                      dst + b * kLayoutBlock * positions, positions);
    });
  }

  // y = act(y + z) over n floats, for the paths that store Y without the
  // residual.
  static void add_residual(float* y, const float* z, int64_t n, const GemmEpilogue& act, ThreadPool& pool) {
    pool.parallel_for(n, 16384, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) y[i] += z[i];
      apply_activation(y + i0, i1 - i0, act);
    });
  }

  // Whether layout attribute `name` is NCHW16c; NCHW, its default, is the
  // other value known.
  static Result<bool> read_layout(const KernelCreateContext& ctx, const char* name) {
    const std::string layout = ctx.node().attr_string(name, kLayoutNchw);
    if (layout == kLayoutNchw) return false;
    if (layout != kNchw16c)
      return ctx.error(std::string(name) + " must be \"" + kLayoutNchw + "\" or \"" + kNchw16c + "\"; got \"" +
                       layout + "\"");
    return true;
  }

  // FusedConv's output_layout / input_layout / residual_layout
  // (conv/blocked_layout.h).
  Status read_layouts(const KernelCreateContext& ctx) {
    SY_ASSIGN_OR_RETURN(blocked_output_, read_layout(ctx, kOutputLayoutAttr));
    SY_ASSIGN_OR_RETURN(blocked_input_, read_layout(ctx, kInputLayoutAttr));
    SY_ASSIGN_OR_RETURN(residual_blocked_, read_layout(ctx, kResidualLayoutAttr));
    if (residual_blocked_ && !residual_) return ctx.error(std::string(kResidualLayoutAttr) + " is set but there is no residual");
    if (residual_ && blocked_output_ && !residual_blocked_)
      return ctx.error(std::string(kOutputLayoutAttr) + " needs the residual in " + kNchw16c + " too (" +
                       kResidualLayoutAttr + ")");
    return ok_status();
  }

  bool residual_ = false;               // FusedConv's input 3 is added before the activation
  bool blocked_output_ = false;         // Y is written in NCHW16c
  bool residual_blocked_ = false;       // the residual arrives in NCHW16c (always, when Y is blocked)
  bool blocked_input_ = false;          // X arrives in NCHW16c
  std::vector<PackedMatrix> packed_w_;  // one per group
  PackedMatrix packed_wt_;              // W^T [K x M] for the transposed product
  PackedMatrix narrow_map_wt_;          // W^T as well, for narrow maps of a size unknown at creation
  std::vector<float> packed_dw_;        // depthwise W, channel-interleaved
  std::vector<float> packed_direct_;    // few-channel W, in blocks of output channels
  std::unique_ptr<WinogradConv> winograd_;
};

const KernelDef kConvKernels[] = {
    {"", "Conv", 1, kLatestVersion, 0, type_bit(DataType::kFloat), &make_kernel<ConvKernel>},
    {kSwitchyardDomain, kFusedConvOp, 1, kLatestVersion, 0, type_bit(DataType::kFloat), &make_kernel<ConvKernel>},
};

}  // namespace

std::span<const KernelDef> conv_kernels() { return kConvKernels; }

}  // namespace sy::cpu
