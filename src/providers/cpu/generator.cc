// Ops that make tensors from attributes and scalars: Constant,
// ConstantOfShape, Range, EyeLike.
#include <cmath>
#include <string>

#include "core/checked_math.h"
#include "providers/cpu/copy_util.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// ---- Constant -----------------------------------------------------------------

// The value of a Constant node from whichever value* attribute it has.
Result<Tensor> constant_value(const KernelCreateContext& ctx) {
  const Node& node = ctx.node();
  const Attribute* found = nullptr;
  for (const Attribute& a : node.attributes) {
    if (a.name.rfind("value", 0) != 0 && a.name != "sparse_value") continue;
    if (found != nullptr)
      return ctx.error("has both '" + found->name + "' and '" + a.name + "'; expected exactly one value");
    found = &a;
  }
  if (found == nullptr)
    return ctx.error("needs one of the attributes value, value_float(s), value_int(s), value_string(s)");
  const Attribute& a = *found;
  if (a.name == "sparse_value") return ctx.unsupported("Constant with a sparse_value attribute is not implemented");
  if (a.name == "value") {
    if (!a.t.defined()) return ctx.error("attribute 'value' holds no tensor");
    return a.t.clone();
  }
  if (a.name == "value_float") {
    SY_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kFloat, Shape{}));
    t.data<float>()[0] = a.f;
    return t;
  }
  if (a.name == "value_int") {
    SY_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kInt64, Shape{}));
    t.data<int64_t>()[0] = a.i;
    return t;
  }
  if (a.name == "value_string") {
    SY_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kString, Shape{}));
    t.data<std::string>()[0] = a.s;
    return t;
  }
  if (a.name == "value_floats") {
    SY_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kFloat, Shape{static_cast<int64_t>(a.floats.size())}));
    std::copy(a.floats.begin(), a.floats.end(), t.data<float>());
    return t;
  }
  if (a.name == "value_ints") {
    SY_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kInt64, Shape{static_cast<int64_t>(a.ints.size())}));
    std::copy(a.ints.begin(), a.ints.end(), t.data<int64_t>());
    return t;
  }
  if (a.name == "value_strings") {
    SY_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kString, Shape{static_cast<int64_t>(a.strings.size())}));
    std::copy(a.strings.begin(), a.strings.end(), t.data<std::string>());
    return t;
  }
  return ctx.error("unknown attribute '" + a.name + "'");
}

class ConstantKernel final : public Kernel {
 public:
  ConstantKernel(const KernelCreateContext& ctx, Status& status) {
    Result<Tensor> v = constant_value(ctx);
    if (!v.ok()) {
      status = v.status();
      return;
    }
    value_ = std::move(v).value();
  }

  Status run(KernelContext& ctx) const override {
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, value_.dtype(), value_.shape()));
    copy_tensor_data(value_, *out, ctx.thread_pool());
    return ok_status();
  }

 private:
  Tensor value_;
};

// ---- ConstantOfShape ------------------------------------------------------------

