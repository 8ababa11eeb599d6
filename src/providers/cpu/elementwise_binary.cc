// Binary and variadic element-wise kernels with numpy broadcasting:
// arithmetic, Pow, Mod, comparisons, logic, bitwise ops, Max/Min/Sum/Mean,
// PRelu and Where.
#include <cmath>
#include <string>
#include <type_traits>

#include "providers/cpu/elementwise_broadcast.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// ---- the inner loops ------------------------------------------------------

// One run of the innermost dim. Each input either moves (stride 1) or stays
// (stride 0); the three cases get their own loop so each vectorizes.
template <typename TA, typename TB, typename TO, typename Op>
inline void binary_run(const TA* a, bool a_moves, const TB* b, bool b_moves, TO* o, int64_t n, const Op& op) {
  if (a_moves && b_moves) {
    for (int64_t i = 0; i < n; ++i) o[i] = store<TO>(op(load(a[i]), load(b[i])));
  } else if (b_moves) {
    const auto av = load(a[0]);
    for (int64_t i = 0; i < n; ++i) o[i] = store<TO>(op(av, load(b[i])));
  } else if (a_moves) {
    const auto bv = load(b[0]);
    for (int64_t i = 0; i < n; ++i) o[i] = store<TO>(op(load(a[i]), bv));
  } else {
    const TO v = store<TO>(op(load(a[0]), load(b[0])));
    for (int64_t i = 0; i < n; ++i) o[i] = v;
  }
}

template <typename TA, typename TB, typename TO, typename Op>
void broadcast_binary(ThreadPool& pool, const BroadcastPlan& plan, const TA* a, const TB* b, TO* o, int64_t min_chunk,
                      const Op& op) {
  parallel_range(pool, plan.total, min_chunk, [&](int64_t begin, int64_t end) {
    for_each_run(plan, begin, end, [&](int64_t out, const int64_t* in, int64_t n) {
      binary_run(a + in[0], plan.inner_moves[0], b + in[1], plan.inner_moves[1], o + out, n, op);
    });
  });
}

// Plan for two inputs broadcast together; out gets the broadcast shape.
Status plan_binary(const KernelContext& ctx, const Tensor& a, const Tensor& b, Shape& out, BroadcastPlan& plan) {
  const Shape* shapes[] = {&a.shape(), &b.shape()};
  SY_RETURN_IF_ERROR(broadcast_shapes(ctx, shapes, out));
  return make_broadcast_plan(ctx, shapes, out, plan);
}

Status require_inputs(const KernelContext& ctx, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (ctx.input(i) == nullptr) return kernel_error(ctx, "input " + std::to_string(i) + " is missing");
  return ok_status();
}

Status require_same_dtype(const KernelContext& ctx, size_t i, size_t j) {
  const DataType a = ctx.input(i)->dtype();
  const DataType b = ctx.input(j)->dtype();
  if (a == b) return ok_status();
  return kernel_error(ctx, "input " + std::to_string(j) + " has type " + std::string(data_type_name(b)) +
                               ", expected " + std::string(data_type_name(a)) + " (the type of input " +
                               std::to_string(i) + ")");
}

// The common start of a two-input broadcasting kernel: both inputs present
// (and of one type when `same_dtype`), the broadcast plan, and output 0
// allocated with `out_dtype` (kUndefined: input 0's type).
struct BinaryArgs {
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  Tensor* y = nullptr;
  BroadcastPlan plan;
};

Status prepare_binary(KernelContext& ctx, bool same_dtype, DataType out_dtype, BinaryArgs& args) {
  SY_RETURN_IF_ERROR(require_inputs(ctx, 2));
  if (same_dtype) SY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  args.a = ctx.input(0);
  args.b = ctx.input(1);
  Shape out_shape;
  SY_RETURN_IF_ERROR(plan_binary(ctx, *args.a, *args.b, out_shape, args.plan));
  SY_ASSIGN_OR_RETURN(args.y, ctx.allocate_output(0, out_dtype == DataType::kUndefined ? args.a->dtype() : out_dtype,
                                                  out_shape));
  return ok_status();
}

Status unsupported_dtype(const KernelContext& ctx, size_t i) {
  return kernel_error(ctx, "input " + std::to_string(i) + " has unsupported type " +
                               std::string(data_type_name(ctx.input(i)->dtype())));
}

