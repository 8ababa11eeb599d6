// Slice: a strided view of the input, copied out with strided_copy, which
// merges runs that stay contiguous so step-1 slices become memcpy calls.
#include <string>
#include <vector>

#include "core/checked_math.h"
#include "providers/cpu/copy_util.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

class SliceKernel final : public Kernel {
 public:
  SliceKernel(const KernelCreateContext& ctx, Status& status) : from_inputs_(ctx.opset() >= 10) {
    if (!from_inputs_) {
      const Node& node = ctx.node();
      if (!node.has_attr("starts") || !node.has_attr("ends")) {
        status = ctx.error("attributes 'starts' and 'ends' are required");
        return;
      }
      starts_ = node.attr_ints("starts");
      ends_ = node.attr_ints("ends");
      has_axes_ = node.has_attr("axes");
      axes_ = node.attr_ints("axes");
      if (starts_.size() != ends_.size() || (has_axes_ && axes_.size() != starts_.size()))
        status = ctx.error("starts, ends and axes must have the same length (got " + std::to_string(starts_.size()) +
                           ", " + std::to_string(ends_.size()) + ", " + std::to_string(axes_.size()) + ")");
      return;
    }
    static const char* const kNames[] = {"data", "starts", "ends", "axes", "steps"};
    for (size_t i = 1; i < 5; ++i) {
      const DataType t = ctx.input_dtype(i);
      if (t != DataType::kUndefined && t != DataType::kInt32 && t != DataType::kInt64)
        status = ctx.error("input " + std::to_string(i) + " (" + kNames[i] + ") must be int32 or int64, got " +
                           std::string(data_type_name(t)));
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const Shape& s = in.shape();
    const auto rank = static_cast<int64_t>(s.rank());

    // The spec's parameters, from attributes (opset 1) or inputs (10+).
    const Tensor* starts = from_inputs_ ? ctx.input(1) : nullptr;
    const Tensor* ends = from_inputs_ ? ctx.input(2) : nullptr;
    const Tensor* axes = from_inputs_ ? ctx.input(3) : nullptr;
    const Tensor* steps = from_inputs_ ? ctx.input(4) : nullptr;
    int64_t n = static_cast<int64_t>(starts_.size());
    if (from_inputs_) {
      if (starts == nullptr || ends == nullptr) return kernel_error(ctx, "inputs 1 (starts) and 2 (ends) are required");
      n = starts->num_elements();
      const bool ok = ends->num_elements() == n && (axes == nullptr || axes->num_elements() == n) &&
                      (steps == nullptr || steps->num_elements() == n);
      if (!ok)
        return kernel_error(ctx, "starts " + starts->describe() + ", ends " + ends->describe() +
                                     (axes ? ", axes " + axes->describe() : "") +
                                     (steps ? ", steps " + steps->describe() : "") + " must have the same length");
    }
    const bool has_axes = from_inputs_ ? axes != nullptr : has_axes_;
    if (n > rank)
      return kernel_error(
          ctx, std::to_string(n) + " axes to slice, but input " + in.describe() + " has rank " + std::to_string(rank));

    Shape first;  // first element per axis
    Shape step;
    Shape count;  // output dims
    first.resize(s.rank());
    step.resize(s.rank());
    count = s;
    for (size_t k = 0; k < s.rank(); ++k) first[k] = 0;
    uint64_t seen = 0;
    for (int64_t i = 0; i < n; ++i) {
      int64_t axis = has_axes ? (from_inputs_ ? int_element(*axes, i) : axes_[static_cast<size_t>(i)]) : i;
      const int64_t given_axis = axis;
      if (!normalize_axis(axis, rank))
        return kernel_error(ctx, "axis " + std::to_string(given_axis) + " is out of range for input " + in.describe() +
                                     " (expected [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "])");
      if (axis < 64) {
        if (seen & (uint64_t{1} << axis))
          return kernel_error(ctx, "axis " + std::to_string(given_axis) + " is repeated");
        seen |= uint64_t{1} << axis;
      }
      const int64_t start = from_inputs_ ? int_element(*starts, i) : starts_[static_cast<size_t>(i)];
      const int64_t end = from_inputs_ ? int_element(*ends, i) : ends_[static_cast<size_t>(i)];
      const int64_t st = steps ? int_element(*steps, i) : 1;
      if (st == 0) return kernel_error(ctx, "step " + std::to_string(i) + " is 0");
      const auto a = static_cast<size_t>(axis);
      int64_t b = 0;
      const int64_t c = slice_axis(s[a], start, end, st, b);
      first[a] = b;
      // A step that takes at most one element never moves: 1 keeps the
      // stride product below (a step of INT64_MAX times a stride overflows).
      step[a] = c > 1 ? st : 1;
      count[a] = c;
    }

    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in.dtype(), count));
    if (out->num_elements() == 0) return ok_status();
    CopyPlan plan;
    int64_t offset = 0;
    int64_t stride = 1;
    // Strides are built inner to outer, the plan outer to inner.
    Shape src_strides;
    src_strides.resize(s.rank());
    for (size_t k = s.rank(); k-- > 0;) {
      offset += first[k] * stride;
      src_strides[k] = stride * step[k];
      stride *= s[k];
    }
    for (size_t k = 0; k < s.rank(); ++k) plan.add(count[k], src_strides[k]);
    const size_t esize = in.dtype() == DataType::kString ? sizeof(std::string) : element_size(in.dtype());
    const void* src = static_cast<const char*>(in.raw_data()) + offset * static_cast<int64_t>(esize);
    return strided_copy(ctx, in.dtype(), out->raw_data(), src, plan);
  }

 private:
  bool from_inputs_ = false;
  bool has_axes_ = false;
  std::vector<int64_t> starts_;
  std::vector<int64_t> ends_;
  std::vector<int64_t> axes_;
};

const KernelDef kSliceKernels[] = {
    {"", "Slice", 1, kLatestVersion, 0, kElementTypes, &make_kernel<SliceKernel>},
};

}  // namespace

std::span<const KernelDef> slice_kernels() { return kSliceKernels; }

}  // namespace sy::cpu
