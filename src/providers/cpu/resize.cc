// Resize (10, 11, 13, 18, 19) and the deprecated Upsample (7, 9): one engine.
//
// Every output coordinate maps back to a source coordinate along each axis
// independently (the coordinate_transformation_mode), so the work is
// separable: per resized axis a table of source indices and weights, built
// once per run in scratch memory, then
//  - nearest: a gather. The per-axis tables hold element offsets, so each
//    output row is one base offset plus a table lookup per element; it moves
//    elements by size and so serves every type, strings included.
//  - linear / cubic (with antialias, exclude_outside, cubic_coeff_a): one
//    pass per resized axis, each a weighted sum of `taps` source rows. For an
//    NCHW image that is a gather along W followed by a vectorized row blend
//    along H; the axis that shrinks most goes first, so the intermediate
//    buffer stays small. Passes accumulate in float (double for double and
//    32/64-bit integers); integers are rounded and saturated on the way out.
//
// The numbers follow the ONNX reference implementation where the spec text
// is ambiguous: with scales, the fractional output length scale * in is
// what align_corners and tf_crop_and_resize divide by, and the output
// length is floor(in * scale) (the roi does not shrink it).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/checked_math.h"
#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

constexpr int kMaxResizeRank = 16;
// Antialiasing widens the filter by 1 / scale; this bounds the shrink
// factor (about 1000x) rather than the stack.
constexpr int kMaxTaps = 4096;

enum class Interp { kNearest, kLinear, kCubic };
enum class Coord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
// kSimple is the rule of Upsample and Resize-10: truncate when growing,
// ceil when shrinking.
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };
enum class Policy { kStretch, kNotLarger, kNotSmaller };

struct AxisPlan {
  int64_t in = 1;
  int64_t out = 1;
  double scale = 1.0;
  double roi_start = 0.0;
  double roi_end = 1.0;
  bool identity = true;
  int taps = 1;  // source elements per output element (linear / cubic)
};

struct ResizePlan {
  int rank = 0;
  AxisPlan axes[kMaxResizeRank];
  Shape out_shape;
};

// Accumulator of the linear / cubic passes.
template <typename T>
using AccOf = std::conditional_t<std::is_same_v<T, double> || (std::is_integral_v<T> && sizeof(T) >= 4), double, float>;

template <typename Acc, typename T>
inline Acc to_acc(T v) {
  return static_cast<Acc>(load(v));
}

template <typename T, typename Acc>
inline T from_acc(Acc v) {
  if constexpr (std::is_same_v<T, Acc>) {
    return v;
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else if constexpr (kIsHalf<T>) {
    return store<T>(static_cast<float>(v));
  } else {
    // Round to nearest and saturate: a blend of integers stays in range.
    const Acc r = std::nearbyint(v);
    constexpr Acc kLo = static_cast<Acc>(std::numeric_limits<T>::lowest());
    constexpr Acc kHi = static_cast<Acc>(std::numeric_limits<T>::max());
    if (!(r > kLo)) return std::numeric_limits<T>::lowest();
    if (r >= kHi) return std::numeric_limits<T>::max();
    return static_cast<T>(r);
  }
}

// A run of output elements along the innermost axis: each a blend of
// `taps` (kTaps when known at compile time) elements of the source row.
template <int kTaps, typename Src, typename Dst, typename Acc>
void blend_row(const Src* s, Dst* d, int64_t count, const int64_t* idx, const Acc* w, int taps, Dst fill) {
  const int n = kTaps > 0 ? kTaps : taps;
  for (int64_t j = 0; j < count; ++j) {
    const int64_t* ix = idx + j * n;
    const Acc* wj = w + j * n;
    if (ix[0] < 0) {
      d[j] = fill;
      continue;
    }
    Acc acc = 0;
    for (int t = 0; t < n; ++t) acc += wj[t] * to_acc<Acc>(s[ix[t]]);
    d[j] = from_acc<Dst>(acc);
  }
}

// One pass of linear / cubic resizing along one axis: the data is viewed as
// [outer, in_k, inner] -> [outer, out_k, inner]. idx/w hold `taps` source
// indices and weights per output index; idx < 0 marks extrapolation.
template <typename Src, typename Dst, typename Acc>
void resize_pass(const Src* src, Dst* dst, int64_t outer, int64_t in_k, int64_t out_k, int64_t inner,
                 const int64_t* idx, const Acc* w, int taps, Acc extrapolation, ThreadPool& pool) {
  constexpr int64_t kBlock = 64;
  const Dst fill = from_acc<Dst>(extrapolation);
  if (inner == 1) {
    // The innermost axis: a gather-and-blend along each row.
    const int64_t chunk = std::max<int64_t>(1, kCheapChunk / std::max<int64_t>(1, out_k * taps));
    parallel_range(pool, outer, chunk, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const Src* s = src + o * in_k;
        Dst* d = dst + o * out_k;
        if (taps == 2) {
          blend_row<2>(s, d, out_k, idx, w, taps, fill);
        } else if (taps == 4) {
          blend_row<4>(s, d, out_k, idx, w, taps, fill);
        } else {
          blend_row<0>(s, d, out_k, idx, w, taps, fill);
        }
      }
    });
    return;
  }
  // An outer axis: each output row is a weighted sum of whole source rows.
  const int64_t items = outer * out_k;
  const int64_t chunk = std::max<int64_t>(1, kCheapChunk / std::max<int64_t>(1, inner * taps));
  parallel_range(pool, items, chunk, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / out_k;
      const int64_t j = item - o * out_k;
      const int64_t* ix = idx + j * taps;
      const Acc* wj = w + j * taps;
      Dst* d = dst + item * inner;
      if (ix[0] < 0) {
        std::fill(d, d + inner, fill);
        continue;
      }
      const Src* s = src + o * in_k * inner;
      for (int64_t i0 = 0; i0 < inner; i0 += kBlock) {
        const int64_t len = std::min(kBlock, inner - i0);
        Acc acc[kBlock];
        std::fill(acc, acc + len, Acc(0));
        for (int t = 0; t < taps; ++t) {
          const Src* row = s + ix[t] * inner + i0;
          const Acc wt = wj[t];
          for (int64_t i = 0; i < len; ++i) acc[i] += wt * to_acc<Acc>(row[i]);
        }
        for (int64_t i = 0; i < len; ++i) d[i0 + i] = from_acc<Dst>(acc[i]);
      }
    }
  });
}

