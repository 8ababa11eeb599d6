// HannWindow, HammingWindow and BlackmanWindow: the cosine windows
//   w[k] = a0 - a1 cos(2 pi k / N) + a2 cos(4 pi k / N),  k < size,
// with N = size when periodic (the default) and size - 1 when symmetric,
// computed in double and converted to output_datatype (default float).
// The coefficients are the spec's: Hann 1/2, 1/2; Hamming 25/46,
// 1 - 25/46; Blackman 0.42, 0.5, 0.08. The cosine terms are summed before
// a0 is added, as the reference implementation does: then the peak comes
// out exactly 1, where 0.42 + 0.5 + 0.08 rounds to 1 - 2^-53, which an
// integer output_datatype would truncate to 0.
#include <cmath>
#include <numbers>
#include <string>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/signal_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

struct CosineTerms {
  double a0;
  double a1;
  double a2;
};

constexpr CosineTerms kHann{0.5, 0.5, 0.0};
constexpr CosineTerms kHamming{25.0 / 46.0, 1 - 25.0 / 46.0, 0.0};
constexpr CosineTerms kBlackman{0.42, 0.5, 0.08};

template <const CosineTerms& kTerms>
class WindowKernel final : public Kernel {
 public:
  WindowKernel(const KernelCreateContext& ctx, Status& status) {
    const int64_t periodic = ctx.node().attr_int("periodic", 1);
    if (periodic != 0 && periodic != 1) {
      status = ctx.error("periodic must be 0 or 1, got " + std::to_string(periodic));
      return;
    }
    periodic_ = periodic == 1;
    status = read_output_datatype(ctx, dtype_);
  }

  Status run(KernelContext& ctx) const override {
    int64_t size = 0;
    SY_RETURN_IF_ERROR(scalar_int_input(ctx, 0, "size", size));
    if (size < 0) return kernel_invalid_argument(ctx, "size must not be negative, got " + std::to_string(size));
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype_, Shape{size}));
    const int64_t period = periodic_ ? size : size - 1;
    store_values(*y, size, [&](int64_t k) {
      // A symmetric window of one sample is [1], as numpy's hanning(1)
      // and torch give; the formula would divide 0 by 0.
      if (period == 0) return 1.0;
      const double angle = 2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(period);
      return (kTerms.a2 * std::cos(2 * angle) - kTerms.a1 * std::cos(angle)) + kTerms.a0;
    });
    return ok_status();
  }

 private:
  bool periodic_ = true;
  DataType dtype_ = DataType::kFloat;
};

const KernelDef kWindowKernels[] = {
    {"", "HannWindow", 17, kLatestVersion, 0, kIndexTypes, &make_kernel<WindowKernel<kHann>>},
    {"", "HammingWindow", 17, kLatestVersion, 0, kIndexTypes, &make_kernel<WindowKernel<kHamming>>},
    {"", "BlackmanWindow", 17, kLatestVersion, 0, kIndexTypes, &make_kernel<WindowKernel<kBlackman>>},
};

}  // namespace

std::span<const KernelDef> window_kernels() { return kWindowKernels; }

}  // namespace sy::cpu
