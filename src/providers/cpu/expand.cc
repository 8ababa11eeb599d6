// Expand and Tile, both as a strided copy in which a source stride of 0
// repeats: Expand broadcasts with stride 0 on the broadcast dims; Tile views
// each output dim d*r as [r, d] with strides [0, input stride].
#include <string>

#include "core/checked_math.h"
#include "providers/cpu/copy_util.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

std::string ints_to_string(const Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.num_elements(); ++i) s += (i ? "," : "") + std::to_string(t.data<int64_t>()[i]);
  return s + "]";
}

Status check_int64_vector(const KernelContext& ctx, const Tensor* t, size_t index, const char* name) {
  if (t == nullptr) return kernel_error(ctx, "input " + std::to_string(index) + " (" + name + ") is missing");
  if (t->dtype() != DataType::kInt64 || t->shape().rank() != 1)
    return kernel_error(
        ctx, "input " + std::to_string(index) + " (" + name + ") must be a 1-D int64 tensor, got " + t->describe());
  return ok_status();
}

Status check_int64_input_type(const KernelCreateContext& ctx, size_t index, const char* name) {
  const DataType t = ctx.input_dtype(index);
  if (t != DataType::kUndefined && t != DataType::kInt64)
    return ctx.error("input " + std::to_string(index) + " (" + name + ") must be int64, got " +
                     std::string(data_type_name(t)));
  return ok_status();
}

class ExpandKernel final : public Kernel {
 public:
  ExpandKernel(const KernelCreateContext& ctx, Status& status) { status = check_int64_input_type(ctx, 1, "shape"); }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const Tensor* shape = ctx.input(1);
    SY_RETURN_IF_ERROR(check_int64_vector(ctx, shape, 1, "shape"));
    const Shape& s = in.shape();
    const auto n = static_cast<size_t>(shape->num_elements());
    const size_t r = std::max(s.rank(), n);
    Shape in_strides;
    contiguous_strides(s, in_strides);
    Shape out_shape;
    out_shape.resize(r);
    CopyPlan plan;
    for (size_t k = 0; k < r; ++k) {
      // Both aligned from the right; a missing dim is 1.
      const bool has_in = k + s.rank() >= r;
      const bool has_req = k + n >= r;
      const int64_t din = has_in ? s[k + s.rank() - r] : 1;
      const int64_t dreq = has_req ? shape->data<int64_t>()[k + n - r] : 1;
      int64_t d = din;
      if (din == 1) {
        d = dreq;
      } else if (dreq != 1 && dreq != din) {
        return kernel_error(ctx, "input " + in.describe() + " cannot be expanded to shape " + ints_to_string(*shape) +
                                     ": dimension " + std::to_string(din) + " vs " + std::to_string(dreq));
      }
      if (d < 0) return kernel_error(ctx, "shape " + ints_to_string(*shape) + " has a negative dimension");
      out_shape[k] = d;
      plan.add(d, din == d && has_in ? in_strides[k + s.rank() - r] : 0);
    }
    // allocate_output refuses a count that overflows, naming node and output.
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in.dtype(), out_shape));
    if (out->num_elements() == 0) return ok_status();
    return strided_copy(ctx, in.dtype(), out->raw_data(), in.raw_data(), plan);
  }
};

class TileKernel final : public Kernel {
 public:
  TileKernel(const KernelCreateContext& ctx, Status& status) { status = check_int64_input_type(ctx, 1, "repeats"); }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const Tensor* repeats = ctx.input(1);
    SY_RETURN_IF_ERROR(check_int64_vector(ctx, repeats, 1, "repeats"));
    const Shape& s = in.shape();
    if (static_cast<size_t>(repeats->num_elements()) != s.rank())
      return kernel_error(
          ctx, "repeats " + ints_to_string(*repeats) + " must have one entry per dim of input " + in.describe());
    Shape in_strides;
    contiguous_strides(s, in_strides);
    Shape out_shape;
    out_shape.resize(s.rank());
    CopyPlan plan;
    for (size_t k = 0; k < s.rank(); ++k) {
      const int64_t rep = repeats->data<int64_t>()[k];
      if (rep < 0) return kernel_error(ctx, "repeats " + ints_to_string(*repeats) + " has a negative entry");
      if (!checked_mul(s[k], rep, out_shape[k]))
        return kernel_invalid_argument(ctx, "input 1 (repeats) " + ints_to_string(*repeats) + ": dim " +
                                                std::to_string(k) + " of input 0 " + in.describe() + " times " +
                                                std::to_string(rep) + " overflows int64");
      plan.add(rep, 0);
      plan.add(s[k], in_strides[k]);
    }
    // allocate_output refuses a count that overflows, naming node and output.
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in.dtype(), out_shape));
    if (out->num_elements() == 0) return ok_status();
    return strided_copy(ctx, in.dtype(), out->raw_data(), in.raw_data(), plan);
  }
};

const KernelDef kExpandKernels[] = {
    {"", "Expand", 8, kLatestVersion, 0, kElementTypes, &make_kernel<ExpandKernel>},
    {"", "Tile", 6, kLatestVersion, 0, kElementTypes, &make_kernel<TileKernel>},
};

}  // namespace

std::span<const KernelDef> expand_kernels() { return kExpandKernels; }

}  // namespace sy::cpu
