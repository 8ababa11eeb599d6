// DepthToSpace and SpaceToDepth. Both are a reshape to 6-D, a transpose and
// a reshape back, so each is one strided copy: the output is walked in
// order and the input strides say where each element comes from. CopyPlan
// merges the runs that stay contiguous (whole rows when blocksize is 1).
#include <string>

#include "core/checked_math.h"
#include "providers/cpu/copy_util.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

Status read_blocksize(const KernelCreateContext& ctx, int64_t& blocksize) {
  const Attribute* a = ctx.node().attr("blocksize");
  if (a == nullptr) return ctx.error("attribute 'blocksize' is required");
  if (a->i <= 0) return ctx.error("blocksize must be positive, got " + std::to_string(a->i));
  // Every kernel below uses blocksize^2; refusing here keeps that in range.
  int64_t square = 0;
  if (!checked_mul(a->i, a->i, square))
    return ctx.error("blocksize " + std::to_string(a->i) + " is too large: its square overflows int64");
  blocksize = a->i;
  return ok_status();
}

// An output dim `dim` * `factor` (a power of the blocksize), which the
// element count check at allocation would see only after it wrapped.
Status times_blocksize(const KernelContext& ctx, const Tensor& in, int64_t dim, int64_t factor, int64_t& out) {
  if (checked_mul(dim, factor, out)) return ok_status();
  return kernel_invalid_argument(ctx, "input 0 " + in.describe() + ": dim " + std::to_string(dim) + " times " +
                                          std::to_string(factor) + " overflows int64");
}

class DepthToSpaceKernel final : public Kernel {
 public:
  DepthToSpaceKernel(const KernelCreateContext& ctx, Status& status) {
    status = read_blocksize(ctx, b_);
    if (!status.ok()) return;
    const std::string mode = ctx.opset() >= 11 ? ctx.node().attr_string("mode", "DCR") : "DCR";
    if (mode == "CRD") {
      crd_ = true;
    } else if (mode != "DCR") {
      status = ctx.error("mode '" + mode + "' is not supported (expected DCR or CRD)");
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const Shape& s = in.shape();
    const int64_t b = b_;
    if (s.rank() != 4 || s[1] % (b * b) != 0)
      return kernel_error(ctx, "input " + in.describe() +
                                   " must be [N,C,H,W] with C divisible by blocksize^2 = " + std::to_string(b * b));
    const int64_t n = s[0], c = s[1] / (b * b), h = s[2], w = s[3];
    Shape out_shape{n, c, 0, 0};
    SY_RETURN_IF_ERROR(times_blocksize(ctx, in, h, b, out_shape[2]));
    SY_RETURN_IF_ERROR(times_blocksize(ctx, in, w, b, out_shape[3]));
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in.dtype(), out_shape));
    if (out->num_elements() == 0) return ok_status();
    // Input element (n, channel, y, x); output (n, c', y * b + i, x * b + j)
    // takes channel (i * b + j) * C' + c' in DCR mode, (c' * b + i) * b + j in CRD.
    const int64_t hw = h * w;
    const int64_t stride_c = crd_ ? b * b * hw : hw;
    const int64_t stride_i = crd_ ? b * hw : b * c * hw;
    const int64_t stride_j = crd_ ? hw : c * hw;
    CopyPlan plan;
    plan.add(n, s[1] * hw);
    plan.add(c, stride_c);
    plan.add(h, w);
    plan.add(b, stride_i);
    plan.add(w, 1);
    plan.add(b, stride_j);
    return strided_copy(ctx, in.dtype(), out->raw_data(), in.raw_data(), plan);
  }

 private:
  int64_t b_ = 1;
  bool crd_ = false;
};

class SpaceToDepthKernel final : public Kernel {
 public:
  SpaceToDepthKernel(const KernelCreateContext& ctx, Status& status) { status = read_blocksize(ctx, b_); }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const Shape& s = in.shape();
    const int64_t b = b_;
    if (s.rank() != 4 || s[2] % b != 0 || s[3] % b != 0)
      return kernel_error(ctx, "input " + in.describe() + " must be [N,C,H,W] with H and W divisible by blocksize " +
                                   std::to_string(b));
    const int64_t n = s[0], c = s[1], h = s[2] / b, w = s[3] / b;
    Shape out_shape{n, 0, h, w};
    SY_RETURN_IF_ERROR(times_blocksize(ctx, in, c, b * b, out_shape[1]));
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in.dtype(), out_shape));
    if (out->num_elements() == 0) return ok_status();
    // Output channel (i * b + j) * C + c at (y, x) takes input (c, y * b + i, x * b + j).
    const int64_t row = s[3];
    CopyPlan plan;
    plan.add(n, c * s[2] * row);
    plan.add(b, row);
    plan.add(b, 1);
    plan.add(c, s[2] * row);
    plan.add(h, b * row);
    plan.add(w, b);
    return strided_copy(ctx, in.dtype(), out->raw_data(), in.raw_data(), plan);
  }

 private:
  int64_t b_ = 1;
};

const KernelDef kSpaceDepthKernels[] = {
    {"", "DepthToSpace", 1, kLatestVersion, 0, kElementTypes, &make_kernel<DepthToSpaceKernel>},
    {"", "SpaceToDepth", 1, kLatestVersion, 0, kElementTypes, &make_kernel<SpaceToDepthKernel>},
};

}  // namespace

std::span<const KernelDef> space_depth_kernels() { return kSpaceDepthKernels; }

}  // namespace sy::cpu
