// Det: batched determinants by LU with partial pivoting.
//
// Det factors each matrix in double whatever the input type: the product
// of the pivots loses precision fast in float, and the copy the
// factorisation needs anyway is the place to widen.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// ---- Det -------------------------------------------------------------------------

// Determinant of the n x n row-major matrix in `a` (overwritten).
double lu_determinant(double* a, int64_t n) {
  double det = 1.0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t pivot = k;
    double best = std::abs(a[k * n + k]);
    for (int64_t i = k + 1; i < n; ++i) {
      const double v = std::abs(a[i * n + k]);
      if (v > best) {
        best = v;
        pivot = i;
      }
    }
    if (best == 0.0) return 0.0;
    if (pivot != k) {
      std::swap_ranges(a + k * n, a + (k + 1) * n, a + pivot * n);
      det = -det;
    }
    const double d = a[k * n + k];
    det *= d;
    const double* rk = a + k * n;
    for (int64_t i = k + 1; i < n; ++i) {
      double* ri = a + i * n;
      const double f = ri[k] / d;
      for (int64_t j = k + 1; j < n; ++j) ri[j] -= f * rk[j];
    }
  }
  return det;
}

class DetKernel final : public Kernel {
 public:
  DetKernel(const KernelCreateContext&, Status&) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Shape& s = x.shape();
    if (s.rank() < 2 || s[s.rank() - 1] != s[s.rank() - 2])
      return kernel_error(ctx, "X must hold square matrices ([*, M, M]); got " + x.describe());
    const int64_t n = s[s.rank() - 1];
    Shape out_shape;
    for (size_t i = 0; i + 2 < s.rank(); ++i) out_shape.push_back(s[i]);
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    const int64_t batch = y->num_elements();
    if (batch == 0) return ok_status();
    Status status;
    const bool supported = visit_type(FloatTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      status = run_typed<T>(ctx, x.data<T>(), y->data<T>(), batch, n);
    });
    if (!supported) return kernel_error(ctx, "unsupported type " + x.describe() + " (expected a float type)");
    return status;
  }

 private:
  template <typename T>
  static Status run_typed(KernelContext& ctx, const T* x, T* y, int64_t batch, int64_t n) {
    ThreadPool& pool = ctx.thread_pool();
    // One task per thread, each with its own copy of a matrix.
    const int64_t work = std::max<int64_t>(1, n * n * n);
    const int64_t tasks = std::clamp<int64_t>(batch * work / (1 << 15), 1, std::min<int64_t>(pool.num_threads(), batch));
    const size_t per_task = KernelContext::scratch_align(static_cast<size_t>(n * n) * sizeof(double));
    SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(std::max<size_t>(64, per_task * static_cast<size_t>(tasks))));
    auto body = [&](int64_t t) {
      auto* a = reinterpret_cast<double*>(static_cast<char*>(scratch) + per_task * static_cast<size_t>(t));
      for (int64_t b = batch * t / tasks; b < batch * (t + 1) / tasks; ++b) {
        const T* m = x + b * n * n;
        for (int64_t i = 0; i < n * n; ++i) a[i] = static_cast<double>(load(m[i]));
        y[b] = store<T>(static_cast<compute_t<T>>(lu_determinant(a, n)));
      }
    };
    if (tasks == 1) {
      body(0);
    } else {
      pool.parallel_for(tasks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) body(t);
      });
    }
    return ok_status();
  }
};

const KernelDef kLinalgKernels[] = {
    {"", "Det", 11, 21,  0, type_mask(TypeList<float, double, Float16>{}), &make_kernel<DetKernel>},
    {"", "Det", 22, kLatestVersion, 0, type_mask(FloatTypes{}), &make_kernel<DetKernel>},
};

}  // namespace

std::span<const KernelDef> linalg_kernels() { return kLinalgKernels; }

}  // namespace sy::cpu
