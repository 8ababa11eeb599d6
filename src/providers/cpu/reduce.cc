// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, ArgMax, ArgMin.
//
// The input's dims are merged into alternating runs of kept (K) and reduced
// (R) dims; dims of size 1 drop out. Three layouts cover nearly all models:
//   [K, R] or [R]       reduce contiguous rows (LayerNorm-style, axis -1);
//   [K, R, K] or [R, K] add whole rows into a row of accumulators (reducing
//                       the batch or a middle axis), vectorized across K;
//   anything else       per output, walk the reduced dims with an odometer.
// ReduceLogSumExp first takes the max of each output's elements (the same
// reduction with the max op) and then sums exp(x - max), so large inputs do
// not overflow.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

inline constexpr int kMaxReduceRank = 16;

// ---- reduction ops --------------------------------------------------------------
// init: the identity; step(acc, v, shift): fold in one element; combine:
// merge two partial accumulators; finish(acc, count, shift): the result.
// A is the accumulator type; `shift` is the per-output max (LogSumExp only).

// Accumulators: float for float and 16-bit types, double for double, the
// widest integer of the right signedness for integers.
template <typename T>
using WideInt = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
template <typename T>
using DefaultAcc = std::conditional_t<kIsFloat<T>, compute_t<T>, std::conditional_t<std::is_same_v<T, bool>, bool, WideInt<T>>>;
// Ops whose result is not an integer work in double for integer inputs.
template <typename T>
using RealAcc = std::conditional_t<kIsFloat<T>, compute_t<T>, double>;

template <typename A>
inline A nan_max(A acc, A v) {
  if constexpr (std::is_floating_point_v<A>) {
    return select((v != v) | (v > acc), v, acc);
  } else {
    return v > acc ? v : acc;
  }
}
template <typename A>
inline A nan_min(A acc, A v) {
  if constexpr (std::is_floating_point_v<A>) {
    return select((v != v) | (v < acc), v, acc);
  } else {
    return v < acc ? v : acc;
  }
}

struct SumOp {
  template <typename T> using Acc = DefaultAcc<T>;
  static constexpr bool kNeedsMax = false;
  template <typename A> static A init() { return A{0}; }
  // Integer accumulators wrap (wrap_add), as numpy's do.
  template <typename A> static A step(A acc, A v, A) { return wrap_add(acc, v); }
  template <typename A> static A combine(A a, A b) { return wrap_add(a, b); }
  template <typename A> static A finish(A acc, int64_t, A) { return acc; }
};
struct MeanOp : SumOp {
  template <typename A>
  static A finish(A acc, int64_t n, A) {
    if constexpr (std::is_integral_v<A>) {
      return n == 0 ? A{0} : static_cast<A>(acc / static_cast<A>(n));
    } else {
      return acc / static_cast<A>(n);  // an empty mean is NaN, as in numpy
    }
  }
};
struct ProdOp {
  template <typename T> using Acc = DefaultAcc<T>;
  static constexpr bool kNeedsMax = false;
  template <typename A> static A init() { return A{1}; }
  template <typename A> static A step(A acc, A v, A) { return wrap_mul(acc, v); }
  template <typename A> static A combine(A a, A b) { return wrap_mul(a, b); }
  template <typename A> static A finish(A acc, int64_t, A) { return acc; }
};
struct MaxOp {
  template <typename T> using Acc = DefaultAcc<T>;
  static constexpr bool kNeedsMax = false;
  template <typename A> static A init() {
    if constexpr (std::is_floating_point_v<A>) return -std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::lowest();
  }
  template <typename A> static A step(A acc, A v, A) { return nan_max(acc, v); }
  template <typename A> static A combine(A a, A b) { return nan_max(a, b); }
  template <typename A> static A finish(A acc, int64_t, A) { return acc; }
};
struct MinOp {
  template <typename T> using Acc = DefaultAcc<T>;
  static constexpr bool kNeedsMax = false;
  template <typename A> static A init() {
    if constexpr (std::is_floating_point_v<A>) return std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::max();
  }
  template <typename A> static A step(A acc, A v, A) { return nan_min(acc, v); }
  template <typename A> static A combine(A a, A b) { return nan_min(a, b); }
  template <typename A> static A finish(A acc, int64_t, A) { return acc; }
};
struct L1Op : SumOp {
  template <typename A> static A step(A acc, A v, A) {
    if constexpr (std::is_unsigned_v<A>) return acc + v;
    else if constexpr (std::is_floating_point_v<A>) return acc + std::fabs(v);
    else return wrap_add(acc, v < 0 ? wrap_sub(A{0}, v) : v);
  }
};
struct SumSquareOp : SumOp {
  template <typename A> static A step(A acc, A v, A) { return wrap_add(acc, wrap_mul(v, v)); }
};
struct L2Op : SumSquareOp {
  template <typename T> using Acc = RealAcc<T>;
  template <typename A> static A finish(A acc, int64_t, A) { return std::sqrt(acc); }
};
struct LogSumOp : SumOp {
  template <typename T> using Acc = RealAcc<T>;
  template <typename A> static A finish(A acc, int64_t, A) { return std::log(acc); }
};
struct LogSumExpOp : SumOp {
  template <typename T> using Acc = RealAcc<T>;
  static constexpr bool kNeedsMax = true;
  template <typename A> static A step(A acc, A v, A shift) { return acc + fast_exp(v - shift); }
  template <typename A> static A finish(A acc, int64_t, A shift) {
    // All -inf (or empty): the max is the answer, and exp(-inf - -inf) is NaN.
    return std::isinf(shift) ? shift : shift + std::log(acc);
  }
};
// The max pass of LogSumExp, in its accumulator type.
struct ShiftOp : MaxOp {
  template <typename T> using Acc = RealAcc<T>;
};

