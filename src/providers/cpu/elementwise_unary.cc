// Unary element-wise kernels: math functions, activations, Clip, IsNaN,
// IsInf, Not, BitwiseNot. 16-bit floats are computed in float. The hot float
// functions (Exp, Erf, Tanh, Sigmoid, Gelu) use the vectorizable versions
// from elementwise_common.h instead of per-element library calls.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "providers/cpu/activation_simd.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// ---- ops without attributes -------------------------------------------------
// (Stateless lambdas are default-constructible types in C++20.)

struct AbsOp {
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else if constexpr (std::is_floating_point_v<C>) {
      return std::fabs(x);
    } else {
      // abs(INT_MIN) wraps to INT_MIN, as in numpy.
      return x < C{0} ? wrap_sub(C{0}, x) : x;
    }
  }
};
struct NegOp {
  template <typename C>
  C operator()(C x) const {
    return wrap_sub(C{0}, x);
  }
};
struct SignOp {
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      return select(x > C{0}, C{1}, select(x < C{0}, C{-1}, select(x != x, x, C{0})));
    } else if constexpr (std::is_unsigned_v<C>) {
      return x > C{0} ? C{1} : C{0};
    } else {
      return x > C{0} ? C{1} : (x < C{0} ? C{-1} : C{0});
    }
  }
};
struct ReluOp {
  template <typename C>
  C operator()(C x) const {
    return select(x < C{0}, C{0}, x);
  }
};
struct ReciprocalOp {
  template <typename C>
  C operator()(C x) const {
    return C{1} / x;
  }
};
struct ExpOp {
  template <typename C>
  C operator()(C x) const {
    return fast_exp(x);
  }
};
struct ErfOp {
  template <typename C>
  C operator()(C x) const {
    return fast_erf(x);
  }
};
struct TanhOp {
  static constexpr SimdActivation kSimd = SimdActivation::kTanh;  // float32 runs the per-ISA loop
  template <typename C>
  C operator()(C x) const {
    return fast_tanh(x);
  }
};
struct SigmoidOp {
  static constexpr SimdActivation kSimd = SimdActivation::kSigmoid;  // float32 runs the per-ISA loop
  template <typename C>
  C operator()(C x) const {
    return fast_sigmoid(x);
  }
};
struct SoftsignOp {
  template <typename C>
  C operator()(C x) const {
    return x / (C{1} + std::fabs(x));
  }
};
// log(1 + e^x) without overflow for large x.
template <typename C>
inline C softplus(C x) {
  return x > C{0} ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
struct SoftplusOp {
  template <typename C>
  C operator()(C x) const {
    return softplus(x);
  }
};
struct MishOp {
  template <typename C>
  C operator()(C x) const {
    return x * std::tanh(softplus(x));
  }
};
struct HardSwishOp {
  template <typename C>
  C operator()(C x) const {
    // (x + 3) / 6 rather than x / 6 + 1/2: no cancellation near x = -3.
    C t = (x + C{3}) * static_cast<C>(1.0 / 6.0);
    t = select(t < C{0}, C{0}, t);
    t = select(t > C{1}, C{1}, t);
    return x * t;
  }
};
struct IsNaNOp {
  template <typename C>
  bool operator()(C x) const {
    return x != x;
  }
};
struct NotOp {
  bool operator()(bool x) const { return !x; }
};
struct BitwiseNotOp {
  template <typename C>
  C operator()(C x) const {
    return static_cast<C>(~x);
  }
};

using FloorOp = decltype([](auto x) { return static_cast<decltype(x)>(std::floor(x)); });
using CeilOp = decltype([](auto x) { return static_cast<decltype(x)>(std::ceil(x)); });
using RoundOp = decltype([](auto x) { return static_cast<decltype(x)>(std::nearbyint(x)); });  // ties to even, the default rounding mode
using SqrtOp = decltype([](auto x) { return static_cast<decltype(x)>(std::sqrt(x)); });
using LogOp = decltype([](auto x) { return static_cast<decltype(x)>(std::log(x)); });
using SinOp = decltype([](auto x) { return static_cast<decltype(x)>(std::sin(x)); });
using CosOp = decltype([](auto x) { return static_cast<decltype(x)>(std::cos(x)); });
using TanOp = decltype([](auto x) { return static_cast<decltype(x)>(std::tan(x)); });
using AsinOp = decltype([](auto x) { return static_cast<decltype(x)>(std::asin(x)); });
using AcosOp = decltype([](auto x) { return static_cast<decltype(x)>(std::acos(x)); });
using AtanOp = decltype([](auto x) { return static_cast<decltype(x)>(std::atan(x)); });
using SinhOp = decltype([](auto x) { return static_cast<decltype(x)>(std::sinh(x)); });
using CoshOp = decltype([](auto x) { return static_cast<decltype(x)>(std::cosh(x)); });
using AsinhOp = decltype([](auto x) { return static_cast<decltype(x)>(std::asinh(x)); });
using AcoshOp = decltype([](auto x) { return static_cast<decltype(x)>(std::acosh(x)); });
using AtanhOp = decltype([](auto x) { return static_cast<decltype(x)>(std::atanh(x)); });

// ---- ops with attributes --------------------------------------------------------
// Each reads its attributes from the node at kernel creation.

struct LeakyReluOp {
  float alpha;
  explicit LeakyReluOp(const Node& n) : alpha(n.attr_float("alpha", 0.01f)) {}
  template <typename C>
  C operator()(C x) const {
    return select(x < C{0}, static_cast<C>(alpha) * x, x);
  }
};
struct EluOp {
  float alpha;
  explicit EluOp(const Node& n) : alpha(n.attr_float("alpha", 1.0f)) {}
  template <typename C>
  C operator()(C x) const {
    return x < C{0} ? static_cast<C>(alpha) * std::expm1(x) : x;
  }
};
struct SeluOp {
  float alpha;
  float gamma;
  explicit SeluOp(const Node& n)
      : alpha(n.attr_float("alpha", 1.67326319217681884765625f)),
        gamma(n.attr_float("gamma", 1.05070102214813232421875f)) {}
  template <typename C>
  C operator()(C x) const {
    const auto g = static_cast<C>(gamma);
    return x > C{0} ? g * x : g * static_cast<C>(alpha) * std::expm1(x);
  }
};
struct CeluOp {
  float alpha;
  explicit CeluOp(const Node& n) : alpha(n.attr_float("alpha", 1.0f)) {}
  template <typename C>
  C operator()(C x) const {
    const auto a = static_cast<C>(alpha);
    return x > C{0} ? x : a * std::expm1(x / a);
  }
};
struct ThresholdedReluOp {
  float alpha;
  explicit ThresholdedReluOp(const Node& n) : alpha(n.attr_float("alpha", 1.0f)) {}
  template <typename C>
  C operator()(C x) const {
    return select(x > static_cast<C>(alpha), x, C{0});
  }
};
struct HardSigmoidOp {
  float alpha;
  float beta;
  explicit HardSigmoidOp(const Node& n) : alpha(n.attr_float("alpha", 0.2f)), beta(n.attr_float("beta", 0.5f)) {}
  template <typename C>
  C operator()(C x) const {
    // In double: alpha * x + beta cancels near x = -beta / alpha, and the
    // product of two floats is exact in double.
    double t = static_cast<double>(alpha) * static_cast<double>(x) + static_cast<double>(beta);
    t = select(t < 0.0, 0.0, t);
    return static_cast<C>(select(t > 1.0, 1.0, t));
  }
};
struct ShrinkOp {
  float lambd;
  float bias;
  explicit ShrinkOp(const Node& n) : lambd(n.attr_float("lambd", 0.5f)), bias(n.attr_float("bias", 0.0f)) {}
  template <typename C>
  C operator()(C x) const {
    // Integers compare and shift in double, so that a fractional lambd or
    // bias means what it says.
    using W = std::conditional_t<std::is_floating_point_v<C>, C, double>;
    const auto v = static_cast<W>(x);
    const auto l = static_cast<W>(lambd);
    const auto b = static_cast<W>(bias);
    return static_cast<C>(v < -l ? v + b : (v > l ? v - b : W{0}));
  }
};
struct IsInfOp {
  bool negative;
  bool positive;
  explicit IsInfOp(const Node& n)
      : negative(n.attr_int("detect_negative", 1) != 0), positive(n.attr_int("detect_positive", 1) != 0) {}
  template <typename C>
  bool operator()(C x) const {
    constexpr C kInf = std::numeric_limits<C>::infinity();
    return (positive && x == kInf) || (negative && x == -kInf);
  }
};
struct GeluOp {
  bool tanh_approximation = false;
  GeluOp(const KernelCreateContext& ctx, Status& status) {
    const std::string approximate = ctx.node().attr_string("approximate", "none");
    if (approximate != "none" && approximate != "tanh") {
      status = ctx.error("attribute approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
      return;
    }
    tanh_approximation = approximate == "tanh";
  }
};

// ---- kernels ------------------------------------------------------------------

template <typename T, typename TO, typename Op>
void unary_loop(ThreadPool& pool, const T* x, TO* y, int64_t n, int64_t min_chunk, const Op& op) {
  parallel_range(pool, n, min_chunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = store<TO>(op(load(x[i])));
  });
}

// The float32 path of Gelu, Sigmoid and Tanh: the per-ISA span loop.
void run_simd_activation(ThreadPool& pool, SimdActivation f, const float* x, float* y, int64_t n) {
  pool.parallel_for(n, kMathChunk, [&](int64_t begin, int64_t end) { activation_f32(f, x + begin, y + begin, end - begin); });
}

template <typename Op>
Op make_op(const KernelCreateContext& ctx, Status& status) {
  if constexpr (std::is_constructible_v<Op, const KernelCreateContext&, Status&>) {
    return Op(ctx, status);
  } else if constexpr (std::is_constructible_v<Op, const Node&>) {
    return Op(ctx.node());
  } else {
    return Op{};
  }
}

template <typename Op, typename Types, bool kBoolOut = false, int64_t kChunk = kMathChunk>
class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(const KernelCreateContext& ctx, Status& status) : op_(make_op<Op>(ctx, status)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return kernel_error(ctx, "input 0 is missing");
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, kBoolOut ? DataType::kBool : x->dtype(), x->shape()));
    if constexpr (requires { Op::kSimd; }) {
      if (x->dtype() == DataType::kFloat) {
        run_simd_activation(ctx.thread_pool(), Op::kSimd, x->data<float>(), y->data<float>(), x->num_elements());
        return ok_status();
      }
    }
    const bool handled = visit_type(Types{}, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using TO = std::conditional_t<kBoolOut, bool, T>;
      unary_loop(ctx.thread_pool(), x->data<T>(), y->data<TO>(), x->num_elements(), kChunk, op_);
    });
    if (!handled)
      return kernel_error(ctx, "input 0 has unsupported type " + std::string(data_type_name(x->dtype())));
    return ok_status();
  }

 private:
  Op op_;
};

