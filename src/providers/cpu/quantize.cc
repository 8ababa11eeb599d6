// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear: every type
// and granularity of the spec (per-tensor, per-axis, blocked; integer,
// float8, float4 and 2- and 4-bit packed types).
//
// The common case, float32 to and from int8 / uint8 with a scale per tensor
// or per run of at least kSimdRun elements along the axis, goes through the
// vector loops of quantize_simd.h. Everything else takes a general path:
// the scales and zero points are decoded once into doubles in scratch
// memory, and each element is decoded, scaled and encoded in double, with
// the quotient or product rounded to the precision the spec names before
// the result is encoded. Double holds every value of every input type
// exactly, and the rounding steps match the ONNX reference (numpy) ones.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/dynamic_quantize.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/minifloat.h"
#include "providers/cpu/quantize_math.h"
#include "providers/cpu/quantize_simd.h"
#include "providers/kernel.h"
#include "schema/quantize.h"

namespace sy::cpu {
namespace {

// Runs shorter than this along the quantization axis take the general path:
// a call into the vector loop per run would cost more than it saves.
constexpr int64_t kSimdRun = 16;
// Elements per task of the general path (several per byte for packed types,
// so that no two tasks write one byte).
constexpr int64_t kGeneralGrain = 8;

// ---- element access -----------------------------------------------------------

// x of QuantizeLinear and the scales: float, float16, bfloat16, int32, float8e8m0.
double read_real(DataType t, const void* data, int64_t i) {
  switch (t) {
    case DataType::kFloat: return static_cast<const float*>(data)[i];
    case DataType::kDouble: return static_cast<const double*>(data)[i];
    case DataType::kFloat16: return float16_to_float(static_cast<const uint16_t*>(data)[i]);
    case DataType::kBfloat16:
      return std::bit_cast<float>(static_cast<uint32_t>(static_cast<const uint16_t*>(data)[i]) << 16);
    case DataType::kInt32: return static_cast<const int32_t*>(data)[i];
    case DataType::kFloat8E8M0: return e8m0_decode(static_cast<const uint8_t*>(data)[i]);
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

bool is_real_type(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBfloat16 || t == DataType::kInt32 ||
         t == DataType::kFloat8E8M0;
}

// Quantized values (x of DequantizeLinear, zero points): the integer types,
// packed ones included, and the float8 and float4 types.
double read_quant(DataType t, const void* data, int64_t i) {
  const auto* b = static_cast<const uint8_t*>(data);
  switch (t) {
    case DataType::kUint8: return b[i];
    case DataType::kInt8: return static_cast<int8_t>(b[i]);
    case DataType::kUint16: return static_cast<const uint16_t*>(data)[i];
    case DataType::kInt16: return static_cast<const int16_t*>(data)[i];
    case DataType::kInt32: return static_cast<const int32_t*>(data)[i];
    case DataType::kUint4: return read_packed(b, i, 4);
    case DataType::kUint2: return read_packed(b, i, 2);
    case DataType::kInt4: return static_cast<int32_t>(read_packed(b, i, 4) ^ 8u) - 8;  // sign-extend
    case DataType::kInt2: return static_cast<int32_t>(read_packed(b, i, 2) ^ 2u) - 2;
    case DataType::kFloat4E2M1: return mini_decode(kE2M1, read_packed(b, i, 4));
    default: break;
  }
  const MiniFormat* f = mini_format(t);
  return f != nullptr ? mini_decode(*f, b[i]) : std::numeric_limits<double>::quiet_NaN();
}

// Element i of an output of type t gets `code` (its bits, or its integer value).
void write_code(DataType t, void* data, int64_t i, uint32_t code) {
  auto* b = static_cast<uint8_t*>(data);
  if (const int bits = packed_bits(t); bits != 0) {
    write_packed(b, i, bits, code);
  } else if (element_size(t) == 2) {
    static_cast<uint16_t*>(data)[i] = static_cast<uint16_t>(code);
  } else {
    b[i] = static_cast<uint8_t>(code);
  }
}

// v rounded to the nearest value of type t, as numpy's arithmetic in t gives it.
double round_to(DataType t, double v) {
  switch (t) {
    case DataType::kFloat: return static_cast<float>(v);
    case DataType::kFloat16: return float16_to_float(float_to_float16(static_cast<float>(v)));
    case DataType::kBfloat16: return std::bit_cast<float>(static_cast<uint32_t>(float_to_bfloat16(static_cast<float>(v))) << 16);
    default: return v;
  }
}

// The type numpy computes x / scale in (the ONNX reference's arithmetic)
// when attribute precision does not name one.
DataType division_type(DataType x, DataType scale) {
  if (x == scale) return x == DataType::kInt32 ? DataType::kDouble : x;
  if (x == DataType::kInt32 || scale == DataType::kInt32) return DataType::kDouble;
  return DataType::kFloat;
}

// ---- layout ----------------------------------------------------------------------

// x as [outer, axis_dim, inner]; element (o, a, j) uses parameter
// o * s_outer + (a / block) * s_axis + j * s_inner.
struct Layout {
  int64_t axis_dim = 1;
  int64_t inner = 1;
  int64_t block = 1;
  int64_t s_outer = 0;
  int64_t s_axis = 0;
  int64_t s_inner = 0;
  QuantGranularity granularity = QuantGranularity::kPerTensor;
};

Layout make_layout(const Shape& x, const Shape& scale, const QuantParamShape& g, int64_t block_size) {
  Layout l;
  l.granularity = g.granularity;
  if (g.granularity == QuantGranularity::kPerTensor) {
    l.inner = std::max<int64_t>(1, x.num_elements());
    return l;
  }
  const auto axis = static_cast<size_t>(g.axis);
  l.axis_dim = x[axis];
  l.inner = x.size_from(axis + 1);
  if (g.granularity == QuantGranularity::kPerAxis) {
    l.s_axis = 1;
  } else {
    l.block = block_size;
    l.s_outer = scale[axis] * l.inner;
    l.s_axis = l.inner;
    l.s_inner = 1;
  }
  return l;
}

// Calls f(i, p) for the flat elements i in [begin, end) with p their parameter index.
template <typename F>
void for_each_element(const Layout& l, int64_t begin, int64_t end, F&& f) {
  if (begin >= end) return;
  int64_t j = begin % l.inner;
  const int64_t rows = begin / l.inner;
  int64_t a = rows % l.axis_dim;
  int64_t o = rows / l.axis_dim;
  for (int64_t i = begin; i < end;) {
    const int64_t base = o * l.s_outer + (a / l.block) * l.s_axis;
    const int64_t stop = std::min(end, i + (l.inner - j));
    for (; i < stop; ++i, ++j) f(i, base + j * l.s_inner);
    j = 0;
    if (++a == l.axis_dim) {
      a = 0;
      ++o;
    }
  }
}

// Runs the general path over n elements in tasks of whole bytes.
template <typename F>
void general_loop(ThreadPool& pool, const Layout& l, int64_t n, F&& f) {
  const int64_t units = (n + kGeneralGrain - 1) / kGeneralGrain;
  parallel_range(pool, units, kMathChunk / kGeneralGrain, [&](int64_t b, int64_t e) {
    for_each_element(l, b * kGeneralGrain, std::min(n, e * kGeneralGrain), f);
  });
}

// Calls run(offset, count, p) for each contiguous run of elements sharing
// parameter p (per-tensor: one run; per-axis: one per (outer, axis) row),
// spread over the pool.
template <typename F>
void for_each_run(ThreadPool& pool, const Layout& l, int64_t n, F&& run) {
  if (l.granularity == QuantGranularity::kPerTensor) {
    parallel_range(pool, n, kCheapChunk, [&](int64_t b, int64_t e) { run(b, e - b, int64_t{0}); });
    return;
  }
  const int64_t rows = n / l.inner;
  parallel_range(pool, rows, std::max<int64_t>(1, kCheapChunk / l.inner), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) run(r * l.inner, l.inner, r % l.axis_dim);
  });
}

bool simd_layout(const Layout& l) {
  return l.granularity == QuantGranularity::kPerTensor ||
         (l.granularity == QuantGranularity::kPerAxis && l.inner >= kSimdRun);
}

int32_t zero_point_at(const Tensor* zero_point, int64_t k) {
  return zero_point != nullptr ? static_cast<int32_t>(read_quant(zero_point->dtype(), zero_point->raw_data(), k)) : 0;
}

// The vector loop `fn` over every run of x sharing a scale (simd_layout).
template <typename In, typename Out>
void simd_runs(KernelContext& ctx, const Layout& layout, const Tensor& x, const Tensor& scale, const Tensor* zero_point,
               Tensor& y, void (*fn)(const In*, int64_t, float, int32_t, Out*)) {
  const auto* xd = static_cast<const In*>(x.raw_data());
  const float* sd = scale.data<float>();
  auto* yd = static_cast<Out*>(y.raw_data());
  for_each_run(ctx.thread_pool(), layout, x.num_elements(), [&](int64_t offset, int64_t count, int64_t k) {
    fn(xd + offset, count, sd[k], zero_point_at(zero_point, k), yd + offset);
  });
}

// ---- parameters -------------------------------------------------------------------

std::string input_label(const KernelCreateContext& ctx, size_t i, const char* role) {
  const ValueId id = i < ctx.node().inputs.size() ? ctx.node().inputs[i] : kNoValue;
  const std::string name = id == kNoValue ? std::string() : ctx.graph().values[static_cast<size_t>(id)].name;
  return "input " + std::to_string(i) + " '" + name + "' (" + role + ")";
}

// Attribute `name` of the versions from `since` on as a data type `accepts`
// takes, in `out`; kUndefined when it is absent or 0.
Status read_type_attr(const KernelCreateContext& ctx, const char* name, int since, bool (*accepts)(DataType),
                      const char* expected, DataType& out) {
  const int64_t v = ctx.opset() >= since ? ctx.node().attr_int(name, 0) : 0;
  out = DataType::kUndefined;
  if (v == 0) return ok_status();
  if (!is_valid_data_type(static_cast<int32_t>(v)) || !accepts(static_cast<DataType>(v)))
    return ctx.error("attribute " + std::string(name) + " is " + std::to_string(v) + "; it must be " + expected);
  out = static_cast<DataType>(v);
  return ok_status();
}

// What QuantizeLinear and DequantizeLinear share: the attributes on the
// scale's layout and the inputs' names for messages.
struct QuantAttrs {
  int64_t axis = 1;
  int64_t block_size = 0;
  std::string scale_label;
  std::string zero_point_label;

