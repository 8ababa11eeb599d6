// Trilu: each row of each matrix is one kept run and one zeroed run, so the
// copy is a memcpy plus a fill per row, for any element type.
#include <string>

#include "providers/cpu/copy_util.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

class TriluKernel final : public Kernel {
 public:
  TriluKernel(const KernelCreateContext& ctx, Status& status) : upper_(ctx.node().attr_int("upper", 1) != 0) {
    const DataType kt = ctx.input_dtype(1);
    if (kt != DataType::kUndefined && kt != DataType::kInt64)
      status = ctx.error("input 1 (k) must be int64, got " + std::string(data_type_name(kt)));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const Shape& s = in.shape();
    if (s.rank() < 2) return kernel_error(ctx, "input must have rank >= 2, got " + in.describe());
    int64_t k = 0;
    if (const Tensor* kt = ctx.input(1)) {
      if (kt->dtype() != DataType::kInt64 || kt->num_elements() != 1)
        return kernel_error(ctx, "input 1 (k) must be an int64 scalar, got " + kt->describe());
      k = kt->data<int64_t>()[0];
    }
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in.dtype(), s));
    const int64_t n = s[s.rank() - 2];
    const int64_t m = s[s.rank() - 1];
    const int64_t rows = s.size_to(s.rank() - 1);
    if (rows == 0 || m == 0) return ok_status();
    // Clamped to [-1, m] first so that huge k cannot overflow i + k.
    k = std::clamp(k, -n - 1, m + 1);
    const bool upper = upper_;
    return dispatch_by_element(in.dtype(), [&]<typename T>() {
      const T* src = in.data<T>();
      T* dst = out->data<T>();
      const T zero{};
      ctx.thread_pool().parallel_for(rows, rows_per_chunk(m, sizeof(T)), [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          const int64_t i = row % n;
          const T* si = src + row * m;
          T* di = dst + row * m;
          if (upper) {
            // Keep columns j >= i + k.
            const int64_t c = std::clamp(i + k, int64_t{0}, m);
            fill_elements(di, zero, c);
            copy_elements(di + c, si + c, m - c);
          } else {
            // Keep columns j <= i + k.
            const int64_t c = std::clamp(i + k + 1, int64_t{0}, m);
            copy_elements(di, si, c);
            fill_elements(di + c, zero, m - c);
          }
        }
      });
      return ok_status();
    });
  }

 private:
  bool upper_;
};

const KernelDef kTriluKernels[] = {
    {"", "Trilu", 14, kLatestVersion, 0, kElementTypes, &make_kernel<TriluKernel>},
};

}  // namespace

std::span<const KernelDef> trilu_kernels() { return kTriluKernels; }

}  // namespace sy::cpu
