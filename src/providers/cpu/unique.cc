// Unique: the distinct elements (or slices along an axis) of a tensor, with
// where each first occurs, where each input element went, and how often.
//
// One algorithm serves both forms: the flattened input is the case of one
// slice per element. Slice numbers are sorted by (content, position), so
// equal slices end up adjacent with their first occurrence leading each
// run; the runs are the unique values in ascending order. For sorted=0 the
// runs are then ordered by first occurrence. Everything but the outputs
// lives in one scratch region.
//
// Floats compare as numpy does: NaN after every number and all NaNs equal
// (one NaN in Y); -0 and +0 are one value, shown as whichever comes first.
// Complex numbers order by real part, then imaginary part (numpy's order).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

template <typename F>
struct Complex {
  F re;
  F im;
};

// -1, 0, 1 for a <, ==, > b in Unique's order.
template <typename F>
inline int compare_float(F a, F b) {
  if (a < b) return -1;
  if (b < a) return 1;
  const bool na = std::isnan(a);
  const bool nb = std::isnan(b);
  return na == nb ? 0 : (na ? 1 : -1);
}

template <typename T>
inline int compare_values(const T& a, const T& b) {
  if constexpr (kIsHalf<T>) {
    return compare_float(load(a), load(b));
  } else if constexpr (std::is_floating_point_v<T>) {
    return compare_float(a, b);
  } else if constexpr (std::is_same_v<T, Complex<float>> || std::is_same_v<T, Complex<double>>) {
    const int c = compare_float(a.re, b.re);
    return c != 0 ? c : compare_float(a.im, b.im);
  } else if constexpr (std::is_same_v<T, std::string>) {
    const int c = a.compare(b);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  } else {
    return a < b ? -1 : (b < a ? 1 : 0);
  }
}

// Calls fn.template operator()<T>() with T the C++ type of `dtype`.
template <typename Fn>
Status dispatch_unique_type(DataType dtype, Fn&& fn) {
  switch (dtype) {
    case DataType::kFloat: return fn.template operator()<float>();
    case DataType::kDouble: return fn.template operator()<double>();
    case DataType::kFloat16: return fn.template operator()<Float16>();
    case DataType::kBfloat16: return fn.template operator()<BFloat16>();
    case DataType::kInt8: return fn.template operator()<int8_t>();
    case DataType::kInt16: return fn.template operator()<int16_t>();
    case DataType::kInt32: return fn.template operator()<int32_t>();
    case DataType::kInt64: return fn.template operator()<int64_t>();
    case DataType::kUint8: return fn.template operator()<uint8_t>();
    case DataType::kUint16: return fn.template operator()<uint16_t>();
    case DataType::kUint32: return fn.template operator()<uint32_t>();
    case DataType::kUint64: return fn.template operator()<uint64_t>();
    case DataType::kBool: return fn.template operator()<bool>();
    case DataType::kString: return fn.template operator()<std::string>();
    case DataType::kComplex64: return fn.template operator()<Complex<float>>();
    case DataType::kComplex128: return fn.template operator()<Complex<double>>();
    default: break;
  }
  return not_implemented("Unique: element type " + std::string(data_type_name(dtype)) +
                         " is not supported by this kernel");
}

constexpr uint64_t kUniqueTypes =
    type_mask(NumericBoolTypes{}) | type_bit(DataType::kString) | type_bit(DataType::kComplex64) |
    type_bit(DataType::kComplex128);