  Status read(const KernelCreateContext& ctx, const char* scale_role, const char* zero_point_role) {
    axis = ctx.opset() >= 13 ? ctx.node().attr_int("axis", 1) : 1;
    block_size = ctx.opset() >= 21 ? ctx.node().attr_int("block_size", 0) : 0;
    if (block_size < 0)
      return ctx.error("attribute block_size is " + std::to_string(block_size) + "; it must be 0 or positive");
    scale_label = input_label(ctx, 1, scale_role);
    zero_point_label = input_label(ctx, 2, zero_point_role);
    return ok_status();
  }

  // The layout of x's elements over the scale's, or an error naming the
  // node and the input at fault.
  Status layout(const KernelContext& ctx, const Tensor& x, const Tensor& scale, const Tensor* zero_point,
                Layout& out) const {
    if (zero_point != nullptr) {
      const std::string problem =
          check_zero_point_shape(scale.shape().dims(), zero_point->shape().dims(), scale_label, zero_point_label);
      if (!problem.empty()) return kernel_invalid_argument(ctx, problem);
    }
    QuantParamShape g;
    const std::string problem =
        check_quant_scale_shape(x.shape().dims(), scale.shape().dims(), axis, block_size, scale_label, g);
    if (!problem.empty()) return kernel_invalid_argument(ctx, problem);
    out = make_layout(x.shape(), scale.shape(), g, block_size);
    return ok_status();
  }
};

// The scales and zero points decoded into doubles in scratch memory.
struct Params {
  const double* scale = nullptr;
  const double* zero_point = nullptr;
};

Result<Params> decode_params(KernelContext& ctx, const Tensor& scale, const Tensor* zero_point) {
  const int64_t count = scale.num_elements();
  const size_t bytes = KernelContext::scratch_align(static_cast<size_t>(count) * sizeof(double));
  SY_ASSIGN_OR_RETURN(void* memory, ctx.scratch(2 * bytes));
  auto* s = static_cast<double*>(memory);
  auto* z = reinterpret_cast<double*>(static_cast<uint8_t*>(memory) + bytes);
  for (int64_t k = 0; k < count; ++k) {
    s[k] = read_real(scale.dtype(), scale.raw_data(), k);
    z[k] = zero_point != nullptr ? read_quant(zero_point->dtype(), zero_point->raw_data(), k) : 0.0;
  }
  return Params{s, z};
}

// ---- QuantizeLinear ---------------------------------------------------------------

bool quantizable_to(DataType t) {
  QuantRange r;
  return integer_quant_range(t, r) || mini_format(t) != nullptr;
}

bool is_precision_type(DataType t) { return is_real_type(t) && t != DataType::kFloat8E8M0; }

class QuantizeLinearKernel final : public Kernel {
 public:
  QuantizeLinearKernel(const KernelCreateContext& ctx, Status& status) {
    status = attrs_.read(ctx, "y_scale", "y_zero_point");
    if (!status.ok()) return;
    saturate_ = ctx.opset() >= 19 ? ctx.node().attr_int("saturate", 1) != 0 : true;
    status = read_type_attr(ctx, "output_dtype", 21, &quantizable_to, "a type QuantizeLinear produces", output_dtype_);
    if (!status.ok()) return;
    status = read_type_attr(ctx, "precision", 23, &is_precision_type, "float, float16, bfloat16 or int32", precision_);
    if (!status.ok()) return;
    x_label_ = input_label(ctx, 0, "x");
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* zp = ctx.input(2);
    if (x == nullptr || scale == nullptr) return kernel_error(ctx, "inputs 0 (x) and 1 (y_scale) are required");
    if (!is_real_type(x->dtype()) || x->dtype() == DataType::kFloat8E8M0)
      return kernel_error(ctx, x_label_ + " is " + x->describe() + "; expected float, float16, bfloat16 or int32");
    if (!is_real_type(scale->dtype()))
      return kernel_error(ctx, attrs_.scale_label + " is " + scale->describe() +
                                   "; expected float, float16, bfloat16, int32 or float8e8m0");
    DataType out = output_dtype_ != DataType::kUndefined ? output_dtype_ : DataType::kUint8;
    if (zp != nullptr) {
      if (output_dtype_ != DataType::kUndefined && zp->dtype() != output_dtype_)
        return kernel_invalid_argument(ctx, attrs_.zero_point_label + " has type " +
                                                std::string(data_type_name(zp->dtype())) +
                                                ", but attribute output_dtype says " +
                                                std::string(data_type_name(output_dtype_)));
      out = zp->dtype();
    }
    if (!quantizable_to(out)) return kernel_error(ctx, "cannot quantize to " + std::string(data_type_name(out)));
    Layout layout;
    SY_RETURN_IF_ERROR(attrs_.layout(ctx, *x, *scale, zp, layout));
    for (int64_t k = 0; k < scale->num_elements(); ++k) {
      if (read_real(scale->dtype(), scale->raw_data(), k) == 0.0)
        return kernel_invalid_argument(ctx, attrs_.scale_label + " is 0 at element " + std::to_string(k) +
                                                "; QuantizeLinear divides x by its scale, which must not be 0");
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, x->shape()));
    const int64_t n = x->num_elements();
    if (n == 0) return ok_status();
    const DataType prec = precision_ != DataType::kUndefined ? precision_ : division_type(x->dtype(), scale->dtype());
    if (x->dtype() == DataType::kFloat && scale->dtype() == DataType::kFloat && prec == DataType::kFloat &&
        (out == DataType::kUint8 || out == DataType::kInt8) && simd_layout(layout)) {
      run_simd(ctx, *x, *scale, zp, *y, layout);
      return ok_status();
    }
    SY_ASSIGN_OR_RETURN(Params p, decode_params(ctx, *scale, zp));
    run_general(ctx, *x, p, prec, *y, layout);
    return ok_status();
  }

