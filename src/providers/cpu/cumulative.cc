// CumSum and CumProd: running sums and products along one axis, forward or
// reversed, inclusive or exclusive.
//
// The input is viewed as [outer, dim, inner]. A task owns a block of up to
// kBlock columns of one outer slice and walks the axis keeping one
// accumulator per column, so the inner loop runs across contiguous columns
// (and vectorizes) whatever the axis. Accumulators use the compute type:
// float for 16-bit floats, so rounding happens once per output rather than
// compounding along the axis, and unsigned arithmetic for integers, so
// overflow wraps as it does in numpy instead of being undefined behaviour.
#include <algorithm>
#include <string>
#include <type_traits>

#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

using CumulativeTypes = TypeList<uint32_t, uint64_t, int32_t, int64_t, Float16, float, double, BFloat16>;

template <typename T>
struct AccumulatorOf {
  using type = compute_t<T>;
};
template <typename T>
  requires std::is_integral_v<T>
struct AccumulatorOf<T> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using acc_t = typename AccumulatorOf<T>::type;

template <typename T>
inline T store_acc(acc_t<T> v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(v);
  } else {
    return store<T>(v);
  }
}

template <typename T>
inline acc_t<T> load_acc(T v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<acc_t<T>>(v);
  } else {
    return load(v);
  }
}

struct SumOp {
  template <typename A>
  static A identity() {
    return A(0);
  }
  template <typename A>
  static A apply(A a, A b) {
    return static_cast<A>(a + b);
  }
};

struct ProdOp {
  template <typename A>
  static A identity() {
    return A(1);
  }
  template <typename A>
  static A apply(A a, A b) {
    return static_cast<A>(a * b);
  }
};

constexpr int64_t kBlock = 256;  // columns per task: the accumulators stay on the stack

template <typename Op>
class CumulativeKernel final : public Kernel {
 public:
  CumulativeKernel(const KernelCreateContext& ctx, Status& status) {
    const int64_t exclusive = ctx.node().attr_int("exclusive", 0);
    const int64_t reverse = ctx.node().attr_int("reverse", 0);
    if ((exclusive != 0 && exclusive != 1) || (reverse != 0 && reverse != 1)) {
      status = ctx.error("exclusive and reverse must be 0 or 1, got exclusive=" + std::to_string(exclusive) +
                         " reverse=" + std::to_string(reverse));
      return;
    }
    exclusive_ = exclusive != 0;
    reverse_ = reverse != 0;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Tensor* axis_t = ctx.input(1);
    if (axis_t == nullptr || axis_t->num_elements() != 1 ||
        (axis_t->dtype() != DataType::kInt32 && axis_t->dtype() != DataType::kInt64))
      return kernel_error(ctx, "axis must be an int32 or int64 scalar, got " +
                                   (axis_t == nullptr ? std::string("nothing") : axis_t->describe()));
    const int64_t axis_value =
        axis_t->dtype() == DataType::kInt32 ? axis_t->data<int32_t>()[0] : axis_t->data<int64_t>()[0];
    const Shape& s = x.shape();
    const auto rank = static_cast<int64_t>(s.rank());
    int64_t axis = axis_value;
    // A scalar input has no axis; numpy and ORT treat it as one element.
    if (rank > 0 && !normalize_axis(axis, rank))
      return kernel_error(ctx, "axis " + std::to_string(axis_value) + " is out of range for input " + x.describe() +
                                   " (expected [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "])");
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), s));
    if (x.num_elements() == 0) return ok_status();
    const auto a = static_cast<size_t>(rank > 0 ? axis : 0);
    const int64_t outer = rank > 0 ? s.size_to(a) : 1;
    const int64_t dim = rank > 0 ? s[a] : 1;
    const int64_t inner = rank > 0 ? s.size_from(a + 1) : 1;

    Status status = not_implemented(std::string(ctx.node().op_type) + ": element type " +
                                    std::string(data_type_name(x.dtype())) + " is not supported by this kernel");
    visit_type(CumulativeTypes{}, x.dtype(), [&]<typename T>(TypeTag<T>) {
      scan<T>(ctx.thread_pool(), x.data<T>(), y->data<T>(), outer, dim, inner);
      status = ok_status();
    });
    return status;
  }

 private:
  template <typename T>
  void scan(ThreadPool& pool, const T* src, T* dst, int64_t outer, int64_t dim, int64_t inner) const {
    using A = acc_t<T>;
    const bool exclusive = exclusive_;
    const bool reverse = reverse_;
    const int64_t blocks = (inner + kBlock - 1) / kBlock;
    const int64_t step = reverse ? -inner : inner;
    const int64_t start = reverse ? (dim - 1) * inner : 0;
    auto task = [&](int64_t t_begin, int64_t t_end) {
      A acc[kBlock];
      for (int64_t t = t_begin; t < t_end; ++t) {
        const int64_t o = t / blocks;
        const int64_t c0 = (t % blocks) * kBlock;
        const int64_t w = std::min(kBlock, inner - c0);
        const T* in = src + o * dim * inner + c0 + start;
        T* out = dst + o * dim * inner + c0 + start;
        if (w == 1) {
          // inner == 1: a contiguous row (or a strided column); one scalar.
          A a = Op::template identity<A>();
          for (int64_t j = 0; j < dim; ++j, in += step, out += step) {
            const A v = load_acc(*in);
            if (exclusive) {
              *out = store_acc<T>(a);
              a = Op::apply(a, v);
            } else {
              a = Op::apply(a, v);
              *out = store_acc<T>(a);
            }
          }
          continue;
        }
        for (int64_t c = 0; c < w; ++c) acc[c] = Op::template identity<A>();
        for (int64_t j = 0; j < dim; ++j, in += step, out += step) {
          if (exclusive) {
            for (int64_t c = 0; c < w; ++c) {
              out[c] = store_acc<T>(acc[c]);
              acc[c] = Op::apply(acc[c], load_acc(in[c]));
            }
          } else {
            for (int64_t c = 0; c < w; ++c) {
              acc[c] = Op::apply(acc[c], load_acc(in[c]));
              out[c] = store_acc<T>(acc[c]);
            }
          }
        }
      }
    };
    const int64_t tasks = outer * blocks;
    // Each task touches dim x (up to kBlock) elements.
    const int64_t min_tasks = std::max<int64_t>(1, kCheapChunk / std::max<int64_t>(1, dim * std::min(kBlock, inner)));
    parallel_range(pool, tasks, min_tasks, task);
  }

  bool exclusive_ = false;
  bool reverse_ = false;
};

constexpr uint64_t kCumSum11Types = type_bit(DataType::kUint32) | type_bit(DataType::kUint64) |
                                    type_bit(DataType::kInt32) | type_bit(DataType::kInt64) |
                                    type_bit(DataType::kFloat) | type_bit(DataType::kDouble);

const KernelDef kCumulativeKernels[] = {
    {"", "CumSum", 11, 13, 0, kCumSum11Types, &make_kernel<CumulativeKernel<SumOp>>},
    {"", "CumSum", 14, kLatestVersion, 0, type_mask(CumulativeTypes{}), &make_kernel<CumulativeKernel<SumOp>>},
    {"", "CumProd", 26, kLatestVersion, 0, type_mask(CumulativeTypes{}), &make_kernel<CumulativeKernel<ProdOp>>},
};

}  // namespace

std::span<const KernelDef> cumulative_kernels() { return kCumulativeKernels; }

}  // namespace sy::cpu