// ---- integer helpers --------------------------------------------------------
// Integer division by zero and INT_MIN / -1 trap on x86; ONNX leaves them
// undefined, so they give 0 and wrap instead of killing the process.

template <typename C>
inline C int_div(C a, C b) {
  if (b == 0) return C{0};
  if constexpr (std::is_signed_v<C>) {
    if (b == -1) return static_cast<C>(C{0} - static_cast<std::make_unsigned_t<C>>(a));
  }
  return static_cast<C>(a / b);
}

template <typename C>
inline C int_rem(C a, C b) {
  if (b == 0) return C{0};
  if constexpr (std::is_signed_v<C>) {
    if (b == -1) return C{0};
  }
  return static_cast<C>(a % b);
}

// x^y for integers, wrapping on overflow; negative exponents give the
// integer part of the true result (0 unless |x| == 1).
template <typename C, typename E>
inline C int_pow(C x, E y) {
  if (y < 0) {
    if (x == 1) return C{1};
    if constexpr (std::is_signed_v<C>) {
      if (x == -1) return (y % 2 == 0) ? C{1} : C{-1};
    }
    return C{0};
  }
  using U = std::make_unsigned_t<C>;
  U result = 1;
  U base = static_cast<U>(x);
  auto e = static_cast<std::make_unsigned_t<E>>(y);
  while (e != 0) {
    if (e & 1u) result = static_cast<U>(result * base);
    base = static_cast<U>(base * base);
    e >>= 1;
  }
  return static_cast<C>(result);
}

// ---- the ops ----------------------------------------------------------------

struct AddOp {
  template <typename C>
  C operator()(C a, C b) const {
    return wrap_add(a, b);
  }
};
struct SubOp {
  template <typename C>
  C operator()(C a, C b) const {
    return wrap_sub(a, b);
  }
};
struct MulOp {
  template <typename C>
  C operator()(C a, C b) const {
    return wrap_mul(a, b);
  }
};
struct DivOp {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return int_div(a, b);
    } else {
      return a / b;
    }
  }
};
// Max and Min propagate NaN, like numpy's maximum / minimum.
struct MaxOp {
  template <typename C>
  C operator()(C a, C b) const {
    return select((a != a) | (a > b), a, b);
  }
};
struct MinOp {
  template <typename C>
  C operator()(C a, C b) const {
    return select((a != a) | (a < b), a, b);
  }
};
// Python's %, whose result takes the divisor's sign (Mod with fmod = 0).
struct ModOp {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      C r = int_rem(a, b);
      if constexpr (std::is_signed_v<C>) {
        if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
      }
      return r;
    } else {
      C r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  }
};
// C's fmod / %, whose result takes the dividend's sign (fmod = 1).
struct FmodOp {
  template <typename C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return int_rem(a, b);
    } else {
      return std::fmod(a, b);
    }
  }
};
struct EqualOp {
  template <typename C>
  bool operator()(const C& a, const C& b) const {
    return a == b;
  }
};
struct LessOp {
  template <typename C>
  bool operator()(C a, C b) const {
    return a < b;
  }
};
struct GreaterOp {
  template <typename C>
  bool operator()(C a, C b) const {
    return a > b;
  }
};
struct LessOrEqualOp {
  template <typename C>
  bool operator()(C a, C b) const {
    return a <= b;
  }
};
struct GreaterOrEqualOp {
  template <typename C>
  bool operator()(C a, C b) const {
    return a >= b;
  }
};
struct AndOp {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp {
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp {
  bool operator()(bool a, bool b) const { return a != b; }
};
struct BitwiseAndOp {
  template <typename C>
  C operator()(C a, C b) const {
    return static_cast<C>(a & b);
  }
};
struct BitwiseOrOp {
  template <typename C>
  C operator()(C a, C b) const {
    return static_cast<C>(a | b);
  }
};
struct BitwiseXorOp {
  template <typename C>
  C operator()(C a, C b) const {
    return static_cast<C>(a ^ b);
  }
};
// Shifts by the type's width or more give 0 (C leaves them undefined).
struct ShiftLeftOp {
  template <typename C>
  C operator()(C a, C b) const {
    return b >= static_cast<C>(sizeof(C) * 8) ? C{0} : static_cast<C>(a << b);
  }
};
struct ShiftRightOp {
  template <typename C>
  C operator()(C a, C b) const {
    return b >= static_cast<C>(sizeof(C) * 8) ? C{0} : static_cast<C>(a >> b);
  }
};
struct PReluOp {
  template <typename C>
  C operator()(C x, C slope) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else {
      return select(x < C{0}, static_cast<C>(x * slope), x);
    }
  }
};

// ---- kernels ----------------------------------------------------------------

// Two inputs of the same type T; output T, or bool for comparisons.
template <typename Op, typename Types, bool kBoolOut, int64_t kChunk = kCheapChunk>
class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(const KernelCreateContext& /*ctx*/, Status& /*status*/) {}