 private:
  static void run_simd(KernelContext& ctx, const Tensor& x, const Tensor& scale, const Tensor* zp, Tensor& y,
                       const Layout& layout) {
    const QuantizeSimd& simd = quantize_simd();
    if (y.dtype() == DataType::kUint8) {
      simd_runs(ctx, layout, x, scale, zp, y, simd.quantize_u8);
    } else {
      simd_runs(ctx, layout, x, scale, zp, y, simd.quantize_s8);
    }
  }

  void run_general(KernelContext& ctx, const Tensor& x, const Params& p, DataType prec, Tensor& y,
                   const Layout& layout) const {
    const DataType xt = x.dtype();
    const void* xd = x.raw_data();
    const DataType out = y.dtype();
    void* yd = y.raw_data();
    const bool truncate = prec == DataType::kInt32;  // both operands cast to int32 first
    QuantRange range{};
    if (integer_quant_range(out, range)) {
      general_loop(ctx.thread_pool(), layout, x.num_elements(), [&](int64_t i, int64_t k) {
        double xv = read_real(xt, xd, i), sv = p.scale[k];
        if (truncate) xv = std::trunc(xv), sv = std::trunc(sv);
        const double q = round_to(prec, xv / sv);
        write_code(out, yd, i, static_cast<uint32_t>(round_saturate(q, static_cast<int32_t>(p.zero_point[k]), range)));
      });
      return;
    }
    const MiniFormat& f = *mini_format(out);
    const bool saturate = saturate_;
    general_loop(ctx.thread_pool(), layout, x.num_elements(), [&](int64_t i, int64_t k) {
      double xv = read_real(xt, xd, i), sv = p.scale[k];
      if (truncate) xv = std::trunc(xv), sv = std::trunc(sv);
      // The reference adds the zero point in float32 and converts that.
      const float v = static_cast<float>(round_to(prec, xv / sv)) + static_cast<float>(p.zero_point[k]);
      write_code(out, yd, i, mini_encode(f, v, saturate));
    });
  }

