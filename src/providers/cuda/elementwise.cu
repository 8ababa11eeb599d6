// Element-wise kernels of the CUDA provider:
//   - unary math and activations (Relu ... Gelu) and Clip, on float32,
//     float16 and bfloat16 computed in float; Neg and Abs also on int32 and
//     int64; Not on bool;
//   - binary ops with numpy broadcasting: Add, Sub, Mul, Div, Pow, the
//     variadic Max and Min, comparisons (bool output), And, Or, Xor;
//   - Where (three-way broadcasting);
//   - Cast among float, float16, bfloat16, double, int8, uint8, int16,
//     int32, int64 and bool.
// Bool tensors hold one byte per element, 0 or 1, read and written here as
// C++ bool (one byte on the device too).
//
// Semantics follow the CPU provider's kernels (providers/cpu/elementwise_*.cc
// and cast.cc) where ONNX leaves a choice: integer division by zero gives 0,
// integer overflow wraps, Max/Min propagate NaN, float -> narrow integer
// casts wrap through int64.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>
#include <cmath>
#include <string>
#include <type_traits>

#include "cuda_kernel.h"
#include "cuda_types.cuh"
#include "elementwise_index.cuh"

namespace sy::cuda {
namespace {

// ---- types ------------------------------------------------------------------
// A compile-time list of device element types gives both a table row's type
// mask and the run-time dispatch, so the two cannot disagree.

template <typename... Ts>
struct TypeList {};

// The core's DataTypeOf, plus CUDA's own 16-bit float types.
template <typename T>
struct DeviceTypeOf : DataTypeOf<T> {};
template <>
struct DeviceTypeOf<__half> {
  static constexpr DataType value = DataType::kFloat16;
};
template <>
struct DeviceTypeOf<__nv_bfloat16> {
  static constexpr DataType value = DataType::kBfloat16;
};

template <typename... Ts>
constexpr uint64_t type_mask(TypeList<Ts...> /*types*/) {
  return (type_bit(DeviceTypeOf<Ts>::value) | ... | uint64_t{0});
}

template <typename List>
bool in_list(int32_t dtype) {
  return dtype >= 0 && dtype < 64 && (type_mask(List{}) & (uint64_t{1} << dtype)) != 0;
}

// Calls f.template operator()<T>() for the T in the list whose dtype is
// `dtype`; false when none is.
template <typename... Ts, typename F>
bool visit_type(TypeList<Ts...> /*types*/, int32_t dtype, F&& f) {
  return ((dtype == static_cast<int32_t>(DeviceTypeOf<Ts>::value) ? (f.template operator()<Ts>(), true) : false) ||
          ...);
}

using FloatTypes = TypeList<float, __half, __nv_bfloat16>;
using NumericTypes = TypeList<float, __half, __nv_bfloat16, int32_t, int64_t>;
using BoolTypes = TypeList<bool>;
using EqualTypes = TypeList<float, __half, __nv_bfloat16, int32_t, int64_t, bool>;
using WhereTypes = EqualTypes;
using PowExponentTypes = NumericTypes;
using CastTypes = TypeList<float, __half, __nv_bfloat16, double, int8_t, uint8_t, int16_t, int32_t, int64_t, bool>;

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// 16-bit floats compute in float; every other type in itself.
template <typename T>
struct ComputeOf {
  using type = T;
};
template <>
struct ComputeOf<__half> {
  using type = float;
};
template <>
struct ComputeOf<__nv_bfloat16> {
  using type = float;
};
template <typename T>
using compute_t = typename ComputeOf<T>::type;

template <typename T>
__device__ __forceinline__ compute_t<T> load(T v) {
  if constexpr (kIsHalf<T>) {
    return to_float(v);
  } else {
    return v;
  }
}

template <typename T>
__device__ __forceinline__ T store(compute_t<T> v) {
  if constexpr (kIsHalf<T>) {
    return from_float<T>(v);
  } else {
    return v;
  }
}

std::string type_error(const std::string& node, int input, int32_t dtype) {
  return node + ": input " + std::to_string(input) + " has unsupported type " + dtype_name(dtype);
}

// Creation checks shared by the kernels: inputs 0..count-1 of one type
// when `same_type` (known types only), and that type in Types.
template <typename Types>
Status check_input_types(const KernelCreateInfo& info, int count, bool same_type) {
  const int32_t t0 = info.input_dtype(0);
  if (t0 != 0 && !in_list<Types>(t0))
    return info.unsupported(std::string("input type ") + dtype_name(t0) + " is not handled on CUDA");
  if (!same_type) return ok_status();
  for (int i = 1; i < count; ++i) {
    const int32_t ti = info.input_dtype(i);
    if (t0 != 0 && ti != 0 && ti != t0)
      return info.error(std::string("input ") + std::to_string(i) + " has type " + dtype_name(ti) + ", expected " +
                        dtype_name(t0) + " (the type of input 0)");
  }
  return ok_status();
}

// Integer arithmetic that wraps instead of overflowing (signed overflow is
// undefined in C++; the CPU kernels wrap too).
template <typename C>
__device__ __forceinline__ C wrap(std::make_unsigned_t<C> v) {
  return static_cast<C>(v);
}
template <typename C>
__device__ __forceinline__ std::make_unsigned_t<C> as_unsigned(C v) {
  return static_cast<std::make_unsigned_t<C>>(v);
}

// ---- unary kernels ------------------------------------------------------------

template <typename T, typename Op>
__global__ void unary_kernel(const T* x, T* y, int64_t n, Op op) {
  for (int64_t i = thread_index(); i < n; i += grid_stride()) y[i] = store<T>(op(load(x[i])));
}

// Ops map compute values (float for the float types) to compute values.
// Ops with attributes read them at creation from KernelCreateInfo.

struct ReluOp {
  static constexpr const char* kName = "Relu";
  __device__ float operator()(float x) const { return x < 0.0f ? 0.0f : x; }  // NaN stays NaN
};
struct SigmoidOp {
  static constexpr const char* kName = "Sigmoid";
  // expf(-x) overflows to inf for x < -88: 1 / inf = 0, the right limit.
  __device__ float operator()(float x) const { return 1.0f / (1.0f + expf(-x)); }
};
struct TanhOp {
  static constexpr const char* kName = "Tanh";
  __device__ float operator()(float x) const { return tanhf(x); }
};
struct ErfOp {
  static constexpr const char* kName = "Erf";
  __device__ float operator()(float x) const { return erff(x); }
};
struct SqrtOp {
  static constexpr const char* kName = "Sqrt";
  __device__ float operator()(float x) const { return sqrtf(x); }
};
struct ExpOp {
  static constexpr const char* kName = "Exp";
  __device__ float operator()(float x) const { return expf(x); }
};
struct LogOp {
  static constexpr const char* kName = "Log";
  __device__ float operator()(float x) const { return logf(x); }
};
struct ReciprocalOp {
  static constexpr const char* kName = "Reciprocal";
  __device__ float operator()(float x) const { return 1.0f / x; }
};
struct FloorOp {
  static constexpr const char* kName = "Floor";
  __device__ float operator()(float x) const { return floorf(x); }
};
struct CeilOp {
  static constexpr const char* kName = "Ceil";
  __device__ float operator()(float x) const { return ceilf(x); }
};
struct NegOp {
  static constexpr const char* kName = "Neg";
  template <typename C>
  __device__ C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return wrap<C>(std::make_unsigned_t<C>{0} - as_unsigned(x));  // -INT_MIN wraps to INT_MIN
    } else {
      return -x;
    }
  }
};
struct AbsOp {
  static constexpr const char* kName = "Abs";
  template <typename C>
  __device__ C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return x < 0 ? wrap<C>(std::make_unsigned_t<C>{0} - as_unsigned(x)) : x;
    } else {
      return fabsf(x);
    }
  }
};
struct SoftplusOp {
  static constexpr const char* kName = "Softplus";
  // log(1 + e^x) without overflow for large x.
  __device__ float operator()(float x) const { return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x)); }
};
struct HardSwishOp {
  static constexpr const char* kName = "HardSwish";
  __device__ float operator()(float x) const {
    // (x + 3) / 6 rather than x / 6 + 1/2: no cancellation near x = -3.
    float t = (x + 3.0f) * (1.0f / 6.0f);
    t = t < 0.0f ? 0.0f : t;
    t = t > 1.0f ? 1.0f : t;
    return x * t;
  }
};
struct LeakyReluOp {
  static constexpr const char* kName = "LeakyRelu";
  float alpha = 0.01f;
  LeakyReluOp() = default;
  LeakyReluOp(const KernelCreateInfo& info, Status& /*status*/) : alpha(info.attr_float("alpha", 0.01f)) {}
  __device__ float operator()(float x) const { return x < 0.0f ? alpha * x : x; }
};
struct EluOp {
  static constexpr const char* kName = "Elu";
  float alpha = 1.0f;
  EluOp() = default;
  EluOp(const KernelCreateInfo& info, Status& /*status*/) : alpha(info.attr_float("alpha", 1.0f)) {}
  __device__ float operator()(float x) const { return x < 0.0f ? alpha * expm1f(x) : x; }
};
struct HardSigmoidOp {
  static constexpr const char* kName = "HardSigmoid";
  float alpha = 0.2f;
  float beta = 0.5f;
  HardSigmoidOp() = default;
  HardSigmoidOp(const KernelCreateInfo& info, Status& /*status*/)
      : alpha(info.attr_float("alpha", 0.2f)), beta(info.attr_float("beta", 0.5f)) {}
  __device__ float operator()(float x) const {
    // One rounding (fma): alpha * x + beta cancels near x = -beta / alpha.
    float t = fmaf(alpha, x, beta);
    t = t < 0.0f ? 0.0f : t;
    return t > 1.0f ? 1.0f : t;
  }
};
struct GeluOp {
  static constexpr const char* kName = "Gelu";
  bool tanh_approximation = false;
  GeluOp() = default;
  GeluOp(const KernelCreateInfo& info, Status& status) {
    const std::string approximate = info.attr_string("approximate", "none");
    if (approximate != "none" && approximate != "tanh") {
      status = info.error("attribute approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
      return;
    }
    tanh_approximation = approximate == "tanh";
  }
  __device__ float operator()(float x) const {
    if (tanh_approximation) {
      // x/2 * (1 + tanh(u)) == x * sigmoid(2u), which does not cancel for x < 0.
      constexpr float kTwoSqrtTwoOverPi = 1.5957691216057308f;  // 2 sqrt(2 / pi)
      const float u2 = kTwoSqrtTwoOverPi * (x + 0.044715f * x * x * x);
      return x / (1.0f + expf(-u2));
    }
    // x * Phi(x); normcdff goes through erfc, accurate for negative x too.
    return x * normcdff(x);
  }
};
struct NotOp {
  static constexpr const char* kName = "Not";
  __device__ bool operator()(bool x) const { return !x; }
};

template <typename Op>
Op make_op(const KernelCreateInfo& info, Status& status) {
  if constexpr (std::is_constructible_v<Op, const KernelCreateInfo&, Status&>) {
    return Op(info, status);
  } else {
    return Op{};
  }
}

// One input, one output of the same type and shape.
template <typename Op, typename Types>
class UnaryKernel final : public CudaKernel {
 public:
  UnaryKernel(const KernelCreateInfo& info, Status& status) : node_(info.describe()) {
    status = check_input_types<Types>(info, 1, false);
    if (status.ok()) op_ = make_op<Op>(info, status);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* x = ctx.input(0);
    if (x == nullptr) return runtime_error(node_ + ": input 0 is missing");
    if (!in_list<Types>(x->t.dtype)) return runtime_error(type_error(node_, 0, x->t.dtype));
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, x->t.dtype, x->rank(), x->dims(), y));
    const int64_t n = x->num_elements();
    if (n == 0) return ok_status();
    visit_type(Types{}, x->t.dtype, [&]<typename T>() {
      unary_kernel<T, Op>
          <<<grid_size(n), kThreadsPerBlock, 0, ctx.stream()>>>(x->data<const T>(), y.data<T>(), n, op_);
    });
    return check_launch(Op::kName);
  }

 private:
  std::string node_;
  Op op_;
};

