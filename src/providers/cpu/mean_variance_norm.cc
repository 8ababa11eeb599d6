// MeanVarianceNormalization: y = (x - mean) / (sqrt(var) + 1e-9), the
// mean and variance taken over `axes` (default [0, 2, 3]: per channel of an
// NCHW tensor) for each index of the other dims. The 1e-9 and its place
// after the square root are those of the op's function body in the spec.
//
// X's dims are first merged into runs: dims of size 1 dropped, neighbours
// that are both reduced (or both kept) joined, so NCHW with the default
// axes becomes [N | C | HW]. Each kept index is one group, a task for the
// thread pool: mean, then the variance around it (two passes, no
// cancellation), then the output, each pass walking the reduced runs with
// the innermost one as the inner loop. Sums are in double.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// Merged dims of one kind (reduced or kept), outermost first.
struct MergedDims {
  const int64_t* size = nullptr;
  const int64_t* stride = nullptr;
  int count = 0;

  int64_t elements() const {
    int64_t n = 1;
    for (int i = 0; i < count; ++i) n *= size[i];
    return n;
  }
  // The offset in X of flat index `index` over these dims.
  int64_t offset(int64_t index) const {
    int64_t off = 0;
    for (int i = count - 1; i >= 0; --i) {
      off += (index % size[i]) * stride[i];
      index /= size[i];
    }
    return off;
  }
};

// Calls f(p, len, stride) for each innermost run of the group at `base`:
// elements p[0], p[stride], ... p[(len - 1) * stride]. `reduced` has at
// least one dim.
template <typename T, typename F>
void for_each_run(const T* base, const MergedDims& reduced, F&& f) {
  const int last = reduced.count - 1;
  const MergedDims outer{reduced.size, reduced.stride, last};
  const int64_t runs = outer.elements();
  for (int64_t r = 0; r < runs; ++r) f(base + outer.offset(r), reduced.size[last], reduced.stride[last]);
}

template <typename T>
void normalize_groups(const T* x, T* y, const MergedDims& kept, const MergedDims& reduced, ThreadPool& pool) {
  const int64_t groups = kept.elements();
  const int64_t len = reduced.elements();
  parallel_range(pool, groups, std::max<int64_t>(1, kCheapChunk / len), [&](int64_t b, int64_t e) {
    for (int64_t q = b; q < e; ++q) {
      const int64_t base = kept.offset(q);
      double sum = 0;
      for_each_run(x + base, reduced, [&](const T* p, int64_t n, int64_t s) {
        for (int64_t j = 0; j < n; ++j) sum += static_cast<double>(load(p[j * s]));
      });
      const double mean = sum / static_cast<double>(len);
      double square_sum = 0;
      for_each_run(x + base, reduced, [&](const T* p, int64_t n, int64_t s) {
        for (int64_t j = 0; j < n; ++j) {
          const double d = static_cast<double>(load(p[j * s])) - mean;
          square_sum += d * d;
        }
      });
      const double inv = 1.0 / (std::sqrt(square_sum / static_cast<double>(len)) + 1e-9);
      T* yb = y + base;
      for_each_run(x + base, reduced, [&](const T* p, int64_t n, int64_t s) {
        T* yp = yb + (p - (x + base));
        for (int64_t j = 0; j < n; ++j)
          yp[j * s] = store<T>(static_cast<compute_t<T>>((static_cast<double>(load(p[j * s])) - mean) * inv));
      });
    }
  });
}

class MeanVarianceNormKernel final : public Kernel {
 public:
  MeanVarianceNormKernel(const KernelCreateContext& ctx, Status& /*status*/)
      : axes_(ctx.node().has_attr("axes") ? ctx.node().attr_ints("axes") : std::vector<int64_t>{0, 2, 3}) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Shape& shape = x.shape();
    const auto rank = static_cast<int64_t>(shape.rank());
    for (size_t i = 0; i < axes_.size(); ++i) {
      int64_t a = axes_[i];
      if (!normalize_axis(a, rank))
        return kernel_error(ctx, "axes value " + std::to_string(axes_[i]) + " is out of range for X " +
                                     shape.to_string());
      for (size_t j = 0; j < i; ++j) {
        int64_t b = axes_[j];
        if (normalize_axis(b, rank) && a == b)
          return kernel_error(ctx, "axes name dim " + std::to_string(a) + " twice (X " + shape.to_string() + ")");
      }
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), shape));
    if (x.num_elements() == 0) return ok_status();

    // Sizes and strides of the merged kept dims, then of the merged reduced
    // dims; each list holds at most rank entries, plus one for a list
    // that would be empty.
    const size_t slots = shape.rank() + 1;
    SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(4 * slots * sizeof(int64_t)));
    auto* table = static_cast<int64_t*>(mem);
    int64_t* kept_size = table;
    int64_t* kept_stride = table + slots;
    int64_t* red_size = table + 2 * slots;
    int64_t* red_stride = table + 3 * slots;
    int kept_count = 0, red_count = 0;
    int last_kind = -1;  // of the previous dim of size > 1: 0 kept, 1 reduced
    for (size_t d = 0; d < shape.rank(); ++d) {
      if (shape[d] == 1) continue;
      const int kind = is_reduced(static_cast<int64_t>(d), rank) ? 1 : 0;
      int64_t* size = kind == 1 ? red_size : kept_size;
      int64_t* stride = kind == 1 ? red_stride : kept_stride;
      int& count = kind == 1 ? red_count : kept_count;
      if (kind == last_kind) {
        size[count - 1] *= shape[d];
      } else {
        size[count] = shape[d];
        ++count;
      }
      stride[count - 1] = shape.size_from(d + 1);
      last_kind = kind;
    }
    if (red_count == 0) {  // every reduced dim has size 1: groups of one value
      red_size[0] = 1;
      red_stride[0] = 0;
      red_count = 1;
    }
    const MergedDims kept{kept_size, kept_stride, kept_count};
    const MergedDims reduced{red_size, red_stride, red_count};
    const bool handled = visit_type(FloatTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      normalize_groups<T>(x.data<T>(), y->data<T>(), kept, reduced, ctx.thread_pool());
    });
    if (!handled) return kernel_error(ctx, "unsupported type " + describe_input(ctx, 0, "X"));
    return ok_status();
  }

 private:
  // An empty axes list reduces every dim, as the ReduceMean of the op's
  // function body does.
  bool is_reduced(int64_t d, int64_t rank) const {
    if (axes_.empty()) return true;
    for (int64_t a : axes_) {
      if (normalize_axis(a, rank) && a == d) return true;
    }
    return false;
  }

  std::vector<int64_t> axes_;
};

constexpr uint64_t kFloatMask = type_mask(FloatTypes{});

// Version 13 adds bfloat16.
constexpr KernelDef kMeanVarianceNormKernels[] = {
    {"", "MeanVarianceNormalization", 9, 12, 0, kFloatMask & ~type_bit(DataType::kBfloat16),
     &make_kernel<MeanVarianceNormKernel>},
    {"", "MeanVarianceNormalization", 13, kLatestVersion, 0, kFloatMask, &make_kernel<MeanVarianceNormKernel>},
};

}  // namespace

std::span<const KernelDef> mean_variance_norm_kernels() { return kMeanVarianceNormKernels; }

}  // namespace sy::cpu