  QuantAttrs attrs_;
  bool saturate_ = true;
  DataType output_dtype_ = DataType::kUndefined;
  DataType precision_ = DataType::kUndefined;
  std::string x_label_;
};

// ---- DequantizeLinear -------------------------------------------------------------

class DequantizeLinearKernel final : public Kernel {
 public:
  DequantizeLinearKernel(const KernelCreateContext& ctx, Status& status) {
    status = attrs_.read(ctx, "x_scale", "x_zero_point");
    if (!status.ok()) return;
    status = read_type_attr(ctx, "output_dtype", 23, &real_output, "float, float16 or bfloat16", output_dtype_);
    x_label_ = input_label(ctx, 0, "x");
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* zp = ctx.input(2);
    if (x == nullptr || scale == nullptr) return kernel_error(ctx, "inputs 0 (x) and 1 (x_scale) are required");
    QuantRange range{};
    if (!integer_quant_range(x->dtype(), range) && mini_format(x->dtype()) == nullptr && x->dtype() != DataType::kInt32)
      return kernel_error(ctx, x_label_ + " is " + x->describe() + ", not a quantized type");
    if (!is_real_type(scale->dtype()) || scale->dtype() == DataType::kInt32)
      return kernel_error(ctx, attrs_.scale_label + " is " + scale->describe() +
                                   "; expected float, float16, bfloat16 or float8e8m0");
    if (zp != nullptr && zp->dtype() != x->dtype())
      return kernel_invalid_argument(ctx, attrs_.zero_point_label + " has type " +
                                              std::string(data_type_name(zp->dtype())) + ", but " + x_label_ +
                                              " has type " + std::string(data_type_name(x->dtype())) +
                                              "; they must match");
    DataType out = output_dtype_;
    if (out == DataType::kUndefined) out = ctx.node().since_version >= 19 ? scale->dtype() : DataType::kFloat;
    if (!real_output(out))
      return kernel_error(ctx, "the output cannot be " + std::string(data_type_name(out)) +
                                   " (the scale's type); set attribute output_dtype");
    Layout layout;
    SY_RETURN_IF_ERROR(attrs_.layout(ctx, *x, *scale, zp, layout));
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, x->shape()));
    const int64_t n = x->num_elements();
    if (n == 0) return ok_status();
    if ((x->dtype() == DataType::kUint8 || x->dtype() == DataType::kInt8) && scale->dtype() == DataType::kFloat &&
        out == DataType::kFloat && simd_layout(layout)) {
      run_simd(ctx, *x, *scale, zp, *y, layout);
      return ok_status();
    }
    SY_ASSIGN_OR_RETURN(Params p, decode_params(ctx, *scale, zp));
    run_general(ctx, *x, p, *y, layout);
    return ok_status();
  }

 private:
  static bool real_output(DataType t) {
    return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBfloat16;
  }

  static void run_simd(KernelContext& ctx, const Tensor& x, const Tensor& scale, const Tensor* zp, Tensor& y,
                       const Layout& layout) {
    const QuantizeSimd& simd = quantize_simd();
    if (x.dtype() == DataType::kUint8) {
      simd_runs(ctx, layout, x, scale, zp, y, simd.dequantize_u8);
    } else {
      simd_runs(ctx, layout, x, scale, zp, y, simd.dequantize_s8);
    }
  }

  static void run_general(KernelContext& ctx, const Tensor& x, const Params& p, Tensor& y, const Layout& layout) {
    const DataType xt = x.dtype();
    const void* xd = x.raw_data();
    const int64_t n = x.num_elements();
    // (x - zero_point) is exact in double; the product is rounded once to the output type.
    const bool minifloat = mini_format(xt) != nullptr;
    auto value = [&](int64_t i, int64_t k) {
      const double d = read_quant(xt, xd, i) - p.zero_point[k];
      return (minifloat ? static_cast<double>(static_cast<float>(d)) : d) * p.scale[k];
    };
    if (y.dtype() == DataType::kFloat) {
      float* yd = y.data<float>();
      general_loop(ctx.thread_pool(), layout, n, [&](int64_t i, int64_t k) { yd[i] = static_cast<float>(value(i, k)); });
    } else if (y.dtype() == DataType::kFloat16) {
      auto* yd = static_cast<uint16_t*>(y.raw_data());
      general_loop(ctx.thread_pool(), layout, n,
                   [&](int64_t i, int64_t k) { yd[i] = float_to_float16(static_cast<float>(value(i, k))); });
    } else {
      auto* yd = static_cast<uint16_t*>(y.raw_data());
      general_loop(ctx.thread_pool(), layout, n,
                   [&](int64_t i, int64_t k) { yd[i] = float_to_bfloat16(static_cast<float>(value(i, k))); });
    }
  }

  QuantAttrs attrs_;
  DataType output_dtype_ = DataType::kUndefined;
  std::string x_label_;
};

