// TopK: the k largest (or smallest) elements of each row along an axis.
//
// Each row is copied once into (key, index) pairs in scratch, so the
// selection works on contiguous memory whatever the axis, and 16-bit floats
// are widened once instead of at every comparison. The pairs are ordered by
// value and then by index, a strict total order, so equal values come out
// lower index first (as the spec requires) and the set chosen at the k-th
// boundary is deterministic even when the output is left unsorted. NaN
// ranks above every number, as in numpy's sort, so it is "largest".
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

using TopKTypes = NumericTypes;  // every type of TopK-24; older versions allow subsets

template <typename K>
struct Entry {
  K key;
  int64_t index;
};

// a < b with NaN above every number (and NaNs equal to each other).
template <typename K>
inline bool key_less(K a, K b) {
  if constexpr (std::is_floating_point_v<K>) {
    return a < b || (std::isnan(b) && !std::isnan(a));
  } else {
    return a < b;
  }
}

template <typename K>
struct LargestFirst {
  bool operator()(const Entry<K>& a, const Entry<K>& b) const {
    if (key_less(b.key, a.key)) return true;
    if (key_less(a.key, b.key)) return false;
    return a.index < b.index;
  }
};

template <typename K>
struct SmallestFirst {
  bool operator()(const Entry<K>& a, const Entry<K>& b) const {
    if (key_less(a.key, b.key)) return true;
    if (key_less(b.key, a.key)) return false;
    return a.index < b.index;
  }
};

// Puts the first k entries of [first, first + n) in place under `before`;
// sorted when `sorted`.
template <typename E, typename Cmp>
void select_top(E* first, int64_t n, int64_t k, bool sorted, Cmp before) {
  if (k <= 0) return;
  if (k == 1) {
    // A linear scan beats any partial sort for the common argmax case.
    E* best = first;
    for (E* p = first + 1; p < first + n; ++p)
      if (before(*p, *best)) best = p;
    std::swap(*first, *best);
    return;
  }
  if (k < n) {
    // partial_sort is a heap of k, O(n log k): the better choice while k is
    // small next to n; beyond that, a linear-time selection then a sort of k.
    if (sorted && k * 16 <= n) {
      std::partial_sort(first, first + k, first + n, before);
      return;
    }
    std::nth_element(first, first + (k - 1), first + n, before);
  }
  if (sorted) std::sort(first, first + k, before);
}

class TopKKernel final : public Kernel {
 public:
  TopKKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    axis_ = node.attr_int("axis", -1);
    if (ctx.opset() >= 11) {
      largest_ = node.attr_int("largest", 1) != 0;
      sorted_ = node.attr_int("sorted", 1) != 0;
    }
    if (ctx.opset() < 10) {
      if (!node.has_attr("k")) {
        status = ctx.error("attribute 'k' is required");
        return;
      }
      k_attr_ = node.attr_int("k", 0);
      if (k_attr_ < 0) status = ctx.error("k must be >= 0, got " + std::to_string(k_attr_));
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Shape& s = x.shape();
    const auto rank = static_cast<int64_t>(s.rank());
    int64_t axis = axis_;
    if (!normalize_axis(axis, rank))
      return kernel_error(ctx, "axis " + std::to_string(axis_) + " is out of range for input " + x.describe() +
                                   " (expected [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "])");
    const auto a = static_cast<size_t>(axis);
    const int64_t dim = s[a];
    int64_t k = k_attr_;
    if (k_attr_ < 0) {
      const Tensor* kt = ctx.input(1);
      if (kt == nullptr || kt->num_elements() != 1 || kt->dtype() != DataType::kInt64)
        return kernel_error(ctx, "K must be an int64 tensor with one element, got " +
                                     (kt == nullptr ? std::string("nothing") : kt->describe()));
      k = kt->data<int64_t>()[0];
    }
    if (k < 0 || k > dim)
      return kernel_error(ctx, "k is " + std::to_string(k) + " but axis " + std::to_string(axis) + " of input " +
                                   x.describe() + " has " + std::to_string(dim) + " elements (expected [0, " +
                                   std::to_string(dim) + "])");