class ConstantOfShapeKernel final : public Kernel {
 public:
  ConstantOfShapeKernel(const KernelCreateContext& ctx, Status& status) {
    const Attribute* a = ctx.node().attr("value");
    if (a == nullptr) {
      value_ = Tensor::allocate(DataType::kFloat, Shape{1}).value();
      value_.data<float>()[0] = 0.0f;
      return;
    }
    if (!a->t.defined() || a->t.num_elements() != 1) {
      status = ctx.error("attribute 'value' must be a one-element tensor, got " +
                         (a->t.defined() ? a->t.describe() : std::string("none")));
      return;
    }
    if (a->t.dtype() == DataType::kString) {
      status = ctx.error("attribute 'value' must be numeric or bool, got string");
      return;
    }
    value_ = a->t.clone().value();
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* shape = ctx.input(0);
    if (shape == nullptr || shape->dtype() != DataType::kInt64 || shape->shape().rank() != 1)
      return kernel_error(ctx, "input 0 (shape) must be a 1-D int64 tensor, got " +
                                   (shape ? shape->describe() : std::string("nothing")));
    Shape out_shape;
    out_shape.resize(static_cast<size_t>(shape->num_elements()));
    for (size_t k = 0; k < out_shape.rank(); ++k) {
      out_shape[k] = shape->data<int64_t>()[k];
      if (out_shape[k] < 0)
        return kernel_error(
            ctx, "shape dimension " + std::to_string(k) + " is negative (" + std::to_string(out_shape[k]) + ")");
    }
    const DataType dtype = value_.dtype();
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, dtype, out_shape));
    const int64_t n = out->num_elements();
    if (n == 0) return ok_status();
    if (element_size(dtype) == 0) {
      // Packed types: repeat the value's bits across each byte.
      const uint8_t byte = static_cast<const uint8_t*>(value_.raw_data())[0];
      const bool two_bit = dtype == DataType::kUint2 || dtype == DataType::kInt2;
      const uint8_t v = two_bit ? (byte & 0x3) * 0x55 : (byte & 0xF) * 0x11;
      std::memset(out->raw_data(), v, out->byte_size());
      return ok_status();
    }
    return dispatch_by_element(dtype, [&]<typename T>() {
      const T v = value_.data<T>()[0];
      T* dst = out->data<T>();
      ctx.thread_pool().parallel_for(n, rows_per_chunk(1, sizeof(T)),
                                     [&](int64_t b, int64_t e) { fill_elements(dst + b, v, e - b); });
      return ok_status();
    });
  }

 private:
  Tensor value_;
};

// ---- Range ------------------------------------------------------------------------

// A count the output could not hold is refused before allocating, with the
// operands in the message.
Status range_too_large(KernelContext& ctx, const std::string& count, const std::string& start,
                       const std::string& limit, const std::string& delta) {
  return kernel_invalid_argument(ctx, "start " + start + ", limit " + limit + ", delta " + delta + " give " + count +
                                          " elements, more than a tensor may hold (" +
                                          std::to_string(kMaxTensorBytes) + " bytes)");
}

template <typename T>
Status run_integer_range(KernelContext& ctx, T start, T limit, T delta) {
  if (delta == 0) return kernel_error(ctx, "delta is 0");
  const uint64_t count = range_count(start, limit, delta);
  if (count > kMaxTensorBytes / sizeof(T))
    return range_too_large(ctx, std::to_string(count), std::to_string(start), std::to_string(limit),
                           std::to_string(delta));
  const auto n = static_cast<int64_t>(count);
  SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataTypeOf<T>::value, Shape{n}));
  T* d = out->data<T>();
  // Every value lies between start and limit, so it fits in T; i * delta
  // alone may not (start INT64_MIN, delta INT64_MAX), so the sum is formed
  // in unsigned arithmetic, which wraps to the exact value.
  const auto ustart = static_cast<uint64_t>(static_cast<int64_t>(start));
  const auto udelta = static_cast<uint64_t>(static_cast<int64_t>(delta));
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(ustart + static_cast<uint64_t>(i) * udelta);
  return ok_status();
}

template <typename T>
Result<int64_t> float_range_count(KernelContext& ctx, T start, T limit, T delta) {
  if (delta == 0) return kernel_error(ctx, "delta is 0");
  const double count = std::ceil(static_cast<double>((limit - start) / delta));
  if (!std::isfinite(count))
    return kernel_invalid_argument(ctx, "start " + std::to_string(start) + ", limit " + std::to_string(limit) +
                                            ", delta " + std::to_string(delta) +
                                            " give no finite number of elements");
  // Compared as double before any conversion: a count outside int64 would
  // make static_cast<int64_t> undefined.
  if (count <= 0) return int64_t{0};
  if (count > static_cast<double>(kMaxTensorBytes / sizeof(T)))
    return range_too_large(ctx, std::to_string(count), std::to_string(start), std::to_string(limit),
                           std::to_string(delta));
  return static_cast<int64_t>(count);
}