// ---- DynamicQuantizeLinear ----------------------------------------------------------

class DynamicQuantizeLinearKernel final : public Kernel {
 public:
  DynamicQuantizeLinearKernel(const KernelCreateContext&, Status&) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr || x->dtype() != DataType::kFloat)
      return kernel_error(ctx, "input 0 (x) must be a float tensor");
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kUint8, x->shape()));
    SY_ASSIGN_OR_RETURN(Tensor * y_scale, ctx.allocate_output(1, DataType::kFloat, Shape{}));
    SY_ASSIGN_OR_RETURN(Tensor * y_zero_point, ctx.allocate_output(2, DataType::kUint8, Shape{}));
    const int64_t n = x->num_elements();
    const float* xd = x->data<float>();
    const DynamicQuantParams p = dynamic_quant_params(ctx.thread_pool(), xd, n);
    const float scale = p.scale;
    const int32_t zp = p.zero_point;
    y_scale->data<float>()[0] = scale;
    y_zero_point->data<uint8_t>()[0] = static_cast<uint8_t>(zp);
    const QuantizeSimd& simd = quantize_simd();
    uint8_t* yd = y->data<uint8_t>();
    parallel_range(ctx.thread_pool(), n, kCheapChunk,
                   [&](int64_t b, int64_t e) { simd.quantize_u8(xd + b, e - b, scale, zp, yd + b); });
    return ok_status();
  }
};

