#include "providers/cpu/conv/conv_util.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "providers/cpu/conv/blocked_layout.h"

namespace sy::cpu {

std::string ints_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

namespace {

// n / stride for n >= 0, without a division for strides 1 and 2: a 64-bit
// division costs tens of cycles, and im2col of a small map with many
// channels does little else per row.
int64_t divide_by_stride(int64_t n, int64_t stride) {
  if (stride == 1) return n;
  if (stride == 2) return n >> 1;
  return n / stride;
}

// The first output index o >= 0 with o * stride + offset >= 0, and one past
// the last with o * stride + offset < size.
void valid_range(int64_t offset, int64_t stride, int64_t size, int64_t& lo, int64_t& hi) {
  lo = offset >= 0 ? 0 : divide_by_stride(-offset + stride - 1, stride);
  hi = size - 1 - offset < 0 ? 0 : divide_by_stride(size - 1 - offset, stride) + 1;
}

void im2col_2d(const float* x, int64_t channels, const WindowGeometry& g, int64_t p0, int64_t p1, float* col,
               int64_t ld, ThreadPool* pool) {
  const int64_t H = g.in[0], W = g.in[1], OW = g.out[1];
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  const int64_t sh = g.stride[0], sw = g.stride[1];
  const int64_t rows = channels * kh * kw;
  // Where the positions start, the same for every row.
  const int64_t oh0 = p0 / OW;
  const int64_t ow0 = p0 % OW;
  auto body = [&](int64_t rb, int64_t re) {
    // Row r is tap (ki, kj) of channel c; divided out once per chunk and
    // then counted, since a small map leaves little other work per row.
    int64_t c = rb / (kh * kw);
    int64_t ki = (rb / kw) % kh;
    int64_t kj = rb % kw;
    for (int64_t r = rb; r < re; ++r, ++kj) {
      if (kj == kw) {
        kj = 0;
        if (++ki == kh) {
          ki = 0;
          ++c;
        }
      }
      const float* xc = x + c * H * W;
      float* dst = col + r * ld;
      const int64_t row_off = ki * g.dilation[0] - g.pad_begin[0];
      const int64_t col_off = kj * g.dilation[1] - g.pad_begin[1];
      int64_t lo, hi;
      valid_range(col_off, sw, W, lo, hi);
      int64_t p = p0;
      int64_t oh = oh0;
      int64_t ow = ow0;
      while (p < p1) {
        const int64_t n = std::min(OW - ow, p1 - p);
        const int64_t ih = oh * sh + row_off;
        if (ih < 0 || ih >= H) {
          std::fill(dst, dst + n, 0.0f);
        } else {
          const float* xrow = xc + ih * W;
          const int64_t a = std::clamp(lo, ow, ow + n);
          const int64_t b = std::clamp(hi, a, ow + n);
          // Most segments have no padding: no fill calls there.
          if (a > ow) std::fill(dst, dst + (a - ow), 0.0f);
          if (sw == 1) {
            std::copy(xrow + a + col_off, xrow + b + col_off, dst + (a - ow));
          } else if (sw == 2) {
            // A constant stride lets the compiler vectorise the gather
            // (stride-2 stems and downsampling convs spend most of their
            // im2col time here).
            const float* src = xrow + col_off;
            float* out = dst - ow;
            for (int64_t o = a; o < b; ++o) out[o] = src[2 * o];
          } else {
            for (int64_t o = a; o < b; ++o) dst[o - ow] = xrow[o * sw + col_off];
          }
          if (b < ow + n) std::fill(dst + (b - ow), dst + n, 0.0f);
        }
        dst += n;
        p += n;
        ow = 0;
        ++oh;
      }
    }
  };
  const int64_t per_row = std::max<int64_t>(1, p1 - p0);
  if (pool == nullptr) {
    body(0, rows);
  } else {
    pool->parallel_for(rows, std::max<int64_t>(1, 32768 / per_row), body);
  }
}

void im2col_nd(const float* x, int64_t channels, const WindowGeometry& g, int64_t p0, int64_t p1, float* col,
               int64_t ld, ThreadPool* pool) {
  const int rank = g.rank;
  const int64_t ksize = g.kernel_size();
  const int64_t in_size = g.in_size();
  const int64_t rows = channels * ksize;
  auto body = [&](int64_t rb, int64_t re) {
    for (int64_t r = rb; r < re; ++r) {
      const float* xc = x + (r / ksize) * in_size;
      int64_t koff[kMaxSpatialDims];
      for (int64_t rem = r % ksize, d = rank - 1; d >= 0; --d) {
        koff[d] = (rem % g.kernel[d]) * g.dilation[d] - g.pad_begin[d];
        rem /= g.kernel[d];
      }
      int64_t o[kMaxSpatialDims];
      for (int64_t rem = p0, d = rank - 1; d >= 0; --d) {
        o[d] = rem % g.out[d];
        rem /= g.out[d];
      }
      float* dst = col + r * ld;
      for (int64_t p = p0; p < p1; ++p) {
        int64_t idx = 0;
        bool inside = true;
        for (int d = 0; d < rank; ++d) {
          const int64_t i = o[d] * g.stride[d] + koff[d];
          inside = inside && i >= 0 && i < g.in[d];
          idx = idx * g.in[d] + i;
        }
        dst[p - p0] = inside ? xc[idx] : 0.0f;
        for (int d = rank - 1; d >= 0; --d) {
          if (++o[d] < g.out[d]) break;
          o[d] = 0;
        }
      }
    }
  };
  const int64_t per_row = std::max<int64_t>(1, (p1 - p0) * rank);
  if (pool == nullptr) {
    body(0, rows);
  } else {
    pool->parallel_for(rows, std::max<int64_t>(1, 32768 / per_row), body);
  }
}

}  // namespace

Status read_window_attributes(const KernelCreateContext& ctx, bool kernel_required, bool has_ceil_mode,
                              WindowAttributes& out) {
  const Node& n = ctx.node();
  const std::string pad = n.attr_string("auto_pad", "NOTSET");
  if (!parse_auto_pad(pad, out.auto_pad)) {
    return ctx.error("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID; got \"" + pad + "\"");
  }
  out.kernel_shape = n.attr_ints("kernel_shape");
  out.strides = n.attr_ints("strides");
  out.dilations = n.attr_ints("dilations");
  out.pads = n.attr_ints("pads");
  out.ceil_mode = has_ceil_mode && n.attr_int("ceil_mode", 0) != 0;
  if (kernel_required && out.kernel_shape.empty()) return ctx.error("attribute kernel_shape is required");
  const size_t rank = out.kernel_shape.size();
  if (rank > static_cast<size_t>(kMaxSpatialDims))
    return ctx.error("at most " + std::to_string(kMaxSpatialDims) + " spatial dims are supported; kernel_shape is " +
                     ints_string(out.kernel_shape));
  for (int64_t k : out.kernel_shape)
    if (k <= 0) return ctx.error("kernel_shape must be positive; got " + ints_string(out.kernel_shape));
  for (int64_t s : out.strides)
    if (s <= 0) return ctx.error("strides must be positive; got " + ints_string(out.strides));
  for (int64_t d : out.dilations)
    if (d <= 0) return ctx.error("dilations must be positive; got " + ints_string(out.dilations));
  for (int64_t p : out.pads)
    if (p < 0) return ctx.error("pads must be >= 0; got " + ints_string(out.pads));
  if (rank > 0) {
    if (!out.strides.empty() && out.strides.size() != rank)
      return ctx.error("strides " + ints_string(out.strides) + " must have one value per kernel dim " +
                       ints_string(out.kernel_shape));
    if (!out.dilations.empty() && out.dilations.size() != rank)
      return ctx.error("dilations " + ints_string(out.dilations) + " must have one value per kernel dim " +
                       ints_string(out.kernel_shape));
    if (!out.pads.empty() && out.pads.size() != 2 * rank)
      return ctx.error("pads " + ints_string(out.pads) + " must have two values per kernel dim " +
                       ints_string(out.kernel_shape));
  }
  return ok_status();
}

int64_t WindowGeometry::in_size() const {
  int64_t s = 1;
  for (int i = 0; i < rank; ++i) s *= in[i];
  return s;
}
int64_t WindowGeometry::out_size() const {
  int64_t s = 1;
  for (int i = 0; i < rank; ++i) s *= out[i];
  return s;
}
int64_t WindowGeometry::kernel_size() const {
  int64_t s = 1;
  for (int i = 0; i < rank; ++i) s *= kernel[i];
  return s;
}
bool WindowGeometry::no_padding() const {
  for (int i = 0; i < rank; ++i)
    if (pad_begin[i] != 0 || pad_end[i] != 0) return false;
  return true;
}

Status compute_window_geometry(const KernelContext& ctx, const WindowAttributes& attrs,
                               std::span<const int64_t> kernel, std::span<const int64_t> in, WindowGeometry& g) {
  const size_t rank = in.size();
  if (kernel.empty()) kernel = attrs.kernel_shape;
  if (rank == 0 || rank > static_cast<size_t>(kMaxSpatialDims))
    return kernel_error(ctx, "the input needs 1 to " + std::to_string(kMaxSpatialDims) + " spatial dims; got " +
                                 std::to_string(rank));
  if (kernel.size() != rank)
    return kernel_error(ctx, "the kernel has " + std::to_string(kernel.size()) + " dims but the input has " +
                                 std::to_string(rank) + " spatial dims");
  if ((!attrs.strides.empty() && attrs.strides.size() != rank) ||
      (!attrs.dilations.empty() && attrs.dilations.size() != rank) ||
      (!attrs.pads.empty() && attrs.pads.size() != 2 * rank))
    return kernel_error(ctx, "strides, dilations or pads do not match the " + std::to_string(rank) +
                                 " spatial dims of the input");
  g.rank = static_cast<int>(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t k = kernel[i];
    const int64_t s = attrs.strides.empty() ? 1 : attrs.strides[i];
    const int64_t d = attrs.dilations.empty() ? 1 : attrs.dilations[i];
    g.in[i] = in[i];
    g.kernel[i] = k;
    g.stride[i] = s;
    g.dilation[i] = d;
    WindowDim w;
    const std::string error = window_dim(static_cast<int>(i), in[i], k, s, d, attrs.auto_pad,
                                         attrs.pads.empty() ? 0 : attrs.pads[i],
                                         attrs.pads.empty() ? 0 : attrs.pads[i + rank], attrs.ceil_mode, w);
    if (!error.empty()) return kernel_error(ctx, error);
    g.out[i] = w.out;
    g.pad_begin[i] = w.pad_begin;
    g.pad_end[i] = w.pad_end;
  }
  return ok_status();
}

void im2col(const float* x, int64_t channels, const WindowGeometry& g, int64_t p0, int64_t p1, float* col, int64_t ld,
            ThreadPool* pool) {
  if (g.rank == 2) {
    im2col_2d(x, channels, g, p0, p1, col, ld, pool);
  } else if (g.rank == 1) {
    // A 1-D window is a 2-D one over a single row.
    WindowGeometry g2;
    g2.rank = 2;
    g2.in[0] = g2.out[0] = g2.kernel[0] = g2.stride[0] = g2.dilation[0] = 1;
    g2.in[1] = g.in[0];
    g2.out[1] = g.out[0];
    g2.kernel[1] = g.kernel[0];
    g2.stride[1] = g.stride[0];
    g2.dilation[1] = g.dilation[0];
    g2.pad_begin[1] = g.pad_begin[0];
    g2.pad_end[1] = g.pad_end[0];
    im2col_2d(x, channels, g2, p0, p1, col, ld, pool);
  } else {
    im2col_nd(x, channels, g, p0, p1, col, ld, pool);
  }
}

void im2row_blocked(const float* x, int64_t channels, const WindowGeometry& g, float* rows, ThreadPool* pool) {
  const int64_t H = g.in[0], W = g.in[1], OH = g.out[0], OW = g.out[1];
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  const int64_t K = channels * kh * kw;
  const int64_t plane = H * W * kLayoutBlock;  // floats between channel blocks
  auto body = [&](int64_t r0, int64_t r1) {
    for (int64_t oh = r0; oh < r1; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        float* dst = rows + (oh * OW + ow) * K;
        for (int64_t i = 0; i < kh; ++i) {
          const int64_t ih = oh * g.stride[0] + i * g.dilation[0] - g.pad_begin[0];
          for (int64_t j = 0; j < kw; ++j, dst += channels) {
            const int64_t iw = ow * g.stride[1] + j * g.dilation[1] - g.pad_begin[1];
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) {
              std::fill(dst, dst + channels, 0.0f);
              continue;
            }
            const float* src = x + (ih * W + iw) * kLayoutBlock;
            for (int64_t c = 0; c < channels; c += kLayoutBlock)
              std::memcpy(dst + c, src + c / kLayoutBlock * plane, kLayoutBlock * sizeof(float));
          }
        }
      }
    }
  };
  if (pool != nullptr) {
    pool->parallel_for(OH, 1, body);
  } else {
    body(0, OH);
  }
}

}  // namespace sy::cpu