template <typename T>
Status run_float_range(KernelContext& ctx, T start, T limit, T delta) {
  SY_ASSIGN_OR_RETURN(int64_t n, float_range_count(ctx, start, limit, delta));
  SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataTypeOf<T>::value, Shape{n}));
  T* d = out->data<T>();
  for (int64_t i = 0; i < n; ++i) d[i] = start + static_cast<T>(i) * delta;
  return ok_status();
}

// float16 / bfloat16: in float (stash_type 1), or rounding every step to the
// 16-bit type (stash_type 0).
Status run_half_range(KernelContext& ctx, DataType dtype, const Tensor& s, const Tensor& l, const Tensor& d,
                      bool stash_float) {
  const bool bf = dtype == DataType::kBfloat16;
  auto to_float = [bf](uint16_t v) { return bf ? bfloat16_to_float(v) : float16_to_float(v); };
  auto from_float = [bf](float v) { return bf ? float_to_bfloat16(v) : float_to_float16(v); };
  const float start = to_float(s.data<uint16_t>()[0]);
  const float limit = to_float(l.data<uint16_t>()[0]);
  const float delta = to_float(d.data<uint16_t>()[0]);
  SY_ASSIGN_OR_RETURN(int64_t n, float_range_count(ctx, start, limit, delta));
  SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, dtype, Shape{n}));
  uint16_t* o = out->data<uint16_t>();
  for (int64_t i = 0; i < n; ++i) {
    const float fi = static_cast<float>(i);
    o[i] = stash_float ? from_float(start + fi * delta)
                       : from_float(start + to_float(from_float(to_float(from_float(fi)) * delta)));
  }
  return ok_status();
}

class RangeKernel final : public Kernel {
 public:
  RangeKernel(const KernelCreateContext& ctx, Status&)
      : stash_float_(ctx.opset() < 27 || ctx.node().attr_int("stash_type", 1) == 1) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* s = ctx.input(0);
    const Tensor* l = ctx.input(1);
    const Tensor* d = ctx.input(2);
    for (size_t i = 0; i < 3; ++i) {
      const Tensor* t = ctx.input(i);
      if (t == nullptr || t->num_elements() != 1 || t->shape().rank() > 1 || t->dtype() != s->dtype())
        return kernel_error(ctx, "start, limit and delta must be scalars of one type; input " + std::to_string(i) +
                                     " is " + (t ? t->describe() : std::string("missing")));
    }
    switch (s->dtype()) {
      case DataType::kFloat:
        return run_float_range(ctx, s->data<float>()[0], l->data<float>()[0], d->data<float>()[0]);
      case DataType::kDouble:
        return run_float_range(ctx, s->data<double>()[0], l->data<double>()[0], d->data<double>()[0]);
      case DataType::kInt16:
        return run_integer_range(ctx, s->data<int16_t>()[0], l->data<int16_t>()[0], d->data<int16_t>()[0]);
      case DataType::kInt32:
        return run_integer_range(ctx, s->data<int32_t>()[0], l->data<int32_t>()[0], d->data<int32_t>()[0]);
      case DataType::kInt64:
        return run_integer_range(ctx, s->data<int64_t>()[0], l->data<int64_t>()[0], d->data<int64_t>()[0]);
      case DataType::kFloat16:
      case DataType::kBfloat16:
        return run_half_range(ctx, s->dtype(), *s, *l, *d, stash_float_);
      default:
        break;
    }
    return kernel_error(ctx, "type " + std::string(data_type_name(s->dtype())) + " is not supported");
  }

 private:
  bool stash_float_;
};

// ---- EyeLike ----------------------------------------------------------------------

