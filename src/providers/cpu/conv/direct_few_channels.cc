// The portable few-channel direct convolution, the run-time choice among the
// variants, weight packing, the phase rows and the split of output rows over
// the threads (see direct_few_channels.h).
#include "providers/cpu/conv/direct_few_channels.h"

#include <algorithm>
#include <cstdint>

#include "core/cpu_features.h"
#include "providers/cpu/simd/vec_portable.h"

namespace sy::cpu {
namespace direct_detail {
namespace portable {

using Vec = simd_portable::Vec;

#include "providers/cpu/conv/direct_few_channels_body.h"

}  // namespace portable

void direct_row_portable(const DirectRowArgs& a) { portable::direct_row<portable::Vec>(a); }

}  // namespace direct_detail

namespace {

struct Variant {
  int lanes;
  void (*row)(const DirectRowArgs&);
};

const Variant& best_variant() {
  static const Variant best =
      pick_for_cpu(Variant{16, &direct_detail::direct_row_avx512}, Variant{8, &direct_detail::direct_row_avx2},
                   Variant{1, &direct_detail::direct_row_portable});
  return best;
}

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Where the phase rows put each kernel column: input column
// ow * stride_w + kw * dilation_w - pad_left is phase `phase` of the row at
// index ow + offset (offset may be negative; `margin` zeros come first).
struct PhaseLayout {
  int64_t margin = 0, row_len = 0;
  int64_t phase[kDirectMaxKernelW] = {}, offset[kDirectMaxKernelW] = {};
};

PhaseLayout phase_layout(const DirectConvShape& s, int lanes) {
  PhaseLayout p;
  int64_t min_off = 0, max_off = 0;
  for (int64_t kw = 0; kw < s.kw; ++kw) {
    const int64_t q = kw * s.dilation_w - s.pad_left;
    const int64_t ph = ((q % s.stride_w) + s.stride_w) % s.stride_w;
    p.phase[kw] = ph;
    p.offset[kw] = (q - ph) / s.stride_w;
    min_off = std::min(min_off, p.offset[kw]);
    max_off = std::max(max_off, p.offset[kw]);
  }
  p.margin = -min_off;
  // Whole vectors past OW are read (and not stored): they must be in the row.
  p.row_len = round_up(p.margin + max_off + round_up(s.OW, lanes), lanes);
  return p;
}

}  // namespace

bool direct_few_channels_suits(int64_t C, int64_t kh, int64_t kw) {
  // A 1x1 conv over 16 to 64 channels (MobileNet's expansions) is a GEMM
  // with K = C, which the packed GEMM runs near peak; this kernel is for
  // image inputs.
  return C > 0 && C <= kDirectMaxChannels && kh > 0 && kw > 0 && kw <= kDirectMaxKernelW &&
         C * kh * kw <= kDirectMaxTaps;
}

std::vector<float> pack_direct_weights(const float* w, int64_t M, int64_t K) {
  const int64_t blocks = (M + kDirectCoBlock - 1) / kDirectCoBlock;
  std::vector<float> packed(static_cast<size_t>(blocks * K * kDirectCoBlock), 0.0f);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k)
      packed[static_cast<size_t>(((m / kDirectCoBlock) * K + k) * kDirectCoBlock + m % kDirectCoBlock)] = w[m * K + k];
  return packed;
}

int64_t direct_detail::scratch_floats(const DirectConvShape& s, int lanes) {
  return s.C * s.H * s.stride_w * phase_layout(s, lanes).row_len;
}

int64_t direct_few_channels_scratch_floats(const DirectConvShape& s) {
  return direct_detail::scratch_floats(s, best_variant().lanes);
}

void direct_few_channels(const DirectConvShape& s, const float* x, const float* packed_w, const float* bias, float lo,
                         float hi, float* y, float* scratch, ThreadPool& pool) {
  const Variant& v = best_variant();
  direct_detail::run(v.row, v.lanes, s, x, packed_w, bias, lo, hi, y, scratch, pool);
}

void direct_detail::run(void (*row)(const DirectRowArgs&), int lanes, const DirectConvShape& s, const float* x,
                        const float* packed_w, const float* bias, float lo, float hi, float* y, float* scratch,
                        ThreadPool& pool) {
  const PhaseLayout p = phase_layout(s, lanes);
  // 1. The phase rows of every input row.
  pool.parallel_for(s.C * s.H, 8, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* src = x + r * s.W;
      for (int64_t ph = 0; ph < s.stride_w; ++ph) {
        // dst[margin + t] = src[t * stride_w + ph] where that is inside the
        // row; zeros around it.
        float* dst = scratch + (r * s.stride_w + ph) * p.row_len;
        const int64_t inside = ph < s.W ? (s.W - 1 - ph) / s.stride_w + 1 : 0;
        const int64_t end = std::min(p.row_len, p.margin + inside);
        std::fill(dst, dst + p.margin, 0.0f);
        const float* from = src + ph;
        if (s.stride_w == 1) {
          std::copy(from, from + (end - p.margin), dst + p.margin);
        } else {
          for (int64_t j = p.margin; j < end; ++j) dst[j] = from[(j - p.margin) * s.stride_w];
        }
        std::fill(dst + end, dst + p.row_len, 0.0f);
      }
    }
  });
  // 2. The output rows.
  DirectRowArgs args;
  args.s = s;
  args.phases = scratch;
  args.row_len = p.row_len;
  for (int64_t kw = 0; kw < s.kw; ++kw) args.tap_start[kw] = p.phase[kw] * p.row_len + p.margin + p.offset[kw];
  args.w = packed_w;
  args.bias = bias;
  args.lo = lo;
  args.hi = hi;
  args.y = y;
  pool.parallel_for(s.OH, 1, [&](int64_t begin, int64_t end) {
    DirectRowArgs a = args;
    for (int64_t oh = begin; oh < end; ++oh) {
      a.oh = oh;
      row(a);
    }
  });
}

}  // namespace sy::cpu