// ---- the reduction engine ----------------------------------------------------

struct ReducePlan {
  int rank = 0;                         // merged dims
  int64_t dims[kMaxReduceRank] = {};
  bool reduced[kMaxReduceRank] = {};
  int64_t strides[kMaxReduceRank] = {};  // input element strides
  int64_t out_count = 1;
  int64_t reduce_count = 1;
};

// Input shape + reduced-axis flags -> merged plan.
Status make_reduce_plan(const KernelContext& ctx, const Shape& shape, const bool* reduce_axis, ReducePlan& plan) {
  plan = ReducePlan{};
  for (size_t d = 0; d < shape.rank(); ++d) {
    const int64_t n = shape[d];
    if (reduce_axis[d]) {
      plan.reduce_count *= n;
    } else {
      plan.out_count *= n;
    }
    if (n == 1) continue;
    if (plan.rank > 0 && plan.reduced[plan.rank - 1] == reduce_axis[d]) {
      plan.dims[plan.rank - 1] *= n;
      continue;
    }
    if (plan.rank == kMaxReduceRank)
      return not_implemented(ctx.node().describe() + ": more than " + std::to_string(kMaxReduceRank) +
                             " alternating reduced and kept dimension groups");
    plan.dims[plan.rank] = n;
    plan.reduced[plan.rank] = reduce_axis[d];
    ++plan.rank;
  }
  int64_t stride = 1;
  for (int d = plan.rank - 1; d >= 0; --d) {
    plan.strides[d] = stride;
    stride *= plan.dims[d];
  }
  return ok_status();
}

template <typename Op, typename T, typename A>
class Reducer {
 public:
  Reducer(const ReducePlan& plan, const T* x, const A* shift, ThreadPool& pool)
      : p_(plan), x_(x), shift_(shift), pool_(pool) {}