// The bytes of the value 1 in `dtype` (little-endian); false if it has none.
bool one_bytes(DataType dtype, uint64_t& bits) {
  switch (dtype) {
    case DataType::kFloat: {
      const float f = 1.0f;
      uint32_t u;
      std::memcpy(&u, &f, 4);
      bits = u;
      return true;
    }
    case DataType::kDouble: {
      const double f = 1.0;
      std::memcpy(&bits, &f, 8);
      return true;
    }
    case DataType::kFloat16:
      bits = 0x3C00;
      return true;
    case DataType::kBfloat16:
      bits = 0x3F80;
      return true;
    case DataType::kBool:
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kInt16:
    case DataType::kUint16:
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kInt64:
    case DataType::kUint64:
      bits = 1;
      return true;
    default:
      return false;
  }
}

class EyeLikeKernel final : public Kernel {
 public:
  EyeLikeKernel(const KernelCreateContext& ctx, Status& status) : k_(ctx.node().attr_int("k", 0)) {
    const int64_t dt = ctx.node().attr_int("dtype", 0);
    dtype_ = dt != 0 ? static_cast<DataType>(dt) : ctx.input_dtype(0);
    if (dt != 0 && (!is_valid_data_type(static_cast<int32_t>(dt)) || !one_bytes(dtype_, one_)))
      status = ctx.error("dtype " + std::to_string(dt) + " is not a numeric or bool type");
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    if (in.shape().rank() != 2) return kernel_error(ctx, "input must be 2-D, got " + in.describe());
    const DataType dtype = dtype_ != DataType::kUndefined ? dtype_ : in.dtype();
    uint64_t one = 0;
    if (!one_bytes(dtype, one))
      return kernel_error(ctx, "type " + std::string(data_type_name(dtype)) + " is not supported");
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, dtype, in.shape()));
    std::memset(out->raw_data(), 0, out->byte_size());
    const int64_t rows = in.shape()[0];
    const int64_t cols = in.shape()[1];
    const size_t esize = element_size(dtype);
    auto* base = static_cast<uint8_t*>(out->raw_data());
    // k comes from the model: clamped first so that -k and i + k cannot
    // overflow (beyond either bound the diagonal is empty anyway).
    const int64_t k = std::clamp(k_, -rows, cols);
    for (int64_t i = std::max<int64_t>(0, -k); i < rows && i + k < cols; ++i)
      std::memcpy(base + static_cast<size_t>(i * cols + i + k) * esize, &one, esize);
    return ok_status();
  }

 private:
  int64_t k_;
  DataType dtype_ = DataType::kUndefined;
  uint64_t one_ = 0;
};

constexpr uint64_t kRangeTypes = type_bit(DataType::kFloat) | type_bit(DataType::kDouble) | type_bit(DataType::kInt16) |
                                 type_bit(DataType::kInt32) | type_bit(DataType::kInt64);
constexpr uint64_t kEyeLikeTypes =
    type_bit(DataType::kFloat) | type_bit(DataType::kDouble) | type_bit(DataType::kFloat16) |
    type_bit(DataType::kBfloat16) | type_bit(DataType::kBool) | type_bit(DataType::kInt8) | type_bit(DataType::kUint8) |
    type_bit(DataType::kInt16) | type_bit(DataType::kUint16) | type_bit(DataType::kInt32) |
    type_bit(DataType::kUint32) | type_bit(DataType::kInt64) | type_bit(DataType::kUint64);

const KernelDef kGeneratorKernels[] = {
    {"", "Constant", 1, kLatestVersion, -1, 0, &make_kernel<ConstantKernel>},
    {"", "ConstantOfShape", 9, kLatestVersion, 0, type_bit(DataType::kInt64), &make_kernel<ConstantOfShapeKernel>},
    {"", "Range", 11, 26, 0, kRangeTypes, &make_kernel<RangeKernel>},
    {"", "Range", 27, kLatestVersion, 0, kRangeTypes | type_bit(DataType::kFloat16) | type_bit(DataType::kBfloat16),
     &make_kernel<RangeKernel>},
    {"", "EyeLike", 9, kLatestVersion, 0, kEyeLikeTypes, &make_kernel<EyeLikeKernel>},
};

}  // namespace

std::span<const KernelDef> generator_kernels() { return kGeneratorKernels; }

}  // namespace sy::cpu