  Status run(KernelContext& ctx) const override {
    BinaryArgs args;
    SY_RETURN_IF_ERROR(prepare_binary(ctx, true, kBoolOut ? DataType::kBool : DataType::kUndefined, args));
    const Tensor& a = *args.a;
    const Tensor& b = *args.b;
    Tensor* y = args.y;
    const BroadcastPlan& plan = args.plan;
    const bool handled = visit_type(Types{}, a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using TO = std::conditional_t<kBoolOut, bool, T>;
      broadcast_binary(ctx.thread_pool(), plan, a.data<T>(), b.data<T>(), y->data<TO>(), kChunk, Op{});
    });
    return handled ? ok_status() : unsupported_dtype(ctx, 0);
  }
};

class ModKernel final : public Kernel {
 public:
  ModKernel(const KernelCreateContext& ctx, Status& status) {
    const int64_t fmod = ctx.node().attr_int("fmod", 0);
    if (fmod != 0 && fmod != 1) {
      status = ctx.error("attribute fmod must be 0 or 1, got " + std::to_string(fmod));
      return;
    }
    fmod_ = fmod == 1;
  }

  Status run(KernelContext& ctx) const override {
    BinaryArgs args;
    SY_RETURN_IF_ERROR(prepare_binary(ctx, true, DataType::kUndefined, args));
    const Tensor& a = *args.a;
    const Tensor& b = *args.b;
    Tensor* y = args.y;
    const BroadcastPlan& plan = args.plan;
    const bool handled = visit_type(NumericTypes{}, a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (fmod_) {
        broadcast_binary(ctx.thread_pool(), plan, a.data<T>(), b.data<T>(), y->data<T>(), kCheapChunk, FmodOp{});
      } else {
        broadcast_binary(ctx.thread_pool(), plan, a.data<T>(), b.data<T>(), y->data<T>(), kCheapChunk, ModOp{});
      }
    });
    return handled ? ok_status() : unsupported_dtype(ctx, 0);
  }

 private:
  bool fmod_ = false;
};

class BitShiftKernel final : public Kernel {
 public:
  BitShiftKernel(const KernelCreateContext& ctx, Status& status) {
    const std::string direction = ctx.node().attr_string("direction", "");
    if (direction != "LEFT" && direction != "RIGHT") {
      status = ctx.error("attribute direction must be \"LEFT\" or \"RIGHT\", got \"" + direction + "\"");
      return;
    }
    left_ = direction == "LEFT";
  }

  Status run(KernelContext& ctx) const override {
    BinaryArgs args;
    SY_RETURN_IF_ERROR(prepare_binary(ctx, true, DataType::kUndefined, args));
    const Tensor& a = *args.a;
    const Tensor& b = *args.b;
    Tensor* y = args.y;
    const BroadcastPlan& plan = args.plan;
    const bool handled = visit_type(UnsignedIntTypes{}, a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (left_) {
        broadcast_binary(ctx.thread_pool(), plan, a.data<T>(), b.data<T>(), y->data<T>(), kCheapChunk, ShiftLeftOp{});
      } else {
        broadcast_binary(ctx.thread_pool(), plan, a.data<T>(), b.data<T>(), y->data<T>(), kCheapChunk,
                         ShiftRightOp{});
      }
    });
    return handled ? ok_status() : unsupported_dtype(ctx, 0);
  }

 private:
  bool left_ = true;
};

// Pow: the exponent's type may differ from the base's.
using PowBaseTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t>;
using PowExponentTypes = NumericTypes;

