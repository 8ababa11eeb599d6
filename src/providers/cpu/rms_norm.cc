// RMSNormalization: y = x / sqrt(mean(x^2) + epsilon) * scale, the mean
// over X's dims from `axis` on. Those dims are contiguous, so each row is
// one pass for the mean square and one for the output.
//
// Scale broadcasts to X (unidirectionally). The usual scale has the
// normalized dims' shape and is read as a row; any other is read through
// offset tables in scratch: the element for column j of row r is at
// row_offset[r] + col_offset[j], since X's dims before `axis` index rows
// and those after index columns.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/norm_attributes.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// out[k], for k over the flat index of X's dims [begin, end), is the offset
// of the scale element broadcast to it. Built one dim at a time, in place
// from the back: out[k / xd] still holds the offset of k's outer part.
void scale_offsets(const Shape& x, const Shape& scale, size_t begin, size_t end, int64_t* out) {
  const size_t lead = x.rank() - scale.rank();
  out[0] = 0;
  int64_t len = 1;
  for (size_t d = begin; d < end; ++d) {
    const int64_t xd = x[d];
    const int64_t sd = d < lead || scale[d - lead] == 1 ? 0 : scale.size_from(d - lead + 1);
    const int64_t next = len * xd;
    for (int64_t k = next - 1; k >= 0; --k) out[k] = out[k / xd] + (k % xd) * sd;
    len = next;
  }
}

// Rows of n elements. W is the accumulation type. row_offset and
// col_offset are null when the scale is one plain row.
template <typename T, typename V, typename W>
void rms_norm_rows(const T* x, const V* scale, V* y, int64_t rows, int64_t n, W epsilon, const int64_t* row_offset,
                   const int64_t* col_offset, ThreadPool& pool) {
  parallel_range(pool, rows, std::max<int64_t>(1, kCheapChunk / n), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* xr = x + r * n;
      V* yr = y + r * n;
      const W square_sum = row_sum_as<W>(xr, n, [](W v) { return v * v; });
      const W inv = W{1} / std::sqrt(square_sum / static_cast<W>(n) + epsilon);
      const V* sr = scale + (row_offset != nullptr ? row_offset[r] : 0);
      if (col_offset == nullptr) {
        for (int64_t c = 0; c < n; ++c)
          yr[c] = store<V>(static_cast<compute_t<V>>(static_cast<W>(load(xr[c])) * inv * static_cast<W>(load(sr[c]))));
      } else {
        for (int64_t c = 0; c < n; ++c)
          yr[c] = store<V>(
              static_cast<compute_t<V>>(static_cast<W>(load(xr[c])) * inv * static_cast<W>(load(sr[col_offset[c]]))));
      }
    }
  });
}

class RmsNormKernel final : public Kernel {
 public:
  RmsNormKernel(const KernelCreateContext& ctx, Status& status) {
    status = attrs_.read(ctx);
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    if (x == nullptr || scale == nullptr) return kernel_error(ctx, "inputs X and scale are required");
    const Shape& shape = x->shape();
    SY_ASSIGN_OR_RETURN(const size_t ax, attrs_.first_axis(ctx, shape));
    const Shape& ss = scale->shape();
    bool broadcasts = ss.rank() <= shape.rank();
    for (size_t i = 0; broadcasts && i < ss.rank(); ++i) {
      const int64_t d = shape[shape.rank() - ss.rank() + i];
      broadcasts = ss[i] == 1 || ss[i] == d;
    }
    if (!broadcasts)
      return kernel_error(ctx, describe_input(ctx, 1, "scale") + " does not broadcast to X " + shape.to_string());
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, scale->dtype(), shape));
    if (x->num_elements() == 0) return ok_status();

    const int64_t rows = shape.size_to(ax);
    const int64_t n = shape.size_from(ax);
    // Scale varies along a row dim when one of its dims aligned with X's
    // dims before `axis` is not 1.
    const size_t lead = shape.rank() - ss.rank();
    bool per_row = false;
    for (size_t d = lead; d < ax; ++d) per_row = per_row || ss[d - lead] != 1;
    const bool plain = !per_row && scale->num_elements() == n;
    int64_t* row_offset = nullptr;
    int64_t* col_offset = nullptr;
    if (!plain) {
      const size_t row_bytes = per_row ? KernelContext::scratch_align(static_cast<size_t>(rows) * sizeof(int64_t)) : 0;
      SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(row_bytes + static_cast<size_t>(n) * sizeof(int64_t)));
      if (per_row) {
        row_offset = static_cast<int64_t*>(mem);
        scale_offsets(shape, ss, 0, ax, row_offset);
      }
      col_offset = reinterpret_cast<int64_t*>(static_cast<char*>(mem) + row_bytes);
      scale_offsets(shape, ss, ax, shape.rank(), col_offset);
    }

    bool handled_scale = false;
    const bool handled = visit_type(FloatTypes{}, x->dtype(), [&](auto xtag) {
      using T = typename decltype(xtag)::type;
      handled_scale = visit_type(FloatTypes{}, scale->dtype(), [&](auto stag) {
        using V = typename decltype(stag)::type;
        // Double when either of X and scale is.
        using Wider = std::conditional_t<std::is_same_v<V, double>, double, T>;
        visit_stats_type<Wider>(attrs_.stash, [&](auto wtag) {
          using W = typename decltype(wtag)::type;
          rms_norm_rows<T, V, W>(x->data<T>(), scale->data<V>(), y->data<V>(), rows, n, attrs_.epsilon, row_offset,
                                 col_offset, ctx.thread_pool());
        });
      });
    });
    if (!handled) return kernel_error(ctx, "unsupported type " + describe_input(ctx, 0, "X"));
    if (!handled_scale) return kernel_error(ctx, "unsupported type " + describe_input(ctx, 1, "scale"));
    return ok_status();
  }

 private:
  AxisNormAttributes attrs_;
};

constexpr KernelDef kRmsNormKernels[] = {
    {"", "RMSNormalization", 23, kLatestVersion, 0, type_mask(FloatTypes{}), &make_kernel<RmsNormKernel>},
};

}  // namespace

std::span<const KernelDef> rms_norm_kernels() { return kRmsNormKernels; }

}  // namespace sy::cpu