// ---- Clip ---------------------------------------------------------------------

// Bounds are either values known on the host (attributes, constant inputs,
// +-inf when absent) or one-element device tensors, read once per thread.
template <typename T>
__global__ void clip_kernel(const T* x, T* y, int64_t n, float lo, float hi, const T* lo_device, const T* hi_device) {
  const float l = lo_device != nullptr ? to_float(*lo_device) : lo;
  const float h = hi_device != nullptr ? to_float(*hi_device) : hi;
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    float v = to_float(x[i]);
    // Min(max, Max(x, min)) as the spec puts it: min > max gives max, and a
    // NaN input stays NaN (the comparisons are false).
    v = v < l ? l : v;
    v = v > h ? h : v;
    y[i] = from_float<T>(v);
  }
}

// One float element of a host tensor of a float type; false for others.
bool host_float_value(const TensorRef& t, float& value) {
  return dispatch_float_type(t.t.dtype, [&]<typename T>() { value = to_float(*t.data<const T>()); });
}

// Opset 6-10: bounds in the attributes min and max. Opset 11 on: optional
// scalar inputs 1 (min) and 2 (max) of the input's type.
class ClipKernel final : public CudaKernel {
 public:
  ClipKernel(const KernelCreateInfo& info, Status& status) : node_(info.describe()) {
    status = check_input_types<FloatTypes>(info, 1, false);
    if (!status.ok()) return;
    const int32_t dtype = info.input_dtype(0);
    if (info.since_version() < 11) {
      // The attributes' defaults are float's lowest and max, so -inf and inf
      // are clipped to them (unlike the inputs' defaults below).
      lo_ = info.attr_float("min", -FLT_MAX);
      hi_ = info.attr_float("max", FLT_MAX);
      return;
    }
    lo_ = -INFINITY;
    hi_ = INFINITY;
    for (int i = 1; i <= 2 && i < info.num_inputs(); ++i) {
      if (!info.has_input(i)) continue;
      const char* name = i == 1 ? "min" : "max";
      const int32_t bound_type = info.input_dtype(i);
      if (dtype != 0 && bound_type != 0 && bound_type != dtype) {
        status = info.error(std::string(name) + " has type " + dtype_name(bound_type) + ", expected " +
            dtype_name(dtype) + " (the type of input)");
        return;
      }
      TensorRef value;
      if (!info.constant_input(i, value)) {
        (i == 1 ? lo_on_device_ : hi_on_device_) = true;
        continue;
      }
      float v = 0.0f;
      if (value.num_elements() != 1) {
        status = info.error(std::string(name) + " must be a scalar, got " + value.describe());
        return;
      }
      if (!host_float_value(value, v)) {
        status = info.unsupported(std::string(name) + " has type " + dtype_name(value.t.dtype));
        return;
      }
      (i == 1 ? lo_ : hi_) = v;
    }
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* x = ctx.input(0);
    if (x == nullptr) return runtime_error(node_ + ": input 0 is missing");
    if (!in_list<FloatTypes>(x->t.dtype)) return runtime_error(type_error(node_, 0, x->t.dtype));
    const void* bound[2] = {nullptr, nullptr};
    for (int i = 1; i <= 2; ++i) {
      if (!(i == 1 ? lo_on_device_ : hi_on_device_)) continue;
      const TensorRef* b = ctx.input(i);
      if (b == nullptr) continue;  // not given this run: no bound
      const char* name = i == 1 ? "min" : "max";
      if (b->t.dtype != x->t.dtype)
        return runtime_error(node_ + ": " + name + " has type " + dtype_name(b->t.dtype) + ", expected " +
                             dtype_name(x->t.dtype));
      if (b->num_elements() != 1) return runtime_error(node_ + ": " + name + " must be a scalar, got " + b->describe());
      bound[i - 1] = b->data();
    }
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, x->t.dtype, x->rank(), x->dims(), y));
    const int64_t n = x->num_elements();
    if (n == 0) return ok_status();
    dispatch_float_type(x->t.dtype, [&]<typename T>() {
      clip_kernel<T><<<grid_size(n), kThreadsPerBlock, 0, ctx.stream()>>>(x->data<const T>(), y.data<T>(), n, lo_,
                                                                          hi_, static_cast<const T*>(bound[0]),
                                                                          static_cast<const T*>(bound[1]));
    });
    return check_launch("Clip");
  }

 private:
  std::string node_;
  float lo_ = 0.0f;
  float hi_ = 0.0f;
  bool lo_on_device_ = false;
  bool hi_on_device_ = false;
};