// Nearest: each output row (all axes but the last fixed) starts at the sum
// of the per-axis offsets; offsets < 0 mark extrapolation.
template <typename E>
void nearest_gather(const E* src, E* dst, const ResizePlan& plan, const int64_t* const* offsets, const E& fill,
                    ThreadPool& pool) {
  const int r = plan.rank;
  const int64_t inner = plan.out_shape[static_cast<size_t>(r - 1)];
  const int64_t rows = plan.out_shape.num_elements() / inner;
  const int64_t* last = offsets[r - 1];
  pool.parallel_for(rows, rows_per_chunk(inner, sizeof(E)), [&](int64_t begin, int64_t end) {
    int64_t index[kMaxResizeRank] = {};
    int64_t rem = begin;
    for (int k = r - 2; k >= 0; --k) {
      index[k] = rem % plan.axes[k].out;
      rem /= plan.axes[k].out;
    }
    for (int64_t row = begin; row < end; ++row) {
      int64_t base = 0;
      bool outside = false;
      for (int k = 0; k < r - 1; ++k) {
        const int64_t o = offsets[k][index[k]];
        outside = outside || o < 0;
        base += o;
      }
      E* d = dst + row * inner;
      if (outside) {
        std::fill(d, d + inner, fill);
      } else {
        const E* s = src + base;
        for (int64_t x = 0; x < inner; ++x) d[x] = last[x] < 0 ? fill : s[last[x]];
      }
      for (int k = r - 2; k >= 0; --k) {
        if (++index[k] < plan.axes[k].out) break;
        index[k] = 0;
      }
    }
  });
}

// extrapolation_value as an element of `dtype`, in `bytes` (16 of them).
void encode_fill(DataType dtype, float v, unsigned char* bytes) {
  std::memset(bytes, 0, 16);
  auto put = [&](auto x) { std::memcpy(bytes, &x, sizeof(x)); };
  switch (dtype) {
    case DataType::kFloat: put(v); break;
    case DataType::kDouble: put(static_cast<double>(v)); break;
    case DataType::kFloat16: put(Float16{float_to_float16(v)}); break;
    case DataType::kBfloat16: put(BFloat16{float_to_bfloat16(v)}); break;
    case DataType::kInt8: put(from_acc<int8_t>(v)); break;
    case DataType::kUint8: put(from_acc<uint8_t>(v)); break;
    case DataType::kInt16: put(from_acc<int16_t>(v)); break;
    case DataType::kUint16: put(from_acc<uint16_t>(v)); break;
    case DataType::kInt32: put(from_acc<int32_t>(static_cast<double>(v))); break;
    case DataType::kUint32: put(from_acc<uint32_t>(static_cast<double>(v))); break;
    case DataType::kInt64: put(from_acc<int64_t>(static_cast<double>(v))); break;
    case DataType::kUint64: put(from_acc<uint64_t>(static_cast<double>(v))); break;
    case DataType::kBool: put(static_cast<uint8_t>(v != 0.0f)); break;
    case DataType::kComplex64: put(v); break;
    case DataType::kComplex128: put(static_cast<double>(v)); break;
    default: break;
  }
}

