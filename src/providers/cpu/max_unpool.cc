// MaxUnpool: the output is zero except where indices point: element e of X
// goes to flat position indices[e] of the unpooled tensor, whose spatial
// dims are (in - 1) * stride - pad_begin - pad_end + kernel. Indices are
// flat over the whole tensor (batch and channel included), as MaxPool's
// Indices output is.
//
// With output_shape, ONNX's reference (and the spec's example, which the
// node test checks) lays that unpooled tensor into the top-left corner of
// a zero tensor of output_shape: an index keeps its coordinates in the
// unpooled shape, not its flat position in the larger one. Hence every
// output dim must be at least the unpooled one. Writes go in X's order, so
// of duplicate indices the last wins.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/checked_math.h"
#include "providers/cpu/conv/conv_util.h"
#include "providers/cpu/copy_util.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

class MaxUnpoolKernel final : public Kernel {
 public:
  MaxUnpoolKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    kernel_ = node.attr_ints("kernel_shape");
    strides_ = node.attr_ints("strides");
    pads_ = node.attr_ints("pads");
    const size_t r = kernel_.size();
    if (r == 0 || r > static_cast<size_t>(kMaxSpatialDims)) {
      status = ctx.error("kernel_shape must have 1 to " + std::to_string(kMaxSpatialDims) + " values, got " +
                         std::to_string(r));
      return;
    }
    if (strides_.empty()) strides_.assign(r, 1);
    if (pads_.empty()) pads_.assign(2 * r, 0);
    if (strides_.size() != r || pads_.size() != 2 * r) {
      status = ctx.error("strides must have " + std::to_string(r) + " values and pads " + std::to_string(2 * r) +
                         " (one per spatial dim of kernel_shape)");
      return;
    }
    for (size_t d = 0; d < r; ++d) {
      if (kernel_[d] < 1 || strides_[d] < 1 || pads_[d] < 0 || pads_[d + r] < 0) {
        status = ctx.error("kernel_shape and strides must be 1 or more and pads 0 or more");
        return;
      }
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* indices = ctx.input(1);
    const Tensor* output_shape = ctx.input(2);
    if (x == nullptr || indices == nullptr) return kernel_error(ctx, "inputs X and I are required");
    const Shape& xs = x->shape();
    const size_t r = kernel_.size();
    if (xs.rank() != r + 2)
      return kernel_error(ctx, describe_input(ctx, 0, "X") + " must have rank " + std::to_string(r + 2) +
                                   " for kernel_shape of " + std::to_string(r) + " dims");
    if (indices->dtype() != DataType::kInt64 || indices->shape() != xs)
      return kernel_error(ctx, describe_input(ctx, 1, "I") + " must be int64 with X's shape " + xs.to_string());
    Shape unpooled;
    unpooled.push_back(xs[0]);
    unpooled.push_back(xs[1]);
    for (size_t d = 0; d < r; ++d) {
      int64_t v = 0, pad = 0;
      if (!checked_add(pads_[d], pads_[d + r], pad) || !checked_mul(xs[d + 2] - 1, strides_[d], v) ||
          !checked_add(v, kernel_[d], v) || !checked_sub(v, pad, v) || v < 0)
        return kernel_invalid_argument(ctx, "the unpooled size of spatial dim " + std::to_string(d) + " of X " +
                                                xs.to_string() + " is out of range");
      unpooled.push_back(v);
    }
    int64_t unpooled_count = 0;
    SY_RETURN_IF_ERROR(checked_element_count(unpooled.dims(), unpooled_count));
    Shape out_shape = unpooled;
    const bool reshaped = output_shape != nullptr;
    if (reshaped) {
      if (output_shape->dtype() != DataType::kInt64 || output_shape->num_elements() != static_cast<int64_t>(r + 2))
        return kernel_error(
            ctx, describe_input(ctx, 2, "output_shape") + " must be int64 with " + std::to_string(r + 2) + " values");
      const int64_t* given = output_shape->data<int64_t>();
      for (size_t d = 0; d < r + 2; ++d) {
        if (given[d] < unpooled[d])
          return kernel_error(ctx, describe_input(ctx, 2, "output_shape") + " must be at least the unpooled shape " +
                                       unpooled.to_string() + " in every dim");
        out_shape[d] = given[d];
      }
    }
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, x->dtype(), out_shape));
    const int64_t* idx = indices->data<int64_t>();
    const int64_t n = x->num_elements();
    for (int64_t e = 0; e < n; ++e)
      if (idx[e] < 0 || idx[e] >= unpooled_count)
        return kernel_error(ctx, "I[" + std::to_string(e) + "] = " + std::to_string(idx[e]) +
                                     " is out of range for the unpooled shape " + unpooled.to_string());
    return dispatch_by_element(x->dtype(), [&]<typename T>() {
      const T* src = x->data<T>();
      T* dst = out->data<T>();
      fill_elements(dst, T{}, out->num_elements());
      for (int64_t e = 0; e < n; ++e) dst[reshaped ? relocate(idx[e], unpooled, out_shape) : idx[e]] = src[e];
      return ok_status();
    });
  }

 private:
  // Flat position `i` of the unpooled shape, at the same coordinates in
  // the (no smaller) output shape.
  static int64_t relocate(int64_t i, const Shape& from, const Shape& to) {
    int64_t at = 0;
    int64_t scale = 1;
    for (size_t d = from.rank(); d-- > 0;) {
      at += (i % from[d]) * scale;
      i /= from[d];
      scale *= to[d];
    }
    return at;
  }

  std::vector<int64_t> kernel_, strides_, pads_;
};

constexpr uint64_t kFloatMask = type_bit(DataType::kFloat) | type_bit(DataType::kDouble) |
                                type_bit(DataType::kFloat16) | type_bit(DataType::kBfloat16);

const KernelDef kMaxUnpoolKernels[] = {
    {"", "MaxUnpool", 9, kLatestVersion, 0, kFloatMask, &make_kernel<MaxUnpoolKernel>},
};

}  // namespace

std::span<const KernelDef> max_unpool_kernels() { return kMaxUnpoolKernels; }

}  // namespace sy::cpu