// ---- binary kernels -------------------------------------------------------------

// Same shapes, or one side a single element (kAScalar / kBScalar): flat
// index, the scalar loaded once per thread.
template <typename TA, typename TB, typename TO, typename Op, bool kAScalar, bool kBScalar>
__global__ void binary_flat_kernel(const TA* a, const TB* b, TO* o, int64_t n, Op op) {
  compute_t<TA> a0{};
  compute_t<TB> b0{};
  if constexpr (kAScalar) a0 = load(a[0]);
  if constexpr (kBScalar) b0 = load(b[0]);
  for (int64_t i = thread_index(); i < n; i += grid_stride()) {
    const compute_t<TA> av = kAScalar ? a0 : load(a[i]);
    const compute_t<TB> bv = kBScalar ? b0 : load(b[i]);
    o[i] = store<TO>(op(av, bv));
  }
}

template <typename IndexT, typename TA, typename TB, typename TO, typename Op>
__global__ void binary_broadcast_kernel(const TA* a, const TB* b, TO* o, IndexT n, BroadcastShape s, Op op) {
  const auto stride = static_cast<IndexT>(grid_stride());
  for (auto i = static_cast<IndexT>(thread_index()); i < n; i += stride) {
    IndexT off[2];
    broadcast_offsets<2>(s, i, off);
    o[i] = store<TO>(op(load(a[off[0]]), load(b[off[1]])));
  }
}