  // out[o] = the op's result for output o, for every o. Out is A* or StoreAs.
  template <typename Out>
  void run(Out out) const {
    const int r = p_.rank;
    if (p_.reduce_count == 0 || p_.out_count == 0) {
      for (int64_t o = 0; o < p_.out_count; ++o) out[o] = Op::template finish<A>(Op::template init<A>(), 0, shift(o));
      return;
    }
    if (p_.reduce_count == 1) {
      // Only size-1 axes reduced: outputs and inputs correspond one to one.
      parallel_range(pool_, p_.out_count, kCheapChunk, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o)
          out[o] = Op::finish(Op::step(Op::template init<A>(), static_cast<A>(load(x_[o])), shift(o)), 1, shift(o));
      });
      return;
    }
    if (r == 0 || (r == 1 && p_.reduced[0]) || (r == 2 && !p_.reduced[0] && p_.reduced[1])) {
      inner_rows(out);
    } else if ((r == 2 && p_.reduced[0]) || (r == 3 && p_.reduced[1])) {
      outer_rows(out);
    } else {
      general(out);
    }
  }

 private:
  A shift(int64_t o) const { return shift_ != nullptr ? shift_[o] : A{0}; }

  // [K, R]: each output reduces a contiguous row of n.
  template <typename Out>
  void inner_rows(Out out) const {
    const int64_t n = p_.reduce_count;
    parallel_range(pool_, p_.out_count, std::max<int64_t>(1, kCheapChunk / n), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* row = x_ + o * n;
        const A s = shift(o);
        A acc[kLanes];
        for (A& a : acc) a = Op::template init<A>();
        int64_t i = 0;
        for (; i + kLanes <= n; i += kLanes)
          for (int k = 0; k < kLanes; ++k) acc[k] = Op::step(acc[k], static_cast<A>(load(row[i + k])), s);
        for (; i < n; ++i) acc[0] = Op::step(acc[0], static_cast<A>(load(row[i])), s);
        A total = acc[0];
        for (int k = 1; k < kLanes; ++k) total = Op::combine(total, acc[k]);
        out[o] = Op::finish(total, n, s);
      }
    });
  }

  // [K1, R, K2] (K1 may be absent): rows of K2 folded into accumulators.
  template <typename Out>
  void outer_rows(Out out) const {
    const bool has_k1 = p_.rank == 3;
    const int64_t k1 = has_k1 ? p_.dims[0] : 1;
    const int64_t rn = has_k1 ? p_.dims[1] : p_.dims[0];
    const int64_t k2 = has_k1 ? p_.dims[2] : p_.dims[1];
    constexpr int64_t kTile = 256;
    const int64_t tiles = (k2 + kTile - 1) / kTile;
    parallel_range(pool_, k1 * tiles, std::max<int64_t>(1, kCheapChunk / (rn * kTile)), [&](int64_t b, int64_t e) {
      A acc[kTile];
      A sh[kTile];
      for (int64_t t = b; t < e; ++t) {
        const int64_t a = t / tiles;
        const int64_t c0 = (t % tiles) * kTile;
        const int64_t w = std::min(kTile, k2 - c0);
        const int64_t o0 = a * k2 + c0;
        for (int64_t j = 0; j < w; ++j) {
          acc[j] = Op::template init<A>();
          sh[j] = shift(o0 + j);
        }
        const T* base = x_ + a * rn * k2 + c0;
        for (int64_t r = 0; r < rn; ++r) {
          const T* row = base + r * k2;
          for (int64_t j = 0; j < w; ++j) acc[j] = Op::step(acc[j], static_cast<A>(load(row[j])), sh[j]);
        }
        for (int64_t j = 0; j < w; ++j) out[o0 + j] = Op::finish(acc[j], rn, sh[j]);
      }
    });
  }

  // Anything: outputs in order, each walking its reduced elements.
  template <typename Out>
  void general(Out out) const {
    int kept[kMaxReduceRank];
    int red[kMaxReduceRank];
    int nk = 0;
    int nr = 0;
    for (int d = 0; d < p_.rank; ++d) (p_.reduced[d] ? red[nr++] : kept[nk++]) = d;
    const int64_t n = p_.reduce_count;
    parallel_range(pool_, p_.out_count, std::max<int64_t>(1, kCheapChunk / n), [&](int64_t b, int64_t e) {
      // Kept coordinates of output b, then an odometer.
      int64_t kidx[kMaxReduceRank];
      int64_t rem = b;
      int64_t base = 0;
      for (int k = nk - 1; k >= 0; --k) {
        kidx[k] = rem % p_.dims[kept[k]];
        rem /= p_.dims[kept[k]];
        base += kidx[k] * p_.strides[kept[k]];
      }
      const int last = red[nr - 1];
      const int64_t inner_n = p_.dims[last];
      const int64_t inner_stride = p_.strides[last];
      for (int64_t o = b; o < e; ++o) {
        const A s = shift(o);
        A acc = Op::template init<A>();
        int64_t ridx[kMaxReduceRank] = {};
        int64_t off = base;
        while (true) {
          const T* p = x_ + off;
          for (int64_t i = 0; i < inner_n; ++i) acc = Op::step(acc, static_cast<A>(load(p[i * inner_stride])), s);
          int k = nr - 2;
          for (; k >= 0; --k) {
            const int d = red[k];
            off += p_.strides[d];
            if (++ridx[k] < p_.dims[d]) break;
            off -= p_.dims[d] * p_.strides[d];
            ridx[k] = 0;
          }
          if (k < 0) break;
        }
        out[o] = Op::finish(acc, n, s);
        for (int k = nk - 1; k >= 0; --k) {
          const int d = kept[k];
          base += p_.strides[d];
          if (++kidx[k] < p_.dims[d]) break;
          base -= p_.dims[d] * p_.strides[d];
          kidx[k] = 0;
        }
      }
    });
  }

  const ReducePlan& p_;
  const T* x_;
  const A* shift_;
  ThreadPool& pool_;
};

