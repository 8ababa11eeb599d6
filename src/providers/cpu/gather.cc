// Gather, GatherElements, GatherND. Indices are checked in one pass before
// any copying, so an out-of-range index is an error naming its position and
// value rather than a read outside the tensor, and the copy loops (parallel,
// one contiguous run per gathered slice) need no error path.
#include <string>

#include "providers/cpu/copy_util.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

Status read_axis(const KernelContext& ctx, int64_t attr, const Tensor& data, int64_t& axis) {
  axis = attr;
  if (!normalize_axis(axis, static_cast<int64_t>(data.shape().rank())))
    return kernel_error(ctx, "axis " + std::to_string(attr) + " is out of range for data " + data.describe());
  return ok_status();
}

// ---- Gather -------------------------------------------------------------------

class GatherKernel final : public Kernel {
 public:
  GatherKernel(const KernelCreateContext& ctx, Status&) : axis_(ctx.node().attr_int("axis", 0)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& data = *ctx.input(0);
    const Tensor& indices = *ctx.input(1);
    const Shape& s = data.shape();
    int64_t axis = 0;
    SY_RETURN_IF_ERROR(read_axis(ctx, axis_, data, axis));
    const auto a = static_cast<size_t>(axis);
    const int64_t dim = s[a];
    const int64_t outer = s.size_to(a);
    const int64_t inner = s.size_from(a + 1);
    const int64_t m = indices.num_elements();

    Shape out_shape;
    for (size_t k = 0; k < a; ++k) out_shape.push_back(s[k]);
    for (int64_t d : indices.shape()) out_shape.push_back(d);
    for (size_t k = a + 1; k < s.rank(); ++k) out_shape.push_back(s[k]);
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, data.dtype(), out_shape));

    return dispatch_index(ctx, indices, [&]<typename I>() {
      const I* idx = indices.data<I>();
      SY_RETURN_IF_ERROR(check_indices(ctx, idx, m, dim, data, axis));
      return dispatch_by_element(data.dtype(), [&]<typename T>() {
        const T* src = data.data<T>();
        T* dst = out->data<T>();
        ctx.thread_pool().parallel_for(outer * m, rows_per_chunk(inner, sizeof(T)), [&](int64_t b, int64_t e) {
          for (int64_t row = b; row < e; ++row) {
            const int64_t o = row / m;
            int64_t j = idx[row % m];
            if (j < 0) j += dim;
            copy_elements(dst + row * inner, src + (o * dim + j) * inner, inner);
          }
        });
        return ok_status();
      });
    });
  }

 private:
  int64_t axis_;
};

// ---- GatherElements -----------------------------------------------------------

class GatherElementsKernel final : public Kernel {
 public:
  GatherElementsKernel(const KernelCreateContext& ctx, Status&) : axis_(ctx.node().attr_int("axis", 0)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& data = *ctx.input(0);
    const Tensor& indices = *ctx.input(1);
    const Shape& s = data.shape();
    const Shape& is = indices.shape();
    int64_t axis = 0;
    SY_RETURN_IF_ERROR(read_axis(ctx, axis_, data, axis));
    bool ok = is.rank() == s.rank();
    for (size_t k = 0; ok && k < s.rank(); ++k) ok = k == static_cast<size_t>(axis) || is[k] <= s[k];
    if (!ok)
      return kernel_error(ctx, "indices " + indices.describe() + " must have the rank of data " + data.describe() +
                                   " and no larger dims except on axis " + std::to_string(axis));
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, data.dtype(), is));
    if (out->num_elements() == 0) return ok_status();
    const auto r = static_cast<int>(s.rank());
    if (r > CopyPlan::kMaxRank) return kernel_error(ctx, "data rank " + std::to_string(r) + " is too large");
    Shape dstrides;
    contiguous_strides(s, dstrides);
    const int64_t dim = s[static_cast<size_t>(axis)];
    const int64_t axis_stride = dstrides[static_cast<size_t>(axis)];
    const int64_t inner = is[static_cast<size_t>(r - 1)];
    // Within a row of the indices, the data position moves along the last
    // data axis unless that axis is the gathered one.
    const int64_t inner_step = axis == r - 1 ? 0 : 1;
    const int64_t rows = indices.num_elements() / inner;

    return dispatch_index(ctx, indices, [&]<typename I>() {
      const I* idx = indices.data<I>();
      SY_RETURN_IF_ERROR(check_indices(ctx, idx, indices.num_elements(), dim, data, axis));
      return dispatch_by_element(data.dtype(), [&]<typename T>() {
        const T* src = data.data<T>();
        T* dst = out->data<T>();
        ctx.thread_pool().parallel_for(rows, rows_per_chunk(inner, sizeof(T)), [&](int64_t b, int64_t e) {
          // Data offset of row b without the gathered axis's contribution.
          int64_t index[CopyPlan::kMaxRank];
          int64_t base = 0;
          int64_t rem = b;
          for (int k = r - 2; k >= 0; --k) {
            index[k] = rem % is[static_cast<size_t>(k)];
            rem /= is[static_cast<size_t>(k)];
            if (k != axis) base += index[k] * dstrides[static_cast<size_t>(k)];
          }
          for (int64_t row = b; row < e; ++row) {
            const I* ri = idx + row * inner;
            T* ro = dst + row * inner;
            for (int64_t k = 0; k < inner; ++k) {
              int64_t j = ri[k];
              if (j < 0) j += dim;
              ro[k] = src[base + k * inner_step + j * axis_stride];
            }
            for (int k = r - 2; k >= 0; --k) {
              const int64_t step = k == axis ? 0 : dstrides[static_cast<size_t>(k)];
              base += step;
              if (++index[k] < is[static_cast<size_t>(k)]) break;
              base -= step * is[static_cast<size_t>(k)];
              index[k] = 0;
            }
          }
        });
        return ok_status();
      });
    });
  }

 private:
  int64_t axis_;
};

