// Transpose. The permuted view is first reduced by CopyPlan: unit dims
// vanish and output dims that stay neighbours in the input merge, so e.g.
// [B,S,H,D] -> [B,H,S,D] becomes a copy of D-element runs and [M,N] -> [N,M]
// stays 2-D. Then:
// - the innermost output dim is contiguous in the input: strided_copy moves
//   whole runs with memcpy;
// - otherwise, when some other output dim is the input's contiguous one,
//   the two are transposed in square tiles so that reads and writes both
//   stay within a few cache lines (the classic blocked transpose), batched
//   over the remaining dims;
// - anything else: strided_copy, element by element.
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/copy_util.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// Output dim p (not the last) is contiguous in the input; the last output
// dim is not. Copies in tiles over (p, last), batched over the other dims.
template <typename T>
void blocked_transpose(T* dst, const T* src, const CopyPlan& plan, int p, ThreadPool& pool) {
  constexpr int64_t kTile = sizeof(T) <= 4 ? 32 : 16;
  const int r = plan.rank;
  const int last = r - 1;
  int64_t dst_strides[CopyPlan::kMaxRank];
  int64_t s = 1;
  for (int i = r - 1; i >= 0; --i) {
    dst_strides[i] = s;
    s *= plan.dims[i];
  }
  const int64_t rows = plan.dims[p];     // along p: src stride 1, dst stride dst_strides[p]
  const int64_t cols = plan.dims[last];  // along last: dst stride 1, src stride src_strides[last]
  const int64_t dst_row = dst_strides[p];
  const int64_t src_col = plan.src_strides[last];
  int64_t batches = 1;
  for (int i = 0; i < last; ++i)
    if (i != p) batches *= plan.dims[i];
  const int64_t row_tiles = (rows + kTile - 1) / kTile;

  pool.parallel_for(batches * row_tiles, rows_per_chunk(kTile * cols, sizeof(T)), [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      int64_t batch = unit / row_tiles;
      const int64_t i0 = (unit % row_tiles) * kTile;
      const int64_t i1 = std::min(rows, i0 + kTile);
      int64_t src_base = 0;
      int64_t dst_base = 0;
      for (int i = last - 1; i >= 0; --i) {
        if (i == p) continue;
        const int64_t idx = batch % plan.dims[i];
        batch /= plan.dims[i];
        src_base += idx * plan.src_strides[i];
        dst_base += idx * dst_strides[i];
      }
      for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
        const int64_t j1 = std::min(cols, j0 + kTile);
        if constexpr (std::is_trivially_copyable_v<T>) {
          // Through a tile buffer: each source and destination line is then
          // touched once, even when the rows are a power of two apart and
          // would evict each other from the cache if read in place.
          T tile[kTile][kTile];
          for (int64_t j = j0; j < j1; ++j) copy_elements(tile[j - j0], src + src_base + j * src_col + i0, i1 - i0);
          for (int64_t i = i0; i < i1; ++i) {
            T* out = dst + dst_base + i * dst_row;
            for (int64_t j = j0; j < j1; ++j) out[j] = tile[j - j0][i - i0];
          }
        } else {
          for (int64_t i = i0; i < i1; ++i) {
            T* out = dst + dst_base + i * dst_row;
            const T* in = src + src_base + i;
            for (int64_t j = j0; j < j1; ++j) out[j] = in[j * src_col];
          }
        }
      }
    }
  });
}

class TransposeKernel final : public Kernel {
 public:
  TransposeKernel(const KernelCreateContext& ctx, Status& status) {
    has_perm_ = ctx.node().has_attr("perm");
    perm_ = ctx.node().attr_ints("perm");
    std::vector<bool> used(perm_.size(), false);
    for (int64_t v : perm_) {
      if (v < 0 || v >= static_cast<int64_t>(perm_.size()) || used[static_cast<size_t>(v)]) {
        status =
            ctx.error("perm " + perm_string() + " is not a permutation of 0.." + std::to_string(perm_.size()) + "-1");
        return;
      }
      used[static_cast<size_t>(v)] = true;
    }
    const ValueType* t = ctx.input_type(0);
    if (has_perm_ && t != nullptr && t->has_shape && t->rank() != perm_.size())
      status = ctx.error("perm " + perm_string() + " has " + std::to_string(perm_.size()) +
                         " entries but input 0 has rank " + std::to_string(t->rank()));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const Shape& s = in.shape();
    const size_t r = s.rank();
    if (has_perm_ && perm_.size() != r)
      return kernel_error(ctx, "perm " + perm_string() + " has " + std::to_string(perm_.size()) +
                                   " entries but the input is " + in.describe());
    Shape in_strides;
    contiguous_strides(s, in_strides);
    Shape out_shape;
    out_shape.resize(r);
    CopyPlan plan;
    for (size_t i = 0; i < r; ++i) {
      const size_t from = has_perm_ ? static_cast<size_t>(perm_[i]) : r - 1 - i;
      out_shape[i] = s[from];
      plan.add(s[from], in_strides[from]);
    }
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in.dtype(), out_shape));
    if (plan.empty) return ok_status();
    const int pr = plan.rank;
    int p = -1;
    if (!plan.too_deep && pr >= 2 && plan.src_strides[pr - 1] != 1)
      for (int i = 0; i < pr - 1; ++i)
        if (plan.src_strides[i] == 1) p = i;
    if (p < 0) return strided_copy(ctx, in.dtype(), out->raw_data(), in.raw_data(), plan);
    return dispatch_by_element(in.dtype(), [&]<typename T>() {
      blocked_transpose(out->data<T>(), in.data<T>(), plan, p, ctx.thread_pool());
      return ok_status();
    });
  }

 private:
  std::string perm_string() const {
    std::string s = "[";
    for (size_t i = 0; i < perm_.size(); ++i) s += (i ? "," : "") + std::to_string(perm_[i]);
    return s + "]";
  }

  bool has_perm_ = false;
  std::vector<int64_t> perm_;
};

const KernelDef kTransposeKernels[] = {
    {"", "Transpose", 1, kLatestVersion, 0, kElementTypes, &make_kernel<TransposeKernel>},
};

}  // namespace

std::span<const KernelDef> transpose_kernels() { return kTransposeKernels; }

}  // namespace sy::cpu