template <typename CB>
struct PowOp {
  template <typename CE>
  CB operator()(CB x, CE y) const {
    if constexpr (std::is_floating_point_v<CB>) {
      return std::pow(x, static_cast<CB>(y));
    } else if constexpr (std::is_integral_v<CE>) {
      return int_pow(x, y);
    } else {
      // The power of an integer can be far outside CB; float_to_int gives it
      // a defined value (see elementwise_common.h).
      return float_to_int<CB>(std::pow(static_cast<double>(x), static_cast<double>(load(y))));
    }
  }
};

class PowKernel final : public Kernel {
 public:
  PowKernel(const KernelCreateContext& /*ctx*/, Status& /*status*/) {}

  Status run(KernelContext& ctx) const override {
    BinaryArgs args;
    SY_RETURN_IF_ERROR(prepare_binary(ctx, false, DataType::kUndefined, args));
    const Tensor& a = *args.a;
    const Tensor& b = *args.b;
    Tensor* y = args.y;
    const BroadcastPlan& plan = args.plan;
    bool exponent_ok = true;
    const bool handled = visit_type(PowBaseTypes{}, a.dtype(), [&](auto base_tag) {
      using TB = typename decltype(base_tag)::type;
      using CB = compute_t<TB>;
      // Models square and take roots through Pow with a constant exponent;
      // those get plain multiplies instead of pow() calls.
      if constexpr (std::is_floating_point_v<CB>) {
        if (b.num_elements() == 1 && plan.rank <= 1 && (b.dtype() == DataType::kFloat || b.dtype() == DataType::kDouble)) {
          const double e = b.dtype() == DataType::kFloat ? static_cast<double>(*b.data<float>()) : *b.data<double>();
          if (pow_special(ctx, a.data<TB>(), y->data<TB>(), y->num_elements(), e)) return;
        }
      }
      exponent_ok = visit_type(PowExponentTypes{}, b.dtype(), [&](auto exp_tag) {
        using TE = typename decltype(exp_tag)::type;
        broadcast_binary(ctx.thread_pool(), plan, a.data<TB>(), b.data<TE>(), y->data<TB>(), kMathChunk,
                         PowOp<CB>{});
      });
    });
    if (!handled) return unsupported_dtype(ctx, 0);
    return exponent_ok ? ok_status() : unsupported_dtype(ctx, 1);
  }

 private:
  template <typename T>
  static bool pow_special(const KernelContext& ctx, const T* x, T* y, int64_t n, double e) {
    using C = compute_t<T>;
    auto apply = [&](auto f) {
      parallel_range(ctx.thread_pool(), n, kCheapChunk, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = store<T>(f(load(x[i])));
      });
    };
    if (e == 2.0) {
      apply([](C v) { return v * v; });
    } else if (e == 3.0) {
      apply([](C v) { return v * v * v; });
    } else if (e == 1.0) {
      apply([](C v) { return v; });
    } else if (e == 0.5) {
      apply([](C v) { return std::sqrt(v); });
    } else if (e == -1.0) {
      apply([](C v) { return C{1} / v; });
    } else {
      return false;
    }
    return true;
  }
};

// Max, Min, Sum, Mean: any number of inputs, all broadcast together.
template <typename Op, typename Types, bool kMean>
class VariadicKernel final : public Kernel {
 public:
  VariadicKernel(const KernelCreateContext& /*ctx*/, Status& /*status*/) {}