// ---- GatherND -----------------------------------------------------------------

class GatherNDKernel final : public Kernel {
 public:
  GatherNDKernel(const KernelCreateContext& ctx, Status& status)
      : batch_dims_(ctx.opset() >= 12 ? ctx.node().attr_int("batch_dims", 0) : 0) {
    if (batch_dims_ < 0) status = ctx.error("batch_dims must be >= 0, got " + std::to_string(batch_dims_));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& data = *ctx.input(0);
    const Tensor& indices = *ctx.input(1);
    const Shape& s = data.shape();
    const Shape& is = indices.shape();
    const auto r = static_cast<int64_t>(s.rank());
    const auto q = static_cast<int64_t>(is.rank());
    const int64_t b = batch_dims_;
    if (r < 1 || q < 1 || b >= std::min(r, q))
      return kernel_error(ctx, "data " + data.describe() + " and indices " + indices.describe() +
                                   " must have rank >= 1 and more than batch_dims=" + std::to_string(b) + " dims");
    const int64_t last = is[static_cast<size_t>(q - 1)];
    bool ok = last >= 1 && last <= r - b;
    for (int64_t k = 0; ok && k < b; ++k) ok = is[static_cast<size_t>(k)] == s[static_cast<size_t>(k)];
    if (!ok)
      return kernel_error(ctx, "indices " + indices.describe() + " do not fit data " + data.describe() +
                                   " with batch_dims=" + std::to_string(b) +
                                   " (expected matching batch dims and a last dim in [1, " + std::to_string(r - b) +
                                   "])");

    Shape out_shape;
    for (int64_t k = 0; k < q - 1; ++k) out_shape.push_back(is[static_cast<size_t>(k)]);
    for (int64_t k = b + last; k < r; ++k) out_shape.push_back(s[static_cast<size_t>(k)]);
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, data.dtype(), out_shape));
    if (out->num_elements() == 0) return ok_status();

    Shape dstrides;
    contiguous_strides(s, dstrides);
    const int64_t slice = s.size_from(static_cast<size_t>(b + last));
    const int64_t batch_stride = s.size_from(static_cast<size_t>(b));
    const int64_t tuples = indices.num_elements() / last;  // batches x tuples per batch
    const int64_t per_batch = is.size_from(static_cast<size_t>(b)) / last;

    return dispatch_index(ctx, indices, [&]<typename I>() {
      const I* idx = indices.data<I>();
      for (int64_t t = 0; t < tuples; ++t)
        for (int64_t k = 0; k < last; ++k) {
          const int64_t dim = s[static_cast<size_t>(b + k)];
          const int64_t v = idx[t * last + k];
          if (v < -dim || v >= dim) return index_error(ctx, t * last + k, v, dim, data, b + k);
        }
      return dispatch_by_element(data.dtype(), [&]<typename T>() {
        const T* src = data.data<T>();
        T* dst = out->data<T>();
        ctx.thread_pool().parallel_for(tuples, rows_per_chunk(slice, sizeof(T)), [&](int64_t lo, int64_t hi) {
          for (int64_t t = lo; t < hi; ++t) {
            int64_t offset = (t / per_batch) * batch_stride;
            for (int64_t k = 0; k < last; ++k) {
              const int64_t dim = s[static_cast<size_t>(b + k)];
              int64_t v = idx[t * last + k];
              if (v < 0) v += dim;
              offset += v * dstrides[static_cast<size_t>(b + k)];
            }
            copy_elements(dst + t * slice, src + offset, slice);
          }
        });
        return ok_status();
      });
    });
  }

 private:
  int64_t batch_dims_;
};

const KernelDef kGatherKernels[] = {
    {"", "Gather", 1, kLatestVersion, 0, kElementTypes, &make_kernel<GatherKernel>},
    {"", "GatherElements", 11, kLatestVersion, 0, kElementTypes, &make_kernel<GatherElementsKernel>},
    {"", "GatherND", 11, kLatestVersion, 0, kElementTypes, &make_kernel<GatherNDKernel>},
};

}  // namespace

std::span<const KernelDef> gather_kernels() { return kGatherKernels; }

}  // namespace sy::cpu