// o = op(a, b) over the n output elements that s describes. o may be a
// (in place): each element is read by the thread that writes it.
template <typename TA, typename TB, typename TO, typename Op>
void launch_binary(cudaStream_t stream, const BroadcastShape& s, int64_t n, const TA* a, const TB* b, TO* o,
                   const Op& op) {
  const unsigned grid = grid_size(n);
  switch (binary_path(s)) {
    case BinaryPath::kFlat:
      binary_flat_kernel<TA, TB, TO, Op, false, false><<<grid, kThreadsPerBlock, 0, stream>>>(a, b, o, n, op);
      break;
    case BinaryPath::kScalarA:
      binary_flat_kernel<TA, TB, TO, Op, true, false><<<grid, kThreadsPerBlock, 0, stream>>>(a, b, o, n, op);
      break;
    case BinaryPath::kScalarB:
      binary_flat_kernel<TA, TB, TO, Op, false, true><<<grid, kThreadsPerBlock, 0, stream>>>(a, b, o, n, op);
      break;
    case BinaryPath::kGeneral:
      if (n <= kMax32BitElements) {
        binary_broadcast_kernel<uint32_t, TA, TB, TO, Op>
            <<<grid, kThreadsPerBlock, 0, stream>>>(a, b, o, static_cast<uint32_t>(n), s, op);
      } else {
        binary_broadcast_kernel<int64_t, TA, TB, TO, Op><<<grid, kThreadsPerBlock, 0, stream>>>(a, b, o, n, s, op);
      }
      break;
  }
}

// The broadcast output shape of `count` inputs, or an error naming the node
// and every input's shape.
Status broadcast_output(const std::string& node, const TensorRef* const* inputs, int count, int& out_rank,
                        int64_t* out_dims) {
  out_rank = 0;
  for (int k = 0; k < count; ++k) {
    if (!broadcast_two(out_rank, out_dims, inputs[k]->rank(), inputs[k]->dims(), out_rank, out_dims)) {
      std::string shapes;
      for (int j = 0; j < count; ++j) {
        if (j > 0) shapes += " vs ";
        shapes += inputs[j]->describe();
      }
      return runtime_error(node + ": input shapes cannot be broadcast together: " + shapes);
    }
  }
  return ok_status();
}

// The BroadcastShape of inputs a and b into the output shape.
BroadcastShape binary_shape(int rank_a, const int64_t* dims_a, int rank_b, const int64_t* dims_b, int out_rank,
                            const int64_t* out_dims) {
  const int ranks[2] = {rank_a, rank_b};
  const int64_t* dims[2] = {dims_a, dims_b};
  BroadcastShape s;
  make_broadcast_shape(2, ranks, dims, out_rank, out_dims, s);
  return s;
}

// ---- binary ops -------------------------------------------------------------------
// Compute values in, a compute value (or bool) out.