constexpr uint64_t kQuantizeInputTypes = type_bit(DataType::kFloat) | type_bit(DataType::kFloat16) |
                                         type_bit(DataType::kBfloat16) | type_bit(DataType::kInt32);
constexpr uint64_t kDequantizeInputTypes =
    type_bit(DataType::kInt8) | type_bit(DataType::kUint8) | type_bit(DataType::kInt16) | type_bit(DataType::kUint16) |
    type_bit(DataType::kInt32) | type_bit(DataType::kFloat8E4M3FN) | type_bit(DataType::kFloat8E4M3FNUZ) |
    type_bit(DataType::kFloat8E5M2) | type_bit(DataType::kFloat8E5M2FNUZ) | type_bit(DataType::kUint4) |
    type_bit(DataType::kInt4) | type_bit(DataType::kFloat4E2M1) | type_bit(DataType::kUint2) |
    type_bit(DataType::kInt2);

constexpr KernelDef kQuantizeKernels[] = {
    {"", "QuantizeLinear", 10, kLatestVersion, 0, kQuantizeInputTypes, &make_kernel<QuantizeLinearKernel>},
    {"", "DequantizeLinear", 10, kLatestVersion, 0, kDequantizeInputTypes, &make_kernel<DequantizeLinearKernel>},
    {"", "DynamicQuantizeLinear", 11, kLatestVersion, 0, type_bit(DataType::kFloat),
     &make_kernel<DynamicQuantizeLinearKernel>},
};

}  // namespace

