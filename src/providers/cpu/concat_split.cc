// Concat and Split. Both see their tensors as [outer, axis * inner] rows:
// an output row of Concat is the inputs' rows side by side, and Split cuts
// an input row into pieces (row_pieces.h, shared with the sequence ops).
#include <climits>
#include <string>
#include <vector>

#include "core/checked_math.h"
#include "providers/cpu/copy_util.h"
#include "providers/cpu/row_pieces.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

std::string dims_string(const Shape& s) { return s.to_string(); }

// ---- Concat -----------------------------------------------------------------

class ConcatKernel final : public Kernel {
 public:
  ConcatKernel(const KernelCreateContext& ctx, Status& status) {
    if (!ctx.node().has_attr("axis")) {
      status = ctx.error("attribute 'axis' is required");
      return;
    }
    axis_ = ctx.node().attr_int("axis", 0);
    if (axis_ < 0 && ctx.opset() < 11)
      status = ctx.error("axis " + std::to_string(axis_) + " must be >= 0 before opset 11");
  }

  Status run(KernelContext& ctx) const override {
    const auto n = static_cast<int64_t>(ctx.num_inputs());
    const Tensor* first = ctx.input(0);
    if (first == nullptr) return kernel_error(ctx, "input 0 is missing");
    const Shape& s0 = first->shape();
    const auto rank = static_cast<int64_t>(s0.rank());
    int64_t axis = axis_;
    if (!normalize_axis(axis, rank))
      return kernel_error(ctx, "axis " + std::to_string(axis_) + " is out of range for input " + first->describe());
    const auto a = static_cast<size_t>(axis);
    int64_t axis_total = 0;
    for (int64_t j = 0; j < n; ++j) {
      const Tensor* t = ctx.input(static_cast<size_t>(j));
      if (t == nullptr) return kernel_error(ctx, "input " + std::to_string(j) + " is missing");
      bool same = t->dtype() == first->dtype() && t->shape().rank() == s0.rank();
      for (size_t k = 0; same && k < s0.rank(); ++k) same = k == a || t->shape()[k] == s0[k];
      if (!same)
        return kernel_error(ctx, "input " + std::to_string(j) + " is " + t->describe() + ", expected " +
                                     std::string(data_type_name(first->dtype())) + " with the dims of input 0 " +
                                     dims_string(s0) + " except on axis " + std::to_string(axis));
      // Empty inputs may have any dims, so the sum can overflow.
      if (!checked_add(axis_total, t->shape()[a], axis_total))
        return kernel_invalid_argument(ctx, "the inputs' dims on axis " + std::to_string(axis) +
                                                " add up to more than " + std::to_string(INT64_MAX) + " (input " +
                                                std::to_string(j) + " is " + t->describe() + ")");
    }
    Shape out_shape = s0;
    out_shape[a] = axis_total;
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, first->dtype(), out_shape));
    SY_ASSIGN_OR_RETURN(Pieces pieces, make_pieces(ctx, n));
    for (int64_t j = 0; j < n; ++j) {
      const Tensor* t = ctx.input(static_cast<size_t>(j));
      pieces.width[j] = t->shape().size_from(a);
      pieces.data[j] = const_cast<void*>(t->raw_data());
    }
    const int64_t outer = s0.size_to(a);
    return dispatch_by_element(first->dtype(), [&]<typename T>() {
      copy_rows<T, false>(out->data<T>(), pieces, outer, ctx.thread_pool());
      return ok_status();
    });
  }

 private:
  int64_t axis_ = 0;
};

// ---- Split ------------------------------------------------------------------