struct AddOp {
  static constexpr const char* kName = "Add";
  template <typename C>
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return wrap<C>(as_unsigned(a) + as_unsigned(b));
    } else {
      return a + b;
    }
  }
};
struct SubOp {
  static constexpr const char* kName = "Sub";
  template <typename C>
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return wrap<C>(as_unsigned(a) - as_unsigned(b));
    } else {
      return a - b;
    }
  }
};
struct MulOp {
  static constexpr const char* kName = "Mul";
  template <typename C>
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return wrap<C>(as_unsigned(a) * as_unsigned(b));
    } else {
      return a * b;
    }
  }
};
struct DivOp {
  static constexpr const char* kName = "Div";
  template <typename C>
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      // ONNX leaves these undefined; the CPU kernels give 0 and wrap.
      if (b == 0) return C{0};
      if (b == -1) return wrap<C>(std::make_unsigned_t<C>{0} - as_unsigned(a));
      return a / b;  // truncates toward zero, like C and the CPU kernels
    } else {
      return a / b;
    }
  }
};
// Max and Min propagate NaN (numpy's maximum / minimum).
struct MaxOp {
  static constexpr const char* kName = "Max";
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return (a != a || a > b) ? a : b;
  }
};
struct MinOp {
  static constexpr const char* kName = "Min";
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return (a != a || a < b) ? a : b;
  }
};
struct EqualOp {
  static constexpr const char* kName = "Equal";
  template <typename C>
  __device__ bool operator()(C a, C b) const {
    return a == b;
  }
};
struct LessOp {
  static constexpr const char* kName = "Less";
  template <typename C>
  __device__ bool operator()(C a, C b) const {
    return a < b;
  }
};
struct GreaterOp {
  static constexpr const char* kName = "Greater";
  template <typename C>
  __device__ bool operator()(C a, C b) const {
    return a > b;
  }
};
struct LessOrEqualOp {
  static constexpr const char* kName = "LessOrEqual";
  template <typename C>
  __device__ bool operator()(C a, C b) const {
    return a <= b;
  }
};
struct GreaterOrEqualOp {
  static constexpr const char* kName = "GreaterOrEqual";
  template <typename C>
  __device__ bool operator()(C a, C b) const {
    return a >= b;
  }
};
struct AndOp {
  static constexpr const char* kName = "And";
  __device__ bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp {
  static constexpr const char* kName = "Or";
  __device__ bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp {
  static constexpr const char* kName = "Xor";
  __device__ bool operator()(bool a, bool b) const { return a != b; }
};
// Float base; the exponent is any of PowExponentTypes, converted to float.
struct PowOp {
  template <typename E>
  __device__ float operator()(float x, E e) const {
    const auto y = static_cast<float>(e);
    // Squares are common (variance in decomposed norms); x * x is exact
    // where powf may be an ulp off, and is what pow(x, 2) means for every x.
    return y == 2.0f ? x * x : powf(x, y);
  }
};

// Two inputs of one type T (in Types); output T, or bool when kBoolOut.
template <typename Op, typename Types, bool kBoolOut>
class BinaryKernel final : public CudaKernel {
 public:
  BinaryKernel(const KernelCreateInfo& info, Status& status) : node_(info.describe()) {
    status = check_input_types<Types>(info, 2, true);
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* a = ctx.input(0);
    const TensorRef* b = ctx.input(1);
    if (a == nullptr || b == nullptr) return runtime_error(node_ + ": inputs 0 and 1 are required");
    if (a->t.dtype != b->t.dtype)
      return runtime_error(node_ + ": input 1 has type " + dtype_name(b->t.dtype) + ", expected " +
                           dtype_name(a->t.dtype));
    if (!in_list<Types>(a->t.dtype)) return runtime_error(type_error(node_, 0, a->t.dtype));
    const TensorRef* inputs[2] = {a, b};
    int out_rank = 0;
    int64_t out_dims[SY_MAX_RANK] = {};
    SY_SDK_RETURN_IF_ERROR(broadcast_output(node_, inputs, 2, out_rank, out_dims));
    TensorRef y;
    const int32_t out_type = kBoolOut ? static_cast<int32_t>(DataType::kBool) : a->t.dtype;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, out_type, out_rank, out_dims, y));
    const int64_t n = y.num_elements();
    if (n == 0) return ok_status();
    const BroadcastShape s = binary_shape(a->rank(), a->dims(), b->rank(), b->dims(), out_rank, out_dims);
    visit_type(Types{}, a->t.dtype, [&]<typename T>() {
      using TO = std::conditional_t<kBoolOut, bool, T>;
      launch_binary(ctx.stream(), s, n, a->data<const T>(), b->data<const T>(), y.data<TO>(), Op{});
    });
    return check_launch(Op::kName);
  }

 private:
  std::string node_;
};

// Pow: the exponent's type (T1) may differ from the base's (T).
class PowKernel final : public CudaKernel {
 public:
  PowKernel(const KernelCreateInfo& info, Status& status) : node_(info.describe()) {
    status = check_input_types<FloatTypes>(info, 2, false);
    if (!status.ok()) return;
    const int32_t e = info.input_dtype(1);
    if (e != 0 && !in_list<PowExponentTypes>(e))
      status = info.unsupported(std::string("exponent type ") + dtype_name(e) + " is not handled on CUDA");
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* a = ctx.input(0);
    const TensorRef* b = ctx.input(1);
    if (a == nullptr || b == nullptr) return runtime_error(node_ + ": inputs 0 and 1 are required");
    if (!in_list<FloatTypes>(a->t.dtype)) return runtime_error(type_error(node_, 0, a->t.dtype));
    if (!in_list<PowExponentTypes>(b->t.dtype)) return runtime_error(type_error(node_, 1, b->t.dtype));
    const TensorRef* inputs[2] = {a, b};
    int out_rank = 0;
    int64_t out_dims[SY_MAX_RANK] = {};
    SY_SDK_RETURN_IF_ERROR(broadcast_output(node_, inputs, 2, out_rank, out_dims));
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, a->t.dtype, out_rank, out_dims, y));
    const int64_t n = y.num_elements();
    if (n == 0) return ok_status();
    const BroadcastShape s = binary_shape(a->rank(), a->dims(), b->rank(), b->dims(), out_rank, out_dims);
    visit_type(FloatTypes{}, a->t.dtype, [&]<typename T>() {
      visit_type(PowExponentTypes{}, b->t.dtype, [&]<typename E>() {
        launch_binary(ctx.stream(), s, n, a->data<const T>(), b->data<const E>(), y.data<T>(), PowOp{});
      });
    });
    return check_launch("Pow");
  }

 private:
  std::string node_;
};