  Status run(KernelContext& ctx) const override {
    constexpr size_t kMaxInputs = 64;
    const size_t n = ctx.num_inputs();
    if (n == 0) return kernel_error(ctx, "needs at least one input");
    if (n > kMaxInputs)
      return not_implemented(ctx.node().describe() + ": more than " + std::to_string(kMaxInputs) + " inputs");
    SY_RETURN_IF_ERROR(require_inputs(ctx, n));
    const Shape* shapes[kMaxInputs];
    for (size_t i = 0; i < n; ++i) {
      SY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, i));
      shapes[i] = &ctx.input(i)->shape();
    }
    Shape out_shape;
    SY_RETURN_IF_ERROR(broadcast_shapes(ctx, std::span<const Shape* const>(shapes, n), out_shape));
    const DataType dtype = ctx.input(0)->dtype();
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype, out_shape));
    Status status;
    const bool handled = visit_type(Types{}, dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      status = accumulate<T>(ctx, shapes, n, out_shape, y->data<T>());
    });
    if (!handled) return unsupported_dtype(ctx, 0);
    return status;
  }

 private:
  struct FirstOp {
    template <typename C>
    C operator()(C a, C /*b*/) const {
      return a;
    }
  };

  // y = in0 op in1, then y = y op in_k for the rest (in place: y's run and
  // offsets are the output's own, so each element is read before written).
  template <typename T>
  static Status accumulate(KernelContext& ctx, const Shape* const* shapes, size_t n, const Shape& out_shape, T* y) {
    BroadcastPlan plan;
    const T* x0 = ctx.input(0)->data<T>();
    if (n == 1) {
      const Shape* s[] = {shapes[0], shapes[0]};
      SY_RETURN_IF_ERROR(make_broadcast_plan(ctx, s, out_shape, plan));
      broadcast_binary(ctx.thread_pool(), plan, x0, x0, y, kCheapChunk, FirstOp{});
    } else {
      const Shape* s[] = {shapes[0], shapes[1]};
      SY_RETURN_IF_ERROR(make_broadcast_plan(ctx, s, out_shape, plan));
      broadcast_binary(ctx.thread_pool(), plan, x0, ctx.input(1)->data<T>(), y, kCheapChunk, Op{});
    }
    for (size_t k = 2; k < n; ++k) {
      const Shape* s[] = {&out_shape, shapes[k]};
      SY_RETURN_IF_ERROR(make_broadcast_plan(ctx, s, out_shape, plan));
      broadcast_binary(ctx.thread_pool(), plan, static_cast<const T*>(y), ctx.input(k)->data<T>(), y, kCheapChunk,
                       Op{});
    }
    if constexpr (kMean) {
      using C = compute_t<T>;
      const C scale = C{1} / static_cast<C>(n);
      parallel_range(ctx.thread_pool(), plan.total, kCheapChunk, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = store<T>(load(y[i]) * scale);
      });
    }
    return ok_status();
  }
};

// PRelu: the slope broadcasts to X (unidirectionally); Y has X's shape.
class PReluKernel final : public Kernel {
 public:
  PReluKernel(const KernelCreateContext& /*ctx*/, Status& /*status*/) {}

  Status run(KernelContext& ctx) const override {
    SY_RETURN_IF_ERROR(require_inputs(ctx, 2));
    SY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
    const Tensor& x = *ctx.input(0);
    const Tensor& slope = *ctx.input(1);
    Shape out_shape;
    BroadcastPlan plan;
    SY_RETURN_IF_ERROR(plan_binary(ctx, x, slope, out_shape, plan));
    if (out_shape != x.shape())
      return kernel_error(ctx, "slope of shape " + slope.shape().to_string() + " does not broadcast to X's shape " +
                                   x.shape().to_string());
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    using Types = decltype(FloatTypes{} + TypeList<int32_t, int64_t, uint32_t, uint64_t>{});
    const bool handled = visit_type(Types{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      broadcast_binary(ctx.thread_pool(), plan, x.data<T>(), slope.data<T>(), y->data<T>(), kCheapChunk, PReluOp{});
    });
    return handled ? ok_status() : unsupported_dtype(ctx, 0);
  }
};

class WhereKernel final : public Kernel {
 public:
  WhereKernel(const KernelCreateContext& /*ctx*/, Status& /*status*/) {}

  Status run(KernelContext& ctx) const override {
    SY_RETURN_IF_ERROR(require_inputs(ctx, 3));
    SY_RETURN_IF_ERROR(require_same_dtype(ctx, 1, 2));
    const Tensor& c = *ctx.input(0);
    const Tensor& x = *ctx.input(1);
    const Tensor& z = *ctx.input(2);
    if (c.dtype() != DataType::kBool)
      return kernel_error(ctx, "condition has type " + std::string(data_type_name(c.dtype())) + ", expected bool");
    const Shape* shapes[] = {&c.shape(), &x.shape(), &z.shape()};
    Shape out_shape;
    BroadcastPlan plan;
    SY_RETURN_IF_ERROR(broadcast_shapes(ctx, shapes, out_shape));
    SY_RETURN_IF_ERROR(make_broadcast_plan(ctx, shapes, out_shape, plan));
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    const bool* cd = c.data<bool>();
    const bool handled = visit_type(AllTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xd = x.data<T>();
      const T* zd = z.data<T>();
      T* yd = y->data<T>();
      parallel_range(ctx.thread_pool(), plan.total, kCheapChunk, [&](int64_t begin, int64_t end) {
        for_each_run(plan, begin, end, [&](int64_t out, const int64_t* in, int64_t n) {
          const bool* cr = cd + in[0];
          const T* xr = xd + in[1];
          const T* zr = zd + in[2];
          T* yr = yd + out;
          const int64_t sc = plan.inner_moves[0], sx = plan.inner_moves[1], sz = plan.inner_moves[2];
          if (sc && sx && sz) {
            for (int64_t i = 0; i < n; ++i) yr[i] = cr[i] ? xr[i] : zr[i];
          } else {
            for (int64_t i = 0; i < n; ++i) yr[i] = cr[i * sc] ? xr[i * sx] : zr[i * sz];
          }
        });
      });
    });
    return handled ? ok_status() : unsupported_dtype(ctx, 1);
  }
};