// Writes accumulator values as T.
template <typename T, typename A>
struct StoreAs {
  T* out;
  struct Ref {
    T* p;
    void operator=(A v) const {
      if constexpr (kIsHalf<T>) {
        *p = store<T>(static_cast<float>(v));
      } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_floating_point_v<A>) {
        // ReduceL2 or ReduceLogSumExp of integers (accumulated in double)
        // can leave the type's range; the conversion is the defined one.
        *p = float_to_int<T>(v);
      } else {
        *p = static_cast<T>(v);
      }
    }
  };
  Ref operator[](int64_t i) const { return Ref{out + i}; }
};

// ---- axes -------------------------------------------------------------------------

// Reads the axes (attribute or input 1) into flags; `all` when none given.
Status read_axes(const KernelContext& ctx, bool axes_from_input, const std::vector<int64_t>& attr_axes, size_t rank,
                 bool* flags, bool& empty) {
  std::fill(flags, flags + rank, false);
  const int64_t* axes = attr_axes.data();
  int64_t count = static_cast<int64_t>(attr_axes.size());
  const Tensor* t = axes_from_input ? ctx.input(1) : nullptr;
  if (axes_from_input) {
    count = 0;
    if (t != nullptr) {
      if (t->dtype() != DataType::kInt64)
        return kernel_error(ctx, "axes must be int64, got " + std::string(data_type_name(t->dtype())));
      if (t->shape().rank() > 1) return kernel_error(ctx, "axes must be 1-D, got " + t->shape().to_string());
      axes = t->data<int64_t>();
      count = t->num_elements();
    }
  }
  empty = count == 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t a = axes[i];
    if (!normalize_axis(a, static_cast<int64_t>(rank)))
      return kernel_error(ctx, "axis " + std::to_string(axes[i]) + " is out of range for rank " + std::to_string(rank));
    if (flags[a]) return kernel_error(ctx, "axis " + std::to_string(axes[i]) + " is given twice");
    flags[a] = true;
  }
  return ok_status();
}