constexpr auto align64 = KernelContext::scratch_align;

class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& n = ctx.node();
    const int v = ctx.opset();
    const bool upsample = n.op_type == "Upsample";
    legacy_ = upsample || v < 11;
    if (legacy_) {
      if (upsample && v < 9) {
        scales_attr_ = n.attr_floats("scales");
        if (!n.has_attr("scales")) {
          status = ctx.error("attribute 'scales' is required");
          return;
        }
      } else {
        scales_input_ = 1;
      }
    } else {
      roi_input_ = 1;
      scales_input_ = 2;
      sizes_input_ = 3;
    }
    const std::string mode = n.attr_string("mode", "nearest");
    if (mode == "nearest") {
      interp_ = Interp::kNearest;
    } else if (mode == "linear" || (legacy_ && mode == "bilinear")) {
      interp_ = Interp::kLinear;
    } else if (mode == "cubic" && !legacy_) {
      interp_ = Interp::kCubic;
    } else {
      status = ctx.error("mode '" + mode + "' is not supported (expected " +
                         (legacy_ ? "'nearest' or 'linear'" : "'nearest', 'linear' or 'cubic'") + ")");
      return;
    }
    if (legacy_) {
      coord_ = Coord::kAsymmetric;
      nearest_ = Nearest::kSimple;
      return;
    }
    const std::string coord = n.attr_string("coordinate_transformation_mode", "half_pixel");
    if (coord == "half_pixel") {
      coord_ = Coord::kHalfPixel;
    } else if (coord == "half_pixel_symmetric" && v >= 19) {
      coord_ = Coord::kHalfPixelSymmetric;
    } else if (coord == "pytorch_half_pixel") {
      coord_ = Coord::kPytorchHalfPixel;
    } else if (coord == "align_corners") {
      coord_ = Coord::kAlignCorners;
    } else if (coord == "asymmetric") {
      coord_ = Coord::kAsymmetric;
    } else if (coord == "tf_half_pixel_for_nn" && v < 13) {
      coord_ = Coord::kTfHalfPixelForNn;
    } else if (coord == "tf_crop_and_resize") {
      coord_ = Coord::kTfCropAndResize;
    } else {
      status = ctx.error("coordinate_transformation_mode '" + coord + "' is not supported at opset " +
                         std::to_string(v));
      return;
    }
    const std::string nearest = n.attr_string("nearest_mode", "round_prefer_floor");
    if (nearest == "round_prefer_floor") {
      nearest_ = Nearest::kRoundPreferFloor;
    } else if (nearest == "round_prefer_ceil") {
      nearest_ = Nearest::kRoundPreferCeil;
    } else if (nearest == "floor") {
      nearest_ = Nearest::kFloor;
    } else if (nearest == "ceil") {
      nearest_ = Nearest::kCeil;
    } else {
      status = ctx.error("nearest_mode '" + nearest +
                         "' is not supported (expected 'round_prefer_floor', 'round_prefer_ceil', 'floor' or 'ceil')");
      return;
    }
    cubic_a_ = n.attr_float("cubic_coeff_a", -0.75f);
    exclude_outside_ = n.attr_int("exclude_outside", 0) != 0;
    extrapolation_ = n.attr_float("extrapolation_value", 0.0f);
    if (v >= 18) {
      antialias_ = n.attr_int("antialias", 0) != 0;
      axes_ = n.attr_ints("axes");
      const std::string policy = n.attr_string("keep_aspect_ratio_policy", "stretch");
      if (policy == "stretch") {
        policy_ = Policy::kStretch;
      } else if (policy == "not_larger") {
        policy_ = Policy::kNotLarger;
      } else if (policy == "not_smaller") {
        policy_ = Policy::kNotSmaller;
      } else {
        status = ctx.error("keep_aspect_ratio_policy '" + policy +
                           "' is not supported (expected 'stretch', 'not_larger' or 'not_smaller')");
        return;
      }
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    ResizePlan plan;
    SY_RETURN_IF_ERROR(make_plan(ctx, x, plan));
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), plan.out_shape));
    if (y->num_elements() == 0) return ok_status();
    bool all_identity = true;
    for (int k = 0; k < plan.rank; ++k) all_identity = all_identity && plan.axes[k].identity;
    if (all_identity) {
      copy_tensor_data(x, *y, ctx.thread_pool());
      return ok_status();
    }
    if (interp_ == Interp::kNearest) return run_nearest(ctx, x, *y, plan);
    Status status;
    const bool numeric = visit_type(NumericTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      status = run_interp<T>(ctx, x, *y, plan);
    });
    if (!numeric)
      return kernel_error(ctx, "mode '" + std::string(interp_ == Interp::kLinear ? "linear" : "cubic") +
                                   "' needs a numeric input; got " + x.describe());
    return status;
  }

 private:
  Status make_plan(const KernelContext& ctx, const Tensor& x, ResizePlan& plan) const {
    const Shape& xs = x.shape();
    const auto r = static_cast<int64_t>(xs.rank());
    if (r > kMaxResizeRank)
      return kernel_error(ctx, "X " + x.describe() + " has rank " + std::to_string(r) + "; at most " +
                                   std::to_string(kMaxResizeRank) + " is supported");
    plan.rank = static_cast<int>(r);
    for (int64_t k = 0; k < r; ++k) {
      plan.axes[k].in = xs[static_cast<size_t>(k)];
      plan.axes[k].out = plan.axes[k].in;
    }
    int64_t axes[kMaxResizeRank];
    int64_t naxes = 0;
    if (axes_.empty()) {
      for (int64_t k = 0; k < r; ++k) axes[naxes++] = k;
    } else {
      if (static_cast<int64_t>(axes_.size()) > r)
        return kernel_error(ctx, "axes has " + std::to_string(axes_.size()) + " entries but X " + x.describe() +
                                     " has rank " + std::to_string(r));
      bool seen[kMaxResizeRank] = {};
      for (int64_t a : axes_) {
        if (!normalize_axis(a, r))
          return kernel_error(ctx, "axis " + std::to_string(a) + " is out of range for X " + x.describe());
        if (seen[a]) return kernel_error(ctx, "axes repeat axis " + std::to_string(a));
        seen[a] = true;
        axes[naxes++] = a;
      }
    }

    // scales or sizes.
    const Tensor* scales = scales_input_ >= 0 ? ctx.input(static_cast<size_t>(scales_input_)) : nullptr;
    const Tensor* sizes = sizes_input_ >= 0 ? ctx.input(static_cast<size_t>(sizes_input_)) : nullptr;
    const bool has_scales = !scales_attr_.empty() || (scales != nullptr && scales->num_elements() > 0);
    const bool has_sizes = sizes != nullptr && sizes->num_elements() > 0;
    if (has_scales && has_sizes)
      return kernel_error(ctx, "only one of 'scales' and 'sizes' may be given; got scales " + scales->describe() +
                                   " and sizes " + sizes->describe());
    if (!has_scales && !has_sizes) return kernel_error(ctx, "one of 'scales' and 'sizes' must be given");
    const int64_t count = !scales_attr_.empty() ? static_cast<int64_t>(scales_attr_.size())
                          : has_scales          ? scales->num_elements()
                                                : sizes->num_elements();
    if (count != naxes)
      return kernel_error(ctx, std::string(has_scales ? "scales" : "sizes") + " has " + std::to_string(count) +
                                   " values, expected " + std::to_string(naxes) + " (the rank of X " + x.describe() +
                                   (axes_.empty() ? "" : " or the number of axes") + ")");
    if (has_scales) {
      if (scales != nullptr && scales->dtype() != DataType::kFloat && scales->dtype() != DataType::kDouble)
        return kernel_error(ctx, "scales must be float; got " + scales->describe());
      for (int64_t i = 0; i < naxes; ++i) {
        const double s = scales_attr_.empty() ? number_at(*scales, i) : scales_attr_[static_cast<size_t>(i)];
        if (!(s > 0.0) || !std::isfinite(s))
          return kernel_error(ctx, "scales must be positive and finite; got " + std::to_string(s) + " at position " +
                                       std::to_string(i));
        AxisPlan& a = plan.axes[axes[i]];
        a.scale = s;
        SY_RETURN_IF_ERROR(output_length(ctx, x, axes[i], std::floor(s * static_cast<double>(a.in)), a.out));
      }
    } else {
      if (sizes->dtype() != DataType::kInt64 && sizes->dtype() != DataType::kInt32)
        return kernel_error(ctx, "sizes must be int64; got " + sizes->describe());
      double common = policy_ == Policy::kNotLarger ? std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t i = 0; i < naxes; ++i) {
        const int64_t size = int_element(*sizes, i);
        AxisPlan& a = plan.axes[axes[i]];
        if (size < 0) return kernel_error(ctx, "sizes must not be negative; got " + std::to_string(size));
        if (a.in == 0 && size != 0)
          return kernel_error(ctx, "cannot resize axis " + std::to_string(axes[i]) + " of X " + x.describe() +
                                       ", which is empty, to " + std::to_string(size));
        a.out = size;
        a.scale = a.in == 0 ? 1.0 : static_cast<double>(size) / static_cast<double>(a.in);
        common = policy_ == Policy::kNotLarger ? std::min(common, a.scale) : std::max(common, a.scale);
      }
      if (policy_ != Policy::kStretch) {
        for (int64_t i = 0; i < naxes; ++i) {
          AxisPlan& a = plan.axes[axes[i]];
          a.scale = common;
          SY_RETURN_IF_ERROR(output_length(ctx, x, axes[i], common * static_cast<double>(a.in) + 0.5, a.out));
        }
      }
    }

    if (coord_ == Coord::kTfCropAndResize) {
      const Tensor* roi = roi_input_ >= 0 ? ctx.input(static_cast<size_t>(roi_input_)) : nullptr;
      if (roi == nullptr || roi->num_elements() != 2 * naxes)
        return kernel_error(ctx, "tf_crop_and_resize needs roi with " + std::to_string(2 * naxes) + " values; got " +
                                     (roi == nullptr ? std::string("none") : roi->describe()));
      for (int64_t i = 0; i < naxes; ++i) {
        plan.axes[axes[i]].roi_start = number_at(*roi, i);
        plan.axes[axes[i]].roi_end = number_at(*roi, naxes + i);
        // A NaN roi would give NaN source coordinates, which no bounds check
        // catches before they are converted to indices.
        if (!std::isfinite(plan.axes[axes[i]].roi_start) || !std::isfinite(plan.axes[axes[i]].roi_end))
          return kernel_invalid_argument(ctx, "roi " + roi->describe() + " must be finite; axis " +
                                                  std::to_string(axes[i]) + " has [" +
                                                  std::to_string(plan.axes[axes[i]].roi_start) + ", " +
                                                  std::to_string(plan.axes[axes[i]].roi_end) + "]");
      }
    }

    plan.out_shape.resize(static_cast<size_t>(r));
    for (int64_t k = 0; k < r; ++k) plan.out_shape[static_cast<size_t>(k)] = plan.axes[k].out;
    int64_t out_count = 0;
    if (Status st = checked_element_count(plan.out_shape.dims(), out_count); !st.ok())
      return kernel_invalid_argument(ctx, "resizing X " + x.describe() + " gives output " + st.message());
    for (int64_t k = 0; k < r; ++k) {
      AxisPlan& a = plan.axes[k];
      // An axis maps every output index to itself exactly when the lengths
      // and the scale are 1:1 and the mode adds no shift.
      a.identity = a.out == a.in && a.scale * static_cast<double>(a.in) == static_cast<double>(a.in) &&
                   coord_ != Coord::kTfHalfPixelForNn &&
                   (coord_ != Coord::kTfCropAndResize || (a.roi_start == 0.0 && a.roi_end == 1.0));
      if (!a.identity && a.out > 0 && a.in == 0)
        return kernel_error(ctx, "cannot resize axis " + std::to_string(k) + " of X " + x.describe() +
                                     ", which is empty, to " + std::to_string(a.out));
      a.taps = taps_for(a.scale);
      if (!a.identity && a.taps > kMaxTaps)
        return kernel_error(ctx, "antialiasing axis " + std::to_string(k) + " by scale " + std::to_string(a.scale) +
                                     " needs " + std::to_string(a.taps) + " taps per output element, more than " +
                                     std::to_string(kMaxTaps));
    }
    return ok_status();
  }

  // An output length computed in double (scale * input length), checked
  // before the conversion to int64, which is undefined for NaN, infinity or
  // anything out of range.
  static Status output_length(const KernelContext& ctx, const Tensor& x, int64_t axis, double length, int64_t& out) {
    if (length >= 0.0 && length < 9.2e18) {
      out = static_cast<int64_t>(length);
      return ok_status();
    }
    return kernel_invalid_argument(ctx, "axis " + std::to_string(axis) + " of X " + x.describe() +
                                            " would have " + std::to_string(length) +
                                            " output elements, which is not a valid dimension");
  }

  int taps_for(double scale) const {
    if (interp_ == Interp::kNearest) return 1;
    const int support = interp_ == Interp::kLinear ? 1 : 2;
    if (!antialias_ || scale >= 1.0) return 2 * support;
    const double start = std::floor(-support / scale) + 1;
    // A tiny scale needs more taps than an int holds; anything over the
    // limit is refused by the caller, so no conversion is attempted.
    if (start < -kMaxTaps) return kMaxTaps + 1;
    return static_cast<int>(2 - 2 * static_cast<int64_t>(start));
  }

  // The source coordinate of output index j along an axis.
  double source_coord(const AxisPlan& a, int64_t j) const {
    const double in = static_cast<double>(a.in);
    const double out_w = a.scale * in;
    const auto jd = static_cast<double>(j);
    switch (coord_) {
      case Coord::kHalfPixel:
        return (jd + 0.5) / a.scale - 0.5;
      case Coord::kHalfPixelSymmetric: {
        const double adjustment = static_cast<double>(a.out) / out_w;
        const double offset = in / 2.0 * (1.0 - adjustment);
        return offset + (jd + 0.5) / a.scale - 0.5;
      }
      case Coord::kPytorchHalfPixel:
        return a.out > 1 ? (jd + 0.5) / a.scale - 0.5 : 0.0;
      case Coord::kAlignCorners:
        return out_w == 1.0 ? 0.0 : jd * (in - 1.0) / (out_w - 1.0);
      case Coord::kAsymmetric:
        return jd / a.scale;
      case Coord::kTfHalfPixelForNn:
        return (jd + 0.5) / a.scale;
      case Coord::kTfCropAndResize:
        if (out_w == 1.0) return 0.5 * (a.roi_start + a.roi_end) * (in - 1.0);
        return a.roi_start * (in - 1.0) + jd * (a.roi_end - a.roi_start) * (in - 1.0) / (out_w - 1.0);
    }
    return 0.0;
  }

  bool outside(const AxisPlan& a, double xo) const {
    return coord_ == Coord::kTfCropAndResize && (xo < 0.0 || xo > static_cast<double>(a.in - 1));
  }

  int64_t nearest_index(const AxisPlan& a, double xo) const {
    const double f = std::floor(xo);
    double pick = f;
    switch (nearest_) {
      case Nearest::kRoundPreferFloor: pick = xo - f <= 0.5 ? f : f + 1.0; break;
      case Nearest::kRoundPreferCeil: pick = xo - f < 0.5 ? f : f + 1.0; break;
      case Nearest::kFloor: pick = f; break;
      case Nearest::kCeil: pick = std::ceil(xo); break;
      case Nearest::kSimple: pick = a.scale < 1.0 ? std::ceil(xo) : std::trunc(xo); break;
    }
    const double hi = static_cast<double>(a.in - 1);
    return static_cast<int64_t>(std::clamp(pick, 0.0, hi));
  }

  // Weights of taps at offsets start .. start + n - 1 from floor(xo), for
  // the fraction `ratio` in (0, 1].
  void coefficients(const AxisPlan& a, double ratio, int n, double* w) const {
    const double A = cubic_a_;
    if (!antialias_ || a.scale >= 1.0) {
      if (interp_ == Interp::kLinear) {
        w[0] = 1.0 - ratio;
        w[1] = ratio;
      } else {
        const double r1 = ratio + 1.0;
        const double q = 1.0 - ratio;
        const double q1 = q + 1.0;
        w[0] = ((A * r1 - 5.0 * A) * r1 + 8.0 * A) * r1 - 4.0 * A;
        w[1] = ((A + 2.0) * ratio - (A + 3.0)) * ratio * ratio + 1.0;
        w[2] = ((A + 2.0) * q - (A + 3.0)) * q * q + 1.0;
        w[3] = ((A * q1 - 5.0 * A) * q1 + 8.0 * A) * q1 - 4.0 * A;
      }
      if (!antialias_) return;
    } else {
      // The filter stretched by 1 / scale, so every source element under
      // an output element's footprint contributes.
      const double s = a.scale;
      const int start = 1 - n / 2;
      for (int i = 0; i < n; ++i) {
        const double t = std::abs(s * (static_cast<double>(start + i) - ratio));
        if (interp_ == Interp::kLinear) {
          w[i] = std::max(0.0, 1.0 - t);
        } else if (t <= 1.0) {
          w[i] = ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0;
        } else if (t < 2.0) {
          w[i] = ((A * t - 5.0 * A) * t + 8.0 * A) * t - 4.0 * A;
        } else {
          w[i] = 0.0;
        }
      }
    }
    double sum = 0.0;
    for (int i = 0; i < n; ++i) sum += w[i];
    for (int i = 0; i < n; ++i) w[i] /= sum;
  }

  template <typename Acc>
  void build_taps(const AxisPlan& a, int64_t* idx, Acc* w) const {
    const int n = a.taps;
    const int start = 1 - n / 2;
    double c[kMaxTaps];
    for (int64_t j = 0; j < a.out; ++j) {
      int64_t* ix = idx + j * n;
      Acc* wj = w + j * n;
      const double xo = source_coord(a, j);
      if (outside(a, xo)) {
        for (int t = 0; t < n; ++t) {
          ix[t] = -1;
          wj[t] = 0;
        }
        continue;
      }
      double base = std::floor(xo);
      double ratio = xo - base;
      if (ratio == 0.0) {
        base -= 1.0;
        ratio = 1.0;
      }
      coefficients(a, ratio, n, c);
      const auto b = static_cast<int64_t>(base);
      if (exclude_outside_) {
        double sum = 0.0;
        for (int t = 0; t < n; ++t) {
          const int64_t k = b + start + t;
          if (k < 0 || k >= a.in) c[t] = 0.0;
          sum += c[t];
        }
        if (sum != 0.0)
          for (int t = 0; t < n; ++t) c[t] /= sum;
      }
      for (int t = 0; t < n; ++t) {
        ix[t] = std::clamp<int64_t>(b + start + t, 0, a.in - 1);
        wj[t] = static_cast<Acc>(c[t]);
      }
    }
  }

  Status run_nearest(KernelContext& ctx, const Tensor& x, Tensor& y, const ResizePlan& plan) const {
    const int r = plan.rank;
    size_t bytes = 0;
    for (int k = 0; k < r; ++k) bytes += align64(static_cast<size_t>(plan.axes[k].out) * sizeof(int64_t));
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(std::max<size_t>(bytes, 64)));
    const int64_t* offsets[kMaxResizeRank];
    auto* cursor = static_cast<unsigned char*>(scratch);
    int64_t stride = 1;
    for (int k = r - 1; k >= 0; --k) {
      const AxisPlan& a = plan.axes[k];
      auto* table = reinterpret_cast<int64_t*>(cursor);
      cursor += align64(static_cast<size_t>(a.out) * sizeof(int64_t));
      for (int64_t j = 0; j < a.out; ++j) {
        if (a.identity) {
          table[j] = j * stride;
          continue;
        }
        const double xo = source_coord(a, j);
        table[j] = outside(a, xo) ? -1 : nearest_index(a, xo) * stride;
      }
      offsets[k] = table;
      stride *= a.in;
    }
    alignas(16) unsigned char fill_bytes[16];
    encode_fill(x.dtype(), extrapolation_, fill_bytes);
    return dispatch_by_element(x.dtype(), [&]<typename E>() {
      E fill{};
      if constexpr (std::is_trivially_copyable_v<E>) std::memcpy(&fill, fill_bytes, sizeof(E));
      nearest_gather<E>(x.data<E>(), y.data<E>(), plan, offsets, fill, ctx.thread_pool());
      return ok_status();
    });
  }

  template <typename T>
  Status run_interp(KernelContext& ctx, const Tensor& x, Tensor& y, const ResizePlan& plan) const {
    using Acc = AccOf<T>;
    const int r = plan.rank;
    // The passes, shrinking axes first (least intermediate data), inner
    // axes first among equals.
    int order[kMaxResizeRank];
    int passes = 0;
    for (int k = r - 1; k >= 0; --k)
      if (!plan.axes[k].identity) order[passes++] = k;
    auto ratio = [&](int k) { return static_cast<double>(plan.axes[k].out) / static_cast<double>(plan.axes[k].in); };
    for (int i = 1; i < passes; ++i)
      for (int j = i; j > 0 && ratio(order[j]) < ratio(order[j - 1]); --j) std::swap(order[j], order[j - 1]);

    // Scratch: tap tables, then up to two ping-pong buffers.
    size_t bytes = 0;
    for (int p = 0; p < passes; ++p) {
      const AxisPlan& a = plan.axes[order[p]];
      const auto entries = static_cast<size_t>(a.out) * static_cast<size_t>(a.taps);
      bytes += align64(entries * sizeof(int64_t)) + align64(entries * sizeof(Acc));
    }
    int64_t dims[kMaxResizeRank];
    for (int k = 0; k < r; ++k) dims[k] = plan.axes[k].in;
    size_t buffer_elems[2] = {0, 0};
    for (int p = 0; p + 1 < passes; ++p) {
      dims[order[p]] = plan.axes[order[p]].out;
      size_t n = 1;
      for (int k = 0; k < r; ++k) n *= static_cast<size_t>(dims[k]);
      buffer_elems[p % 2] = std::max(buffer_elems[p % 2], n);
    }
    const size_t table_bytes = bytes;
    bytes += align64(buffer_elems[0] * sizeof(Acc)) + align64(buffer_elems[1] * sizeof(Acc));
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(std::max<size_t>(bytes, 64)));
    auto* base = static_cast<unsigned char*>(scratch);
    Acc* buffers[2] = {reinterpret_cast<Acc*>(base + table_bytes),
                       reinterpret_cast<Acc*>(base + table_bytes + align64(buffer_elems[0] * sizeof(Acc)))};

    unsigned char* cursor = base;
    for (int k = 0; k < r; ++k) dims[k] = plan.axes[k].in;
    const Acc extrapolation = static_cast<Acc>(extrapolation_);
    ThreadPool& pool = ctx.thread_pool();
    for (int p = 0; p < passes; ++p) {
      const int k = order[p];
      const AxisPlan& a = plan.axes[k];
      const auto entries = static_cast<size_t>(a.out) * static_cast<size_t>(a.taps);
      auto* idx = reinterpret_cast<int64_t*>(cursor);
      cursor += align64(entries * sizeof(int64_t));
      auto* w = reinterpret_cast<Acc*>(cursor);
      cursor += align64(entries * sizeof(Acc));
      build_taps<Acc>(a, idx, w);
      int64_t outer = 1, inner = 1;
      for (int i = 0; i < k; ++i) outer *= dims[i];
      for (int i = k + 1; i < r; ++i) inner *= dims[i];
      const bool first = p == 0;
      const bool last = p + 1 == passes;
      const Acc* in_acc = first ? nullptr : buffers[(p - 1) % 2];
      Acc* out_acc = last ? nullptr : buffers[p % 2];
      if (first && last) {
        resize_pass<T, T, Acc>(x.data<T>(), y.data<T>(), outer, a.in, a.out, inner, idx, w, a.taps, extrapolation,
                               pool);
      } else if (first) {
        resize_pass<T, Acc, Acc>(x.data<T>(), out_acc, outer, a.in, a.out, inner, idx, w, a.taps, extrapolation,
                                 pool);
      } else if (last) {
        resize_pass<Acc, T, Acc>(in_acc, y.data<T>(), outer, a.in, a.out, inner, idx, w, a.taps, extrapolation, pool);
      } else {
        resize_pass<Acc, Acc, Acc>(in_acc, out_acc, outer, a.in, a.out, inner, idx, w, a.taps, extrapolation, pool);
      }
      dims[k] = a.out;
    }
    return ok_status();
  }

  bool legacy_ = false;  // Upsample and Resize-10: asymmetric, simple nearest rounding
  int roi_input_ = -1;
  int scales_input_ = -1;
  int sizes_input_ = -1;
  std::vector<float> scales_attr_;  // Upsample-7
  Interp interp_ = Interp::kNearest;
  Coord coord_ = Coord::kHalfPixel;
  Nearest nearest_ = Nearest::kRoundPreferFloor;
  float cubic_a_ = -0.75f;
  bool exclude_outside_ = false;
  float extrapolation_ = 0.0f;
  bool antialias_ = false;
  std::vector<int64_t> axes_;
  Policy policy_ = Policy::kStretch;
};

constexpr uint64_t kResizeTypes = type_mask(NumericTypes{}) | type_bit(DataType::kBool) |
                                  type_bit(DataType::kString) | type_bit(DataType::kComplex64) |
                                  type_bit(DataType::kComplex128);

const KernelDef kResizeKernels[] = {
    {"", "Upsample", 7, 9, 0, kResizeTypes, &make_kernel<ResizeKernel>},
    {"", "Resize", 10, kLatestVersion, 0, kResizeTypes, &make_kernel<ResizeKernel>},
};

}  // namespace

std::span<const KernelDef> resize_kernels() { return kResizeKernels; }

}  // namespace sy::cpu