// Max and Min: any number of inputs of one type, all broadcast together.
// y = op(in0, in1) over the full output shape, then y = op(y, in_k) in
// place for each further input; one input is op(in0, in0) == in0.
template <typename Op>
class VariadicKernel final : public CudaKernel {
 public:
  VariadicKernel(const KernelCreateInfo& info, Status& status) : node_(info.describe()) {
    if (info.num_inputs() < 1) {
      status = info.error("needs at least one input");
      return;
    }
    status = check_input_types<NumericTypes>(info, info.num_inputs(), true);
  }

  Status run(KernelRunContext& ctx) const override {
    const int count = ctx.num_inputs();
    if (count < 1) return runtime_error(node_ + ": needs at least one input");
    const TensorRef* inputs[kMaxKernelInputs] = {};
    for (int k = 0; k < count; ++k) {
      inputs[k] = ctx.input(k);
      if (inputs[k] == nullptr) return runtime_error(node_ + ": input " + std::to_string(k) + " is missing");
      if (inputs[k]->t.dtype != inputs[0]->t.dtype)
        return runtime_error(node_ + ": input " + std::to_string(k) + " has type " + dtype_name(inputs[k]->t.dtype) +
                             ", expected " + dtype_name(inputs[0]->t.dtype));
    }
    const int32_t dtype = inputs[0]->t.dtype;
    if (!in_list<NumericTypes>(dtype)) return runtime_error(type_error(node_, 0, dtype));
    int out_rank = 0;
    int64_t out_dims[SY_MAX_RANK] = {};
    SY_SDK_RETURN_IF_ERROR(broadcast_output(node_, inputs, count, out_rank, out_dims));
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, dtype, out_rank, out_dims, y));
    const int64_t n = y.num_elements();
    if (n == 0) return ok_status();
    const TensorRef* second = count > 1 ? inputs[1] : inputs[0];
    const BroadcastShape first =
        binary_shape(inputs[0]->rank(), inputs[0]->dims(), second->rank(), second->dims(), out_rank, out_dims);
    visit_type(NumericTypes{}, dtype, [&]<typename T>() {
      launch_binary(ctx.stream(), first, n, inputs[0]->data<const T>(), second->data<const T>(), y.data<T>(),
                    Op{});
      for (int k = 2; k < count; ++k) {
        const BroadcastShape s =
            binary_shape(out_rank, out_dims, inputs[k]->rank(), inputs[k]->dims(), out_rank, out_dims);
        launch_binary(ctx.stream(), s, n, static_cast<const T*>(y.data<T>()), inputs[k]->data<const T>(),
                      y.data<T>(), Op{});
      }
    });
    return check_launch(Op::kName);
  }

 private:
  std::string node_;
};

// ---- Where ------------------------------------------------------------------------
// A select moves bytes only, so the values go as unsigned integers of their
// size: one kernel per size serves every type.

template <typename T>
__global__ void where_flat_kernel(const bool* c, const T* x, const T* y, T* o, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += grid_stride()) o[i] = c[i] ? x[i] : y[i];
}

template <typename IndexT, typename T>
__global__ void where_broadcast_kernel(const bool* c, const T* x, const T* y, T* o, IndexT n, BroadcastShape s) {
  const auto stride = static_cast<IndexT>(grid_stride());
  for (auto i = static_cast<IndexT>(thread_index()); i < n; i += stride) {
    IndexT off[3];
    broadcast_offsets<3>(s, i, off);
    o[i] = c[off[0]] ? x[off[1]] : y[off[2]];
  }
}

template <typename T>
void launch_where(cudaStream_t stream, const BroadcastShape& s, int64_t n, const void* c, const void* x, const void* y,
                  void* o) {
  const auto* cb = static_cast<const bool*>(c);
  const auto* xt = static_cast<const T*>(x);
  const auto* yt = static_cast<const T*>(y);
  auto* ot = static_cast<T*>(o);
  const unsigned grid = grid_size(n);
  if (all_inputs_flat(s)) {
    where_flat_kernel<T><<<grid, kThreadsPerBlock, 0, stream>>>(cb, xt, yt, ot, n);
  } else if (n <= kMax32BitElements) {
    // Scalar operands merge to one dim of stride 0: no division per element.
    where_broadcast_kernel<uint32_t, T>
        <<<grid, kThreadsPerBlock, 0, stream>>>(cb, xt, yt, ot, static_cast<uint32_t>(n), s);
  } else {
    where_broadcast_kernel<int64_t, T><<<grid, kThreadsPerBlock, 0, stream>>>(cb, xt, yt, ot, n, s);
  }
}