// Gelu picks its formula once, at creation.
class GeluKernel final : public Kernel {
 public:
  GeluKernel(const KernelCreateContext& ctx, Status& status) : op_(ctx, status) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return kernel_error(ctx, "input 0 is missing");
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    if (x->dtype() == DataType::kFloat) {  // the models' case: the per-ISA loop
      run_simd_activation(ctx.thread_pool(),
                          op_.tanh_approximation ? SimdActivation::kGeluTanh : SimdActivation::kGeluErf,
                          x->data<float>(), y->data<float>(), x->num_elements());
      return ok_status();
    }
    const bool handled = visit_type(FloatTypes{}, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      if (op_.tanh_approximation) {
        unary_loop(ctx.thread_pool(), x->data<T>(), y->data<T>(), x->num_elements(), kMathChunk,
                   [](C v) { return fast_gelu_tanh(v); });
      } else {
        unary_loop(ctx.thread_pool(), x->data<T>(), y->data<T>(), x->num_elements(), kMathChunk,
                   [](C v) { return fast_gelu(v); });
      }
    });
    if (!handled)
      return kernel_error(ctx, "input 0 has unsupported type " + std::string(data_type_name(x->dtype())));
    return ok_status();
  }

 private:
  GeluOp op_;
};

// Clip: bounds from attributes before opset 11, from optional scalar inputs
// after. A missing bound does not clip.
class ClipKernel final : public Kernel {
 public:
  ClipKernel(const KernelCreateContext& ctx, Status& /*status*/) {
    if (ctx.opset() < 11) {
      from_attributes_ = true;
      min_ = ctx.node().attr_float("min", std::numeric_limits<float>::lowest());
      max_ = ctx.node().attr_float("max", std::numeric_limits<float>::max());
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return kernel_error(ctx, "input 0 is missing");
    for (size_t i = 1; i <= 2; ++i) {
      const Tensor* b = ctx.input(i);
      if (b == nullptr) continue;
      if (b->dtype() != x->dtype())
        return kernel_error(ctx, std::string(i == 1 ? "min" : "max") + " has type " +
                                     std::string(data_type_name(b->dtype())) + ", expected " +
                                     std::string(data_type_name(x->dtype())) + " (the type of input)");
      if (b->num_elements() != 1)
        return kernel_error(ctx, std::string(i == 1 ? "min" : "max") + " must be a scalar, got shape " +
                                     b->shape().to_string());
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    const bool handled = visit_type(NumericTypes{}, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      C lo = lowest_value<T>();
      C hi = highest_value<T>();
      if (from_attributes_) {
        lo = static_cast<C>(min_);
        hi = static_cast<C>(max_);
      }
      if (const Tensor* b = ctx.input(1)) lo = load(b->data<T>()[0]);
      if (const Tensor* b = ctx.input(2)) hi = load(b->data<T>()[0]);
      unary_loop(ctx.thread_pool(), x->data<T>(), y->data<T>(), x->num_elements(), kCheapChunk, [lo, hi](C v) {
        v = select(v < lo, lo, v);
        return select(v > hi, hi, v);
      });
    });
    if (!handled)
      return kernel_error(ctx, "input 0 has unsupported type " + std::string(data_type_name(x->dtype())));
    return ok_status();
  }

 private:
  bool from_attributes_ = false;
  float min_ = 0.0f;
  float max_ = 0.0f;
};

// ---- the table ------------------------------------------------------------------

template <typename Op, typename Types, bool kBoolOut = false, int64_t kChunk = kMathChunk>
constexpr KernelDef unary_row(std::string_view op, int since, int end = kLatestVersion) {
  return {"", op, since, end, 0, type_mask(Types{}), &make_kernel<UnaryKernel<Op, Types, kBoolOut, kChunk>>};
}

using SignedNumericTypes = decltype(FloatTypes{} + SignedIntTypes{});

constexpr KernelDef kUnaryKernels[] = {
    unary_row<AbsOp, NumericTypes, false, kCheapChunk>("Abs", 6),
    unary_row<NegOp, SignedNumericTypes, false, kCheapChunk>("Neg", 6),
    unary_row<ReciprocalOp, FloatTypes, false, kCheapChunk>("Reciprocal", 6),
    unary_row<FloorOp, FloatTypes>("Floor", 6),
    unary_row<CeilOp, FloatTypes>("Ceil", 6),
    unary_row<RoundOp, FloatTypes>("Round", 11),
    unary_row<SqrtOp, FloatTypes>("Sqrt", 6),
    unary_row<ExpOp, FloatTypes>("Exp", 6),
    unary_row<LogOp, FloatTypes>("Log", 6),
    unary_row<SinOp, FloatTypes>("Sin", 7),
    unary_row<CosOp, FloatTypes>("Cos", 7),
    unary_row<TanOp, FloatTypes>("Tan", 7),
    unary_row<AsinOp, FloatTypes>("Asin", 7),
    unary_row<AcosOp, FloatTypes>("Acos", 7),
    unary_row<AtanOp, FloatTypes>("Atan", 7),
    unary_row<SinhOp, FloatTypes>("Sinh", 9),
    unary_row<CoshOp, FloatTypes>("Cosh", 9),
    unary_row<AsinhOp, FloatTypes>("Asinh", 9),
    unary_row<AcoshOp, FloatTypes>("Acosh", 9),
    unary_row<AtanhOp, FloatTypes>("Atanh", 9),
    unary_row<SignOp, NumericTypes, false, kCheapChunk>("Sign", 9),
    unary_row<ErfOp, FloatTypes>("Erf", 9),
    unary_row<TanhOp, FloatTypes>("Tanh", 6),
    unary_row<SigmoidOp, FloatTypes>("Sigmoid", 6),
    unary_row<ReluOp, SignedNumericTypes, false, kCheapChunk>("Relu", 6),
    unary_row<LeakyReluOp, FloatTypes, false, kCheapChunk>("LeakyRelu", 6),
    unary_row<EluOp, FloatTypes>("Elu", 6),
    unary_row<SeluOp, FloatTypes>("Selu", 6),
    unary_row<CeluOp, FloatTypes>("Celu", 12),
    unary_row<ThresholdedReluOp, FloatTypes, false, kCheapChunk>("ThresholdedRelu", 10),
    unary_row<HardSigmoidOp, FloatTypes, false, kCheapChunk>("HardSigmoid", 6),
    unary_row<HardSwishOp, FloatTypes, false, kCheapChunk>("HardSwish", 14),
    unary_row<SoftplusOp, FloatTypes>("Softplus", 1),
    unary_row<SoftsignOp, FloatTypes, false, kCheapChunk>("Softsign", 1),
    unary_row<MishOp, FloatTypes>("Mish", 18),
    {"", "Gelu", 20, kLatestVersion, 0, type_mask(FloatTypes{}), &make_kernel<GeluKernel>},
    unary_row<ShrinkOp, NumericTypes, false, kCheapChunk>("Shrink", 9),
    unary_row<NotOp, BoolTypes, true, kCheapChunk>("Not", 1),
    unary_row<BitwiseNotOp, IntTypes, false, kCheapChunk>("BitwiseNot", 18),
    unary_row<IsNaNOp, FloatTypes, true, kCheapChunk>("IsNaN", 9),
    unary_row<IsInfOp, FloatTypes, true, kCheapChunk>("IsInf", 10),
    {"", "Clip", 6, kLatestVersion, 0, type_mask(NumericTypes{}), &make_kernel<ClipKernel>},
};

}  // namespace

std::span<const KernelDef> elementwise_unary_kernels() { return kUnaryKernels; }

}  // namespace sy::cpu
