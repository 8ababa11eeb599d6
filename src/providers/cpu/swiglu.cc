// SwiGLU (opset 28): Y = A * sigmoid(alpha * A) * B, elementwise over two
// inputs of one shape. Half types are widened to float per element.
#include <cmath>
#include <string>

#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

class SwigluKernel final : public Kernel {
 public:
  SwigluKernel(const KernelCreateContext& ctx, Status&) : alpha_(ctx.node().attr_float("alpha", 1.0f)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    if (b.dtype() != a.dtype())
      return kernel_error(ctx, "input 1 (B) must have A's element type, got " + b.describe() + " and " +
                                   a.describe());
    if (b.shape() != a.shape())
      return kernel_error(ctx, "inputs A and B must have the same shape (no broadcasting), got " + a.describe() +
                                   " and " + b.describe());
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a.dtype(), a.shape()));
    Status status = not_implemented(ctx.node().describe() + ": element type " +
                                    std::string(data_type_name(a.dtype())) + " is not supported");
    visit_type(FloatTypes{}, a.dtype(), [&]<typename T>(TypeTag<T>) {
      using C = compute_t<T>;
      const auto alpha = static_cast<C>(alpha_);
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* out = y->data<T>();
      parallel_range(ctx.thread_pool(), a.num_elements(), kMathChunk, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const C g = load(pa[i]);
          const C sig = C{1} / (C{1} + std::exp(-alpha * g));
          out[i] = store<T>(g * sig * load(pb[i]));
        }
      });
      status = ok_status();
    });
    return status;
  }

 private:
  float alpha_;
};

const KernelDef kSwigluKernels[] = {
    {"", "SwiGLU", 28, kLatestVersion, 0, type_mask(FloatTypes{}), &make_kernel<SwigluKernel>},
};

}  // namespace

std::span<const KernelDef> swiglu_kernels() { return kSwigluKernels; }

}  // namespace sy::cpu