class WhereKernel final : public CudaKernel {
 public:
  WhereKernel(const KernelCreateInfo& info, Status& status) : node_(info.describe()) {
    const int32_t c = info.input_dtype(0);
    if (c != 0 && c != static_cast<int32_t>(DataType::kBool)) {
      status = info.error(std::string("condition has type ") + dtype_name(c) + ", expected bool");
      return;
    }
    const int32_t x = info.input_dtype(1);
    const int32_t y = info.input_dtype(2);
    if (x != 0 && !in_list<WhereTypes>(x)) {
      status = info.unsupported(std::string("input type ") + dtype_name(x) + " is not handled on CUDA");
      return;
    }
    if (x != 0 && y != 0 && x != y)
      status = info.error(std::string("input 2 has type ") + dtype_name(y) + ", expected " + dtype_name(x) +
          " (the type of input 1)");
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* inputs[3] = {ctx.input(0), ctx.input(1), ctx.input(2)};
    if (inputs[0] == nullptr || inputs[1] == nullptr || inputs[2] == nullptr)
      return runtime_error(node_ + ": inputs 0, 1 and 2 are required");
    if (inputs[0]->t.dtype != static_cast<int32_t>(DataType::kBool))
      return runtime_error(node_ + ": condition has type " + dtype_name(inputs[0]->t.dtype) + ", expected bool");
    const int32_t dtype = inputs[1]->t.dtype;
    if (inputs[2]->t.dtype != dtype)
      return runtime_error(node_ + ": input 2 has type " + dtype_name(inputs[2]->t.dtype) + ", expected " +
                           dtype_name(dtype));
    if (!in_list<WhereTypes>(dtype)) return runtime_error(type_error(node_, 1, dtype));
    int out_rank = 0;
    int64_t out_dims[SY_MAX_RANK] = {};
    SY_SDK_RETURN_IF_ERROR(broadcast_output(node_, inputs, 3, out_rank, out_dims));
    TensorRef out;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, dtype, out_rank, out_dims, out));
    const int64_t n = out.num_elements();
    if (n == 0) return ok_status();
    const int ranks[3] = {inputs[0]->rank(), inputs[1]->rank(), inputs[2]->rank()};
    const int64_t* dims[3] = {inputs[0]->dims(), inputs[1]->dims(), inputs[2]->dims()};
    BroadcastShape s;
    make_broadcast_shape(3, ranks, dims, out_rank, out_dims, s);
    const void* c = inputs[0]->data();
    const void* x = inputs[1]->data();
    const void* y = inputs[2]->data();
    // clang-format off
    switch (dtype_size(dtype)) {
      case 1: launch_where<uint8_t>(ctx.stream(), s, n, c, x, y, out.data()); break;
      case 2: launch_where<uint16_t>(ctx.stream(), s, n, c, x, y, out.data()); break;
      case 4: launch_where<uint32_t>(ctx.stream(), s, n, c, x, y, out.data()); break;
      case 8: launch_where<uint64_t>(ctx.stream(), s, n, c, x, y, out.data()); break;
      default: return runtime_error(type_error(node_, 1, dtype));
    }
    // clang-format on
    return check_launch("Where");
  }

 private:
  std::string node_;
};

// ---- Cast ---------------------------------------------------------------------------

// A value of a float type widened to float or double; integers unchanged.
template <typename T>
__device__ __forceinline__ auto widen(T v) {
  if constexpr (kIsHalf<T>) {
    return to_float(v);
  } else {
    return v;
  }
}

template <typename From, typename To>
__device__ __forceinline__ To convert(From v) {
  constexpr bool kFromFloat = kIsHalf<From> || std::is_floating_point_v<From>;
  if constexpr (std::is_same_v<From, To>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return widen(v) != 0;  // +-0 false, everything else (NaN too) true
  } else if constexpr (std::is_same_v<From, bool>) {
    return convert<uint8_t, To>(v ? 1 : 0);
  } else if constexpr (kIsHalf<To>) {
    // Through float, as the CPU kernels do (double rounds twice: to float,
    // then to the 16-bit type).
    return from_float<To>(static_cast<float>(widen(v)));
  } else if constexpr (std::is_integral_v<To> && kFromFloat && sizeof(To) < 4) {
    // Out of range is undefined in ONNX. The GPU's conversion saturates;
    // going through int64 wraps instead, as x86 and numpy do for the
    // narrow types (-1.0 -> uint8 255).
    return static_cast<To>(static_cast<int64_t>(widen(v)));
  } else {
    // Float to float rounds to nearest; float to int32 / int64 truncates
    // (saturating, NaN -> 0, on the GPU); integer to integer keeps the low
    // bits (two's complement), as the spec asks.
    return static_cast<To>(widen(v));
  }
}

template <typename From, typename To>
__global__ void cast_kernel(const From* x, To* y, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += grid_stride()) y[i] = convert<From, To>(x[i]);
}

// Cast-6 and on: attribute `to`. Cast-19 adds `saturate` and Cast-24
// `round_mode`, both only for float8 targets, which this kernel declines.
class CastKernel final : public CudaKernel {
 public:
  CastKernel(const KernelCreateInfo& info, Status& status) : node_(info.describe()) {
    const int64_t to = info.attr_int("to", -1);
    if (to <= 0 || to > kMaxDataTypeValue) {
      status = info.error(to == -1 ? std::string("attribute 'to' is required")
                                     : std::string("attribute 'to' is ") + std::to_string(to) + ", not a data type");
      return;
    }
    to_ = static_cast<int32_t>(to);
    if (!in_list<CastTypes>(to_)) {
      status = info.unsupported(std::string("Cast to ") + dtype_name(to_) + " (type " + std::to_string(to) +
          ") is not handled on CUDA");
      return;
    }
    const int32_t from = info.input_dtype(0);
    if (from != 0 && !in_list<CastTypes>(from)) {
      status = info.unsupported(std::string("Cast from ") + dtype_name(from) + " is not handled on CUDA");
      return;
    }
    if (info.since_version() >= 24) {
      const std::string mode = info.attr_string("round_mode", "up");
      if (mode != "up" && mode != "down" && mode != "nearest")
        status = info.error("attribute round_mode must be \"up\", \"down\" or \"nearest\", got \"" + mode + "\"");
    }
  }

