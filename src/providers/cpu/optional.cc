// The optional ops: Optional, OptionalHasElement and OptionalGetElement.
//
// An optional that holds a value is that value itself (a tensor or a
// sequence); an empty one is Tensor::none(). So wrapping and unwrapping
// move no data: a sequence is shared as it is, and a tensor is copied into
// the output's planned memory, as Identity does, since the input may be a
// view of a buffer the executor reuses.
#include <string>

#include "providers/cpu/copy_util.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

class OptionalKernel final : public Kernel {
 public:
  OptionalKernel(const KernelCreateContext& ctx, Status&) {
    // The empty optional's element type, for whoever reads the value.
    const ValueType* out = ctx.output_type(0);
    if (out != nullptr && out->element != nullptr) {
      const ValueType& e = *out->element;
      element_dtype_ = e.is_tensor() ? e.dtype : (e.element != nullptr ? e.element->dtype : DataType::kUndefined);
    }
  }
  Status run(KernelContext& ctx) const override {
    const Tensor* in = ctx.input(0);
    if (in == nullptr) return ctx.set_output(0, Tensor::none(element_dtype_));
    if (in->kind() == ValueKind::kNone) return kernel_error(ctx, "input 0 is an empty optional; it must hold a value");
    return output_value(ctx, 0, *in);
  }

 private:
  DataType element_dtype_ = DataType::kUndefined;
};

class OptionalHasElementKernel final : public Kernel {
 public:
  OptionalHasElementKernel(const KernelCreateContext&, Status&) {}
  Status run(KernelContext& ctx) const override {
    // A missing input, or an optional with nothing in it, has no element;
    // a tensor or sequence (version 18) has.
    const Tensor* in = ctx.input(0);
    const bool has = in != nullptr && in->kind() != ValueKind::kNone;
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataType::kBool, Shape{}));
    out->data<bool>()[0] = has;
    return ok_status();
  }
};

class OptionalGetElementKernel final : public Kernel {
 public:
  OptionalGetElementKernel(const KernelCreateContext&, Status&) {}
  Status run(KernelContext& ctx) const override {
    const Tensor* in = ctx.input(0);
    if (in == nullptr) return kernel_error(ctx, "input 0 is missing");
    if (in->kind() == ValueKind::kNone)
      return kernel_invalid_argument(ctx, "input 0 is an empty optional; there is no element to get");
    return output_value(ctx, 0, *in);
  }
};

constexpr bool kContainers = true;  // the KernelDef flag: inputs may be sequences or optionals

const KernelDef kOptionalKernels[] = {
    {"", "Optional", 15, kLatestVersion, -1, 0, &make_kernel<OptionalKernel>, kContainers},
    {"", "OptionalHasElement", 15, kLatestVersion, -1, 0, &make_kernel<OptionalHasElementKernel>, kContainers},
    {"", "OptionalGetElement", 15, kLatestVersion, -1, 0, &make_kernel<OptionalGetElementKernel>, kContainers},
};

}  // namespace

std::span<const KernelDef> optional_kernels() { return kOptionalKernels; }

}  // namespace sy::cpu