// ---- the table ----------------------------------------------------------------

template <typename Op, typename Types, bool kBoolOut = false>
constexpr KernelDef binary_row(std::string_view op, int since, int end = kLatestVersion) {
  return {"", op, since, end, 0, type_mask(Types{}), &make_kernel<BinaryKernel<Op, Types, kBoolOut>>};
}

using EqualTypes = decltype(NumericBoolTypes{} + TypeList<std::string>{});
using PReluTypes = decltype(FloatTypes{} + TypeList<int32_t, int64_t, uint32_t, uint64_t>{});

constexpr KernelDef kBinaryKernels[] = {
    binary_row<AddOp, NumericTypes>("Add", 7),
    binary_row<SubOp, NumericTypes>("Sub", 7),
    binary_row<MulOp, NumericTypes>("Mul", 7),
    binary_row<DivOp, NumericTypes>("Div", 7),
    {"", "Pow", 7, kLatestVersion, 0, type_mask(PowBaseTypes{}), &make_kernel<PowKernel>},
    {"", "Mod", 10, kLatestVersion, 0, type_mask(NumericTypes{}), &make_kernel<ModKernel>},
    binary_row<EqualOp, EqualTypes, true>("Equal", 7),
    binary_row<LessOp, NumericTypes, true>("Less", 7),
    binary_row<GreaterOp, NumericTypes, true>("Greater", 7),
    binary_row<LessOrEqualOp, NumericTypes, true>("LessOrEqual", 12),
    binary_row<GreaterOrEqualOp, NumericTypes, true>("GreaterOrEqual", 12),
    binary_row<AndOp, BoolTypes, true>("And", 7),
    binary_row<OrOp, BoolTypes, true>("Or", 7),
    binary_row<XorOp, BoolTypes, true>("Xor", 7),
    {"", "BitShift", 11, kLatestVersion, 0, type_mask(UnsignedIntTypes{}), &make_kernel<BitShiftKernel>},
    binary_row<BitwiseAndOp, IntTypes>("BitwiseAnd", 18),
    binary_row<BitwiseOrOp, IntTypes>("BitwiseOr", 18),
    binary_row<BitwiseXorOp, IntTypes>("BitwiseXor", 18),
    // Before opset 8 these required equal shapes; broadcasting covers that.
    {"", "Max", 6, kLatestVersion, 0, type_mask(NumericTypes{}),
     &make_kernel<VariadicKernel<MaxOp, NumericTypes, false>>},
    {"", "Min", 6, kLatestVersion, 0, type_mask(NumericTypes{}),
     &make_kernel<VariadicKernel<MinOp, NumericTypes, false>>},
    {"", "Sum", 6, kLatestVersion, 0, type_mask(FloatTypes{}), &make_kernel<VariadicKernel<AddOp, FloatTypes, false>>},
    {"", "Mean", 6, kLatestVersion, 0, type_mask(FloatTypes{}),
     &make_kernel<VariadicKernel<AddOp, FloatTypes, true>>},
    {"", "PRelu", 7, kLatestVersion, 0, type_mask(PReluTypes{}), &make_kernel<PReluKernel>},
    {"", "Where", 9, kLatestVersion, 1, type_mask(AllTypes{}), &make_kernel<WhereKernel>},
};

}  // namespace

std::span<const KernelDef> elementwise_binary_kernels() { return kBinaryKernels; }

}  // namespace sy::cpu