  Status run(KernelRunContext& ctx) const override {
    const TensorRef* x = ctx.input(0);
    if (x == nullptr) return runtime_error(node_ + ": input 0 is missing");
    if (!in_list<CastTypes>(x->t.dtype)) return runtime_error(type_error(node_, 0, x->t.dtype));
    TensorRef y;
    SY_SDK_RETURN_IF_ERROR(ctx.allocate_output(0, to_, x->rank(), x->dims(), y));
    const int64_t n = x->num_elements();
    if (n == 0) return ok_status();
    if (x->t.dtype == to_) {
      // Same type: a plain copy, queued on the stream like the kernels.
      return cuda_status(cudaMemcpyAsync(y.data(), x->data(), x->byte_size(), cudaMemcpyDeviceToDevice, ctx.stream()),
                         "Cast (copy)");
    }
    visit_type(CastTypes{}, x->t.dtype, [&]<typename From>() {
      visit_type(CastTypes{}, to_, [&]<typename To>() {
        cast_kernel<From, To>
            <<<grid_size(n), kThreadsPerBlock, 0, ctx.stream()>>>(x->data<const From>(), y.data<To>(), n);
      });
    });
    return check_launch("Cast");
  }

 private:
  std::string node_;
  int32_t to_ = 0;
};

// ---- the table ------------------------------------------------------------------------
// Rows start at the version in effect at opset 7 (a later version that only
// widened the type list needs no row of its own: the mask decides).

template <typename Op, typename Types>
constexpr CudaKernelDef unary_row(const char* op, int since) {
  return {"", op, since, kLatest, 0, type_mask(Types{}), 0, &make_kernel<UnaryKernel<Op, Types>>};
}

template <typename Op, typename Types, bool kBoolOut>
constexpr CudaKernelDef binary_row(const char* op, int since) {
  return {"", op, since, kLatest, 0, type_mask(Types{}), 0, &make_kernel<BinaryKernel<Op, Types, kBoolOut>>};
}

using SignedNumericTypes = NumericTypes;  // Neg and Abs: the float types, int32, int64

const CudaKernelDef kElementwiseDefs[] = {
    // Unary; Relu-14 added integer types, which the mask leaves to the CPU.
    unary_row<ReluOp, FloatTypes>("Relu", 6),
    unary_row<SigmoidOp, FloatTypes>("Sigmoid", 6),
    unary_row<TanhOp, FloatTypes>("Tanh", 6),
    unary_row<ErfOp, FloatTypes>("Erf", 9),
    unary_row<SqrtOp, FloatTypes>("Sqrt", 6),
    unary_row<ExpOp, FloatTypes>("Exp", 6),
    unary_row<LogOp, FloatTypes>("Log", 6),
    unary_row<NegOp, SignedNumericTypes>("Neg", 6),
    unary_row<AbsOp, SignedNumericTypes>("Abs", 6),
    unary_row<ReciprocalOp, FloatTypes>("Reciprocal", 6),
    unary_row<FloorOp, FloatTypes>("Floor", 6),
    unary_row<CeilOp, FloatTypes>("Ceil", 6),
    unary_row<SoftplusOp, FloatTypes>("Softplus", 1),
    unary_row<LeakyReluOp, FloatTypes>("LeakyRelu", 6),
    unary_row<EluOp, FloatTypes>("Elu", 6),
    unary_row<HardSigmoidOp, FloatTypes>("HardSigmoid", 6),
    unary_row<HardSwishOp, FloatTypes>("HardSwish", 14),
    unary_row<GeluOp, FloatTypes>("Gelu", 20),
    unary_row<NotOp, BoolTypes>("Not", 1),
    // Clip-6 reads attributes min/max; from Clip-11 they are inputs 1 and 2,
    // on the device unless constant (ClipKernel picks by version).
    {"", "Clip", 6, 10, 0, type_mask(FloatTypes{}), 0, &make_kernel<ClipKernel>},
    {"", "Clip", 11, kLatest, 0, type_mask(FloatTypes{}), 0, &make_kernel<ClipKernel>},
    // Binary, broadcasting (Add-7 dropped the old broadcast/axis attributes).
    binary_row<AddOp, NumericTypes, false>("Add", 7),
    binary_row<SubOp, NumericTypes, false>("Sub", 7),
    binary_row<MulOp, NumericTypes, false>("Mul", 7),
    binary_row<DivOp, NumericTypes, false>("Div", 7),
    {"", "Pow", 7, kLatest, 0, type_mask(FloatTypes{}), 0, &make_kernel<PowKernel>},
    // Max-6 / Min-6 wanted equal shapes; broadcasting (Max-8 on) covers that.
    {"", "Max", 6, kLatest, 0, type_mask(NumericTypes{}), 0, &make_kernel<VariadicKernel<MaxOp>>},
    {"", "Min", 6, kLatest, 0, type_mask(NumericTypes{}), 0, &make_kernel<VariadicKernel<MinOp>>},
    binary_row<EqualOp, EqualTypes, true>("Equal", 7),
    binary_row<LessOp, NumericTypes, true>("Less", 7),
    binary_row<GreaterOp, NumericTypes, true>("Greater", 7),
    binary_row<LessOrEqualOp, NumericTypes, true>("LessOrEqual", 12),
    binary_row<GreaterOrEqualOp, NumericTypes, true>("GreaterOrEqual", 12),
    binary_row<AndOp, BoolTypes, true>("And", 7),
    binary_row<OrOp, BoolTypes, true>("Or", 7),
    binary_row<XorOp, BoolTypes, true>("Xor", 7),
    // Where: the type constraint is on X (input 1).
    {"", "Where", 9, kLatest, 1, type_mask(WhereTypes{}), 0, &make_kernel<WhereKernel>},
    {"", "Cast", 6, kLatest, 0, type_mask(CastTypes{}), 0, &make_kernel<CastKernel>},
};

}  // namespace

std::span<const CudaKernelDef> elementwise_kernel_defs() { return kElementwiseDefs; }

}  // namespace sy::cuda