template <typename Op, typename Types>
class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(const KernelCreateContext& ctx, Status& /*status*/) {
    const Node& node = ctx.node();
    keepdims_ = node.attr_int("keepdims", 1) != 0;
    noop_with_empty_axes_ = node.attr_int("noop_with_empty_axes", 0) != 0;
    // ReduceSum took axes as an input from opset 13, the others from 18.
    const int axes_input_since = node.op_type == "ReduceSum" ? 13 : 18;
    axes_from_input_ = ctx.opset() >= axes_input_since;
    if (!axes_from_input_) axes_ = node.attr_ints("axes");
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return kernel_error(ctx, "input 0 is missing");
    const Shape& shape = x->shape();
    const size_t rank = shape.rank();
    if (rank > static_cast<size_t>(kMaxReduceRank))
      return not_implemented(ctx.node().describe() + ": rank " + std::to_string(rank) + " is above " +
                             std::to_string(kMaxReduceRank));
    bool flags[kMaxReduceRank];
    bool empty = false;
    SY_RETURN_IF_ERROR(read_axes(ctx, axes_from_input_, axes_, rank, flags, empty));
    const bool noop = empty && noop_with_empty_axes_;
    if (empty && !noop) std::fill(flags, flags + rank, true);
    Shape out_shape;
    for (size_t d = 0; d < rank; ++d) {
      if (!flags[d] || noop) {
        out_shape.push_back(shape[d]);
      } else if (keepdims_) {
        out_shape.push_back(1);
      }
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    if (noop) {
      std::memcpy(y->raw_data(), x->raw_data(), x->byte_size());
      return ok_status();
    }
    ReducePlan plan;
    SY_RETURN_IF_ERROR(make_reduce_plan(ctx, shape, flags, plan));
    Status status;
    const bool handled = visit_type(Types{}, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = typename Op::template Acc<T>;
      const A* shift = nullptr;
      if constexpr (Op::kNeedsMax) {
        auto mem = ctx.scratch(static_cast<size_t>(std::max<int64_t>(plan.out_count, 1)) * sizeof(A));
        if (!mem.ok()) {
          status = mem.status();
          return;
        }
        auto* s = static_cast<A*>(*mem);
        Reducer<ShiftOp, T, A>(plan, x->data<T>(), nullptr, ctx.thread_pool()).run(s);
        shift = s;
      }
      Reducer<Op, T, A> reducer(plan, x->data<T>(), shift, ctx.thread_pool());
      reducer.run(StoreAs<T, A>{y->data<T>()});
    });
    if (!handled)
      return kernel_error(ctx, "input 0 has unsupported type " + std::string(data_type_name(x->dtype())));
    return status;
  }

 private:
  bool keepdims_ = true;
  bool noop_with_empty_axes_ = false;
  bool axes_from_input_ = false;
  std::vector<int64_t> axes_;
};

// ---- ArgMax / ArgMin ----------------------------------------------------------------

// Whether v replaces the current best. NaN counts as the extreme value, as
// in numpy.argmax / argmin; ties go to the first or, with select_last_index,
// the last.
template <bool kMax, bool kLast, typename C>
inline bool better(C v, C best) {
  if constexpr (std::is_floating_point_v<C>) {
    if (best != best) return kLast && v != v;
    if (v != v) return true;
  }
  if constexpr (kLast) {
    return kMax ? v >= best : v <= best;
  } else {
    return kMax ? v > best : v < best;
  }
}