class UniqueKernel final : public Kernel {
 public:
  UniqueKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    has_axis_ = node.has_attr("axis");
    axis_ = node.attr_int("axis", 0);
    const int64_t sorted = node.attr_int("sorted", 1);
    if (sorted != 0 && sorted != 1) status = ctx.error("sorted must be 0 or 1, got " + std::to_string(sorted));
    sorted_ = sorted != 0;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Shape& s = x.shape();
    // The input as [outer, n, inner]: n slices of outer x inner elements.
    int64_t outer = 1;
    int64_t n = x.num_elements();
    int64_t inner = 1;
    size_t a = 0;
    if (has_axis_) {
      const auto rank = static_cast<int64_t>(s.rank());
      int64_t axis = axis_;
      if (!normalize_axis(axis, rank))
        return kernel_error(ctx, "axis " + std::to_string(axis_) + " is out of range for input " + x.describe() +
                                     " (expected [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) +
                                     "])");
      a = static_cast<size_t>(axis);
      outer = s.size_to(a);
      n = s[a];
      inner = s.size_from(a + 1);
    }
    return dispatch_unique_type(x.dtype(), [&]<typename T>() {
      if (outer * inner == 1) return run_typed<T, true>(ctx, x, outer, n, inner, a);
      return run_typed<T, false>(ctx, x, outer, n, inner, a);
    });
  }

 private:
  template <typename T, bool kOneElement>
  Status run_typed(KernelContext& ctx, const Tensor& x, int64_t outer, int64_t n, int64_t inner, size_t a) const {
    const T* src = x.data<T>();
    const int64_t slice_stride = inner;  // between slices j and j + 1 within one outer block
    const int64_t outer_stride = n * inner;
    // Slices compare element by element in (outer, inner) order, which is
    // numpy's order for unique along an axis.
    auto compare_slices = [&](int64_t p, int64_t q) -> int {
      if constexpr (kOneElement) {
        return compare_values(src[p], src[q]);
      } else {
        for (int64_t o = 0; o < outer; ++o) {
          const T* sp = src + o * outer_stride + p * slice_stride;
          const T* sq = src + o * outer_stride + q * slice_stride;
          for (int64_t i = 0; i < inner; ++i) {
            const int c = compare_values(sp[i], sq[i]);
            if (c != 0) return c;
          }
        }
        return 0;
      }
    };

    // Scratch: order (sorted slice numbers), run_of (run number of each
    // input slice), first and count per run, and for sorted=0 the runs in
    // output order and each run's output position.
    const auto un = static_cast<size_t>(n);
    SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(std::max<size_t>(1, 6 * un) * sizeof(int64_t)));
    int64_t* order = static_cast<int64_t*>(mem);
    int64_t* run_of = order + un;
    int64_t* first = run_of + un;
    int64_t* count = first + un;
    int64_t* out_run = count + un;  // output position -> run
    int64_t* out_pos = out_run + un;  // run -> output position

    for (int64_t j = 0; j < n; ++j) order[j] = j;
    std::sort(order, order + n, [&](int64_t p, int64_t q) {
      const int c = compare_slices(p, q);
      return c < 0 || (c == 0 && p < q);
    });
    int64_t runs = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t p = order[j];
      if (j == 0 || compare_slices(order[j - 1], p) != 0) {
        first[runs] = p;  // the lowest position of its run: positions break ties
        count[runs] = 0;
        ++runs;
      }
      ++count[runs - 1];
      run_of[p] = runs - 1;
    }
    for (int64_t r = 0; r < runs; ++r) out_run[r] = r;
    if (!sorted_) std::sort(out_run, out_run + runs, [&](int64_t p, int64_t q) { return first[p] < first[q]; });
    for (int64_t r = 0; r < runs; ++r) out_pos[out_run[r]] = r;

    Shape y_shape;
    if (has_axis_) {
      y_shape = x.shape();
      y_shape[a] = runs;
    } else {
      y_shape = Shape{runs};
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), y_shape));
    T* dst = y->data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t r = 0; r < runs; ++r) {
        const T* from = src + o * outer_stride + first[out_run[r]] * slice_stride;
        T* to = dst + (o * runs + r) * inner;
        std::copy(from, from + inner, to);
      }
    if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
      SY_ASSIGN_OR_RETURN(Tensor * indices, ctx.allocate_output(1, DataType::kInt64, Shape{runs}));
      int64_t* d = indices->data<int64_t>();
      for (int64_t r = 0; r < runs; ++r) d[r] = first[out_run[r]];
    }
    if (ctx.num_outputs() > 2 && ctx.output_requested(2)) {
      SY_ASSIGN_OR_RETURN(Tensor * inverse, ctx.allocate_output(2, DataType::kInt64, Shape{n}));
      int64_t* d = inverse->data<int64_t>();
      for (int64_t j = 0; j < n; ++j) d[j] = out_pos[run_of[j]];
    }
    if (ctx.num_outputs() > 3 && ctx.output_requested(3)) {
      SY_ASSIGN_OR_RETURN(Tensor * counts, ctx.allocate_output(3, DataType::kInt64, Shape{runs}));
      int64_t* d = counts->data<int64_t>();
      for (int64_t r = 0; r < runs; ++r) d[r] = count[out_run[r]];
    }
    return ok_status();
  }

  bool has_axis_ = false;
  int64_t axis_ = 0;
  bool sorted_ = true;
};

const KernelDef kUniqueKernels[] = {
    {"", "Unique", 11, kLatestVersion, 0, kUniqueTypes, &make_kernel<UniqueKernel>},
};

}  // namespace

std::span<const KernelDef> unique_kernels() { return kUniqueKernels; }

}  // namespace sy::cpu