    Shape out_shape = s;
    out_shape[a] = k;
    SY_ASSIGN_OR_RETURN(Tensor * values, ctx.allocate_output(0, x.dtype(), out_shape));
    SY_ASSIGN_OR_RETURN(Tensor * indices, ctx.allocate_output(1, DataType::kInt64, out_shape));
    if (values->num_elements() == 0) return ok_status();

    Status status = not_implemented("TopK: element type " + std::string(data_type_name(x.dtype())) +
                                    " is not supported by this kernel");
    visit_type(TopKTypes{}, x.dtype(), [&]<typename T>(TypeTag<T>) {
      status = largest_ ? run_typed<T>(ctx, x, *values, *indices, a, k, LargestFirst<compute_t<T>>{})
                        : run_typed<T>(ctx, x, *values, *indices, a, k, SmallestFirst<compute_t<T>>{});
    });
    return status;
  }

 private:
  template <typename T, typename Cmp>
  Status run_typed(KernelContext& ctx, const Tensor& x, Tensor& values, Tensor& indices, size_t a, int64_t k,
                   Cmp before) const {
    using K = compute_t<T>;
    using E = Entry<K>;
    const Shape& s = x.shape();
    const int64_t dim = s[a];
    const int64_t outer = s.size_to(a);
    const int64_t inner = s.size_from(a + 1);
    const int64_t rows = outer * inner;
    // One scratch row per task; tasks take contiguous ranges of rows. Small
    // inputs stay on one task.
    constexpr int64_t kMinElementsPerTask = 16384;
    const int64_t by_work = std::max<int64_t>(1, rows * dim / kMinElementsPerTask);
    const int64_t tasks = std::min<int64_t>({rows, by_work, int64_t{ctx.thread_pool().num_threads()} * 4});
    SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(tasks * dim) * sizeof(E)));
    E* scratch = static_cast<E*>(mem);
    const T* src = x.data<T>();
    T* vout = values.data<T>();
    int64_t* iout = indices.data<int64_t>();
    const bool sorted = sorted_;

    auto task = [&](int64_t t_begin, int64_t t_end) {
      for (int64_t t = t_begin; t < t_end; ++t) {
        E* row = scratch + t * dim;
        const int64_t r_begin = rows * t / tasks;
        const int64_t r_end = rows * (t + 1) / tasks;
        for (int64_t r = r_begin; r < r_end; ++r) {
          const int64_t o = r / inner;
          const int64_t i = r % inner;
          const T* in = src + o * dim * inner + i;
          for (int64_t j = 0; j < dim; ++j) row[j] = E{load(in[j * inner]), j};
          select_top(row, dim, k, sorted, before);
          T* vo = vout + o * k * inner + i;
          int64_t* io = iout + o * k * inner + i;
          for (int64_t j = 0; j < k; ++j) {
            vo[j * inner] = in[row[j].index * inner];  // the original bits, not a round trip
            io[j * inner] = row[j].index;
          }
        }
      }
    };
    if (tasks == 1) {
      task(0, 1);
    } else {
      ctx.thread_pool().parallel_for(tasks, 1, task);
    }
    return ok_status();
  }

  int64_t axis_ = -1;
  int64_t k_attr_ = -1;  // opset 1's attribute; -1 when K is an input
  bool largest_ = true;
  bool sorted_ = true;
};

constexpr uint64_t kFloatsV1 =
    type_bit(DataType::kFloat16) | type_bit(DataType::kFloat) | type_bit(DataType::kDouble);
constexpr uint64_t kNumericV11 = type_mask(TopKTypes{}) & ~type_bit(DataType::kBfloat16);

const KernelDef kTopKKernels[] = {
    {"", "TopK", 1, 10, 0, kFloatsV1, &make_kernel<TopKKernel>},
    {"", "TopK", 11, 23, 0, kNumericV11, &make_kernel<TopKKernel>},
    {"", "TopK", 24, kLatestVersion, 0, type_mask(TopKTypes{}), &make_kernel<TopKKernel>},
};

}  // namespace

std::span<const KernelDef> topk_kernels() { return kTopKKernels; }

}  // namespace sy::cpu