class SplitKernel final : public Kernel {
 public:
  SplitKernel(const KernelCreateContext& ctx, Status& status) : opset_(ctx.opset()) {
    axis_ = ctx.node().attr_int("axis", 0);
    if (axis_ < 0 && opset_ < 11) status = ctx.error("axis " + std::to_string(axis_) + " must be >= 0 before opset 11");
    if (opset_ < 13) {
      has_split_attr_ = ctx.node().has_attr("split");
      split_attr_ = ctx.node().attr_ints("split");
    }
    if (opset_ >= 18 && ctx.node().has_attr("num_outputs")) {
      num_outputs_ = ctx.node().attr_int("num_outputs", 0);
      if (num_outputs_ != static_cast<int64_t>(ctx.node().outputs.size()))
        status = ctx.error("num_outputs is " + std::to_string(num_outputs_) + " but the node has " +
                           std::to_string(ctx.node().outputs.size()) + " outputs");
      if (ctx.node().has_input(1)) status = ctx.error("'split' and 'num_outputs' cannot both be given");
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const Shape& s = in.shape();
    int64_t axis = axis_;
    if (!normalize_axis(axis, static_cast<int64_t>(s.rank())))
      return kernel_error(ctx, "axis " + std::to_string(axis_) + " is out of range for input " + in.describe());
    const auto a = static_cast<size_t>(axis);
    const int64_t dim = s[a];
    const auto n = static_cast<int64_t>(ctx.num_outputs());
    if (n == 0) return ok_status();
    const int64_t inner = s.size_from(a + 1);
    SY_ASSIGN_OR_RETURN(Pieces pieces, make_pieces(ctx, n));

    // The size of each piece along the axis, kept in pieces.width for now.
    const Tensor* split_input = opset_ >= 13 ? ctx.input(1) : nullptr;
    const bool explicit_split = split_input != nullptr || has_split_attr_;
    if (explicit_split) {
      const int64_t count = split_input ? split_input->num_elements() : static_cast<int64_t>(split_attr_.size());
      if (split_input && split_input->dtype() != DataType::kInt64)
        return kernel_error(ctx, "input 1 (split) must be int64, got " + split_input->describe());
      if (count != n)
        return kernel_error(
            ctx, "split has " + std::to_string(count) + " entries but the node has " + std::to_string(n) + " outputs");
      int64_t sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t v = split_input ? split_input->data<int64_t>()[j] : split_attr_[static_cast<size_t>(j)];
        if (v < 0)
          return kernel_error(ctx, "split entry " + std::to_string(j) + " is negative (" + std::to_string(v) + ")");
        pieces.width[j] = v;
        if (!checked_add(sum, v, sum))
          return kernel_invalid_argument(ctx, "split sizes add up to more than " + std::to_string(INT64_MAX) +
                                                  " (entry " + std::to_string(j) + " is " + std::to_string(v) + ")");
      }
      if (sum != dim)
        return kernel_error(ctx, "split sizes sum to " + std::to_string(sum) + " but axis " + std::to_string(axis) +
                                     " of input " + in.describe() + " has size " + std::to_string(dim));
    } else if (opset_ >= 18) {
      // Equal pieces of ceil(dim / n); the last one takes what is left.
      const int64_t chunk = (dim + n - 1) / n;
      for (int64_t j = 0; j < n; ++j) pieces.width[j] = std::clamp(dim - j * chunk, int64_t{0}, chunk);
    } else {
      if (dim % n != 0)
        return kernel_error(ctx, "axis " + std::to_string(axis) + " of input " + in.describe() + " (size " +
                                     std::to_string(dim) + ") cannot be split into " + std::to_string(n) +
                                     " equal parts");
      for (int64_t j = 0; j < n; ++j) pieces.width[j] = dim / n;
    }

    Shape out_shape = s;
    for (int64_t j = 0; j < n; ++j) {
      out_shape[a] = pieces.width[j];
      SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(static_cast<size_t>(j), in.dtype(), out_shape));
      pieces.data[j] = ctx.output_requested(static_cast<size_t>(j)) ? out->raw_data() : nullptr;
      pieces.width[j] *= inner;
    }
    const int64_t outer = s.size_to(a);
    return dispatch_by_element(in.dtype(), [&]<typename T>() {
      copy_rows<T, true>(const_cast<T*>(in.data<T>()), pieces, outer, ctx.thread_pool());
      return ok_status();
    });
  }

 private:
  int opset_ = 0;
  int64_t axis_ = 0;
  bool has_split_attr_ = false;
  std::vector<int64_t> split_attr_;
  int64_t num_outputs_ = 0;
};

const KernelDef kConcatSplitKernels[] = {
    {"", "Concat", 4, kLatestVersion, 0, kElementTypes, &make_kernel<ConcatKernel>},
    {"", "Split", 2, kLatestVersion, 0, kElementTypes, &make_kernel<SplitKernel>},
};

}  // namespace

std::span<const KernelDef> concat_split_kernels() { return kConcatSplitKernels; }

}  // namespace sy::cpu