template <bool kMax>
class ArgKernel final : public Kernel {
 public:
  ArgKernel(const KernelCreateContext& ctx, Status& /*status*/) {
    axis_ = ctx.node().attr_int("axis", 0);
    keepdims_ = ctx.node().attr_int("keepdims", 1) != 0;
    last_ = ctx.node().attr_int("select_last_index", 0) != 0;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return kernel_error(ctx, "input 0 is missing");
    const Shape& shape = x->shape();
    int64_t axis = axis_;
    if (!normalize_axis(axis, static_cast<int64_t>(shape.rank())))
      return kernel_error(ctx, "axis " + std::to_string(axis_) + " is out of range for rank " +
                                   std::to_string(shape.rank()));
    const auto ax = static_cast<size_t>(axis);
    const int64_t n = shape[ax];
    if (n == 0) return kernel_error(ctx, "cannot take the arg-extreme over an empty axis " + std::to_string(axis));
    Shape out_shape;
    for (size_t d = 0; d < shape.rank(); ++d) {
      if (d != ax) {
        out_shape.push_back(shape[d]);
      } else if (keepdims_) {
        out_shape.push_back(1);
      }
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt64, out_shape));
    const int64_t outer = shape.size_to(ax);
    const int64_t inner = shape.size_from(ax + 1);
    int64_t* out = y->data<int64_t>();
    const bool handled = visit_type(NumericTypes{}, x->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (last_) {
        scan<T, true>(ctx, x->data<T>(), out, outer, n, inner);
      } else {
        scan<T, false>(ctx, x->data<T>(), out, outer, n, inner);
      }
    });
    if (!handled)
      return kernel_error(ctx, "input 0 has unsupported type " + std::string(data_type_name(x->dtype())));
    return ok_status();
  }

 private:
  template <typename T, bool kLast>
  static void scan(const KernelContext& ctx, const T* x, int64_t* out, int64_t outer, int64_t n, int64_t inner) {
    using C = compute_t<T>;
    constexpr int64_t kTile = 256;
    const int64_t tiles = (inner + kTile - 1) / kTile;
    parallel_range(ctx.thread_pool(), outer * tiles, std::max<int64_t>(1, kCheapChunk / (n * kTile)),
                   [&](int64_t b, int64_t e) {
                     C best[kTile];
                     for (int64_t t = b; t < e; ++t) {
                       const int64_t o = t / tiles;
                       const int64_t c0 = (t % tiles) * kTile;
                       const int64_t w = std::min(kTile, inner - c0);
                       const T* base = x + o * n * inner + c0;
                       int64_t* idx = out + o * inner + c0;
                       for (int64_t j = 0; j < w; ++j) {
                         best[j] = load(base[j]);
                         idx[j] = 0;
                       }
                       for (int64_t a = 1; a < n; ++a) {
                         const T* row = base + a * inner;
                         for (int64_t j = 0; j < w; ++j) {
                           const C v = load(row[j]);
                           if (better<kMax, kLast>(v, best[j])) {
                             best[j] = v;
                             idx[j] = a;
                           }
                         }
                       }
                     }
                   });
  }

  int64_t axis_ = 0;
  bool keepdims_ = true;
  bool last_ = false;
};

// ---- the table ------------------------------------------------------------------

using ReduceTypes = NumericTypes;
using ReduceMinMaxTypes = NumericBoolTypes;

template <typename Op, typename Types = ReduceTypes>
constexpr KernelDef reduce_row(std::string_view op, int since) {
  return {"", op, since, kLatestVersion, 0, type_mask(Types{}), &make_kernel<ReduceKernel<Op, Types>>};
}

constexpr KernelDef kReduceKernels[] = {
    reduce_row<SumOp>("ReduceSum", 1),
    reduce_row<MeanOp>("ReduceMean", 1),
    reduce_row<MaxOp, ReduceMinMaxTypes>("ReduceMax", 1),
    reduce_row<MinOp, ReduceMinMaxTypes>("ReduceMin", 1),
    reduce_row<ProdOp>("ReduceProd", 1),
    reduce_row<L1Op>("ReduceL1", 1),
    reduce_row<L2Op>("ReduceL2", 1),
    reduce_row<LogSumOp>("ReduceLogSum", 1),
    reduce_row<LogSumExpOp>("ReduceLogSumExp", 1),
    reduce_row<SumSquareOp>("ReduceSumSquare", 1),
    {"", "ArgMax", 1, kLatestVersion, 0, type_mask(NumericTypes{}), &make_kernel<ArgKernel<true>>},
    {"", "ArgMin", 1, kLatestVersion, 0, type_mask(NumericTypes{}), &make_kernel<ArgKernel<false>>},
};

}  // namespace

std::span<const KernelDef> reduce_kernels() { return kReduceKernels; }

}  // namespace sy::cpu