DynamicQuantParams dynamic_quant_params(ThreadPool& pool, const float* x, int64_t n) {
  const QuantizeSimd& simd = quantize_simd();
  // The range in up to kTasks pieces, each thread's minimum and maximum on the stack.
  constexpr int64_t kTasks = 64;
  float lows[kTasks], highs[kTasks];
  const int64_t tasks = std::clamp<int64_t>(n / kCheapChunk, 1, kTasks);
  parallel_range(pool, tasks, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t begin = n * t / tasks, end = n * (t + 1) / tasks;
      lows[t] = std::numeric_limits<float>::infinity();
      highs[t] = -lows[t];
      if (end > begin) simd.min_max(x + begin, end - begin, lows[t], highs[t]);
    }
  });
  // The range always holds 0, so that 0 is exact after quantization.
  float lo = 0.0f, hi = 0.0f;
  for (int64_t t = 0; t < tasks; ++t) {
    lo = std::min(lo, lows[t]);
    hi = std::max(hi, highs[t]);
  }
  DynamicQuantParams p;
  // A range of one point (x all 0) would give scale 0; ONNX Runtime uses 1.
  p.scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  const float zero_point = std::clamp(0.0f - lo / p.scale, 0.0f, 255.0f);
  p.zero_point = static_cast<int32_t>(std::nearbyint(zero_point));
  return p;
}

std::span<const KernelDef> quantize_kernels() { return kQuantizeKernels; }

}  // namespace sy::cpu
