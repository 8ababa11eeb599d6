// Ops that change only a tensor's shape (Reshape, Flatten, Squeeze,
// Unsqueeze, Identity) or read it (Shape, Size). The executor gives every
// output its own buffer, so the shape-only ops copy the bytes; any
// type, packed 4-bit ones included, is one memcpy.
#include <climits>
#include <string>
#include <vector>

#include "core/checked_math.h"
#include "providers/cpu/copy_util.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

// Allocates output 0 with `shape` and input 0's type and copies input 0's data into it.
Status copy_to_output(KernelContext& ctx, const Tensor& in, const Shape& shape) {
  SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, in.dtype(), shape));
  copy_tensor_data(in, *out, ctx.thread_pool());
  return ok_status();
}

std::string ints_to_string(const Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.num_elements(); ++i) s += (i ? "," : "") + std::to_string(int_element(t, i));
  return s + "]";
}

Status require_input(const KernelContext& ctx, size_t i, const char* name) {
  if (ctx.input(i) == nullptr)
    return kernel_error(ctx, std::string("input ") + std::to_string(i) + " (" + name + ") is missing");
  return ok_status();
}

// ---- Reshape ---------------------------------------------------------------

class ReshapeKernel final : public Kernel {
 public:
  ReshapeKernel(const KernelCreateContext& ctx, Status& status) {
    allowzero_ = ctx.opset() >= 14 && ctx.node().attr_int("allowzero", 0) != 0;
    const DataType shape_type = ctx.input_dtype(1);
    if (shape_type != DataType::kUndefined && shape_type != DataType::kInt64) {
      status = ctx.error("input 1 (shape) must be int64, got " + std::string(data_type_name(shape_type)));
      return;
    }
    if (const Tensor* shape = ctx.constant_input(1)) {
      int minus_ones = 0;
      bool zero = false;
      for (int64_t i = 0; i < shape->num_elements(); ++i) {
        const int64_t d = shape->data<int64_t>()[i];
        minus_ones += d == -1;
        zero = zero || d == 0;
        if (d < -1) status = ctx.error("shape " + ints_to_string(*shape) + " has a dimension below -1");
      }
      if (minus_ones > 1) status = ctx.error("shape " + ints_to_string(*shape) + " has more than one -1");
      if (allowzero_ && zero && minus_ones > 0)
        status = ctx.error("shape " + ints_to_string(*shape) + " has both 0 and -1, which allowzero=1 forbids");
    }
  }

  Status run(KernelContext& ctx) const override {
    SY_RETURN_IF_ERROR(require_input(ctx, 1, "shape"));
    const Tensor& in = *ctx.input(0);
    const Tensor& requested = *ctx.input(1);
    if (requested.dtype() != DataType::kInt64 || requested.shape().rank() != 1)
      return kernel_error(ctx, "input 1 (shape) must be a 1-D int64 tensor, got " + requested.describe());
    const int64_t* req = requested.data<int64_t>();
    const auto n = static_cast<size_t>(requested.num_elements());
    const Shape& in_shape = in.shape();
    Shape out;
    out.resize(n);
    int64_t infer_at = -1;
    int64_t known = 1;  // product of the non-zero dims given, then of all
    bool zero_dim = false;
    bool has_zero = false;
    for (size_t i = 0; i < n; ++i) {
      int64_t d = req[i];
      if (d == 0 && !allowzero_) {
        if (i >= in_shape.rank())
          return kernel_error(ctx, "shape " + ints_to_string(requested) + " has 0 at position " + std::to_string(i) +
                                       ", which copies an input dimension, but the input " + in.describe() +
                                       " has rank " + std::to_string(in_shape.rank()));
        d = in_shape[i];
      } else if (d == 0) {
        has_zero = true;
      }
      if (d == -1) {
        if (infer_at >= 0) return kernel_error(ctx, "shape " + ints_to_string(requested) + " has more than one -1");
        infer_at = static_cast<int64_t>(i);
        out[i] = 1;
        continue;
      }
      if (d < 0)
        return kernel_error(ctx,
                            "shape " + ints_to_string(requested) + " has an invalid dimension " + std::to_string(d));
      out[i] = d;
      if (d == 0) {
        zero_dim = true;
        continue;
      }
      // A product that wrapped could equal the input's count and pass.
      if (!checked_mul(known, d, known))
        return kernel_invalid_argument(ctx, "input 1 (shape) " + ints_to_string(requested) +
                                                " overflows: more than " + std::to_string(INT64_MAX) +
                                                " elements (input 0 is " + in.describe() + ")");
    }
    if (zero_dim) known = 0;
    const int64_t total = in.num_elements();
    if (infer_at >= 0) {
      if (has_zero)
        return kernel_error(ctx,
                            "shape " + ints_to_string(requested) + " has both 0 and -1, which allowzero=1 forbids");
      if (known == 0 || total % known != 0)
        return kernel_error(ctx, "cannot reshape " + in.describe() + " to " + ints_to_string(requested) +
                                     ": the -1 dimension cannot be inferred from " + std::to_string(total) +
                                     " elements");
      out[static_cast<size_t>(infer_at)] = total / known;
    } else if (known != total) {
      return kernel_error(ctx, "cannot reshape " + in.describe() + " (" + std::to_string(total) + " elements) to " +
                                   ints_to_string(requested) + " (" + std::to_string(known) + " elements)");
    }
    return copy_to_output(ctx, in, out);
  }

 private:
  bool allowzero_ = false;
};

// ---- Flatten ---------------------------------------------------------------

class FlattenKernel final : public Kernel {
 public:
  FlattenKernel(const KernelCreateContext& ctx, Status& status) {
    axis_ = ctx.node().attr_int("axis", 1);
    if (axis_ < 0 && ctx.opset() < 11)
      status = ctx.error("axis " + std::to_string(axis_) + " must be >= 0 before opset 11");
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = *ctx.input(0);
    const auto rank = static_cast<int64_t>(in.shape().rank());
    int64_t axis = axis_;
    if (axis < -rank || axis > rank)
      return kernel_error(ctx, "axis " + std::to_string(axis_) + " is out of range for input " + in.describe() +
                                   " (expected [" + std::to_string(-rank) + ", " + std::to_string(rank) + "])");
    if (axis < 0) axis += rank;
    const auto a = static_cast<size_t>(axis);
    return copy_to_output(ctx, in, Shape{in.shape().size_to(a), in.shape().size_from(a)});
  }

 private:
  int64_t axis_ = 1;
};

// ---- Squeeze / Unsqueeze ---------------------------------------------------

// The axes of Squeeze/Unsqueeze: an attribute before opset 13, input 1 from it.
class AxesSource {
 public:
  explicit AxesSource(const KernelCreateContext& ctx) : from_input_(ctx.opset() >= 13) {
    if (!from_input_) attr_ = ctx.node().attr_ints("axes");
    has_attr_ = !from_input_ && ctx.node().has_attr("axes");
  }
  bool present(const KernelContext& ctx) const { return from_input_ ? ctx.input(1) != nullptr : has_attr_; }
  int64_t size(const KernelContext& ctx) const {
    return from_input_ ? ctx.input(1)->num_elements() : static_cast<int64_t>(attr_.size());
  }
  int64_t at(const KernelContext& ctx, int64_t i) const {
    return from_input_ ? int_element(*ctx.input(1), i) : attr_[static_cast<size_t>(i)];
  }
  Status check(const KernelContext& ctx) const {
    if (from_input_ && ctx.input(1) != nullptr && ctx.input(1)->dtype() != DataType::kInt64)
      return kernel_error(ctx, "input 1 (axes) must be int64, got " + ctx.input(1)->describe());
    return ok_status();
  }

 private:
  bool from_input_ = false;
  bool has_attr_ = false;
  std::vector<int64_t> attr_;
};

constexpr int64_t kMaxAxesRank = 64;  // a bitmask of axes fits a uint64_t

class SqueezeKernel final : public Kernel {
 public:
  SqueezeKernel(const KernelCreateContext& ctx, Status&) : axes_(ctx) {}

  Status run(KernelContext& ctx) const override {
    SY_RETURN_IF_ERROR(axes_.check(ctx));
    const Tensor& in = *ctx.input(0);
    const Shape& s = in.shape();
    const auto rank = static_cast<int64_t>(s.rank());
    Shape out;
    if (!axes_.present(ctx)) {
      for (int64_t d : s)
        if (d != 1) out.push_back(d);
      return copy_to_output(ctx, in, out);
    }
    if (rank > kMaxAxesRank) return kernel_error(ctx, "input rank " + std::to_string(rank) + " is too large");
    uint64_t squeezed = 0;
    for (int64_t i = 0; i < axes_.size(ctx); ++i) {
      int64_t axis = axes_.at(ctx, i);
      if (!normalize_axis(axis, rank))
        return kernel_error(ctx, "axis " + std::to_string(axes_.at(ctx, i)) + " is out of range for input " +
                                     in.describe() + " (expected [" + std::to_string(-rank) + ", " +
                                     std::to_string(rank - 1) + "])");
      if (s[static_cast<size_t>(axis)] != 1)
        return kernel_error(ctx, "cannot squeeze axis " + std::to_string(axes_.at(ctx, i)) + " of input " +
                                     in.describe() + ": its size is " + std::to_string(s[static_cast<size_t>(axis)]) +
                                     ", expected 1");
      squeezed |= uint64_t{1} << axis;
    }
    for (int64_t i = 0; i < rank; ++i)
      if ((squeezed & (uint64_t{1} << i)) == 0) out.push_back(s[static_cast<size_t>(i)]);
    return copy_to_output(ctx, in, out);
  }

 private:
  AxesSource axes_;
};

class UnsqueezeKernel final : public Kernel {
 public:
  UnsqueezeKernel(const KernelCreateContext& ctx, Status& status) : axes_(ctx) {
    if (ctx.opset() < 13 && !ctx.node().has_attr("axes")) status = ctx.error("attribute 'axes' is required");
    if (ctx.opset() >= 13 && !ctx.node().has_input(1)) status = ctx.error("input 1 (axes) is required");
  }

  Status run(KernelContext& ctx) const override {
    SY_RETURN_IF_ERROR(axes_.check(ctx));
    SY_RETURN_IF_ERROR(axes_.present(ctx) ? ok_status() : kernel_error(ctx, "the axes are missing"));
    const Tensor& in = *ctx.input(0);
    const Shape& s = in.shape();
    const int64_t n = axes_.size(ctx);
    const int64_t out_rank = static_cast<int64_t>(s.rank()) + n;
    if (out_rank > kMaxAxesRank) return kernel_error(ctx, "output rank " + std::to_string(out_rank) + " is too large");
    uint64_t inserted = 0;
    for (int64_t i = 0; i < n; ++i) {
      int64_t axis = axes_.at(ctx, i);
      if (!normalize_axis(axis, out_rank))
        return kernel_error(ctx, "axis " + std::to_string(axes_.at(ctx, i)) + " is out of range for output rank " +
                                     std::to_string(out_rank) + " (expected [" + std::to_string(-out_rank) + ", " +
                                     std::to_string(out_rank - 1) + "])");
      if (inserted & (uint64_t{1} << axis))
        return kernel_error(ctx, "axis " + std::to_string(axes_.at(ctx, i)) + " is repeated");
      inserted |= uint64_t{1} << axis;
    }
    Shape out;
    out.resize(static_cast<size_t>(out_rank));
    size_t next = 0;
    for (int64_t i = 0; i < out_rank; ++i)
      out[static_cast<size_t>(i)] = (inserted & (uint64_t{1} << i)) ? 1 : s[next++];
    return copy_to_output(ctx, in, out);
  }

 private:
  AxesSource axes_;
};

// ---- Shape / Size / Identity -----------------------------------------------

class ShapeKernel final : public Kernel {
 public:
  ShapeKernel(const KernelCreateContext& ctx, Status&) {
    if (ctx.opset() >= 15) {
      start_ = ctx.node().attr_int("start", 0);
      end_ = ctx.node().attr_int("end", kNoEnd);
    }
  }

  Status run(KernelContext& ctx) const override {
    const Shape& s = ctx.input(0)->shape();
    const auto rank = static_cast<int64_t>(s.rank());
    // Out-of-range start/end are clamped, as the spec says.
    auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
    const int64_t start = clamp(start_);
    const int64_t end = end_ == kNoEnd ? rank : clamp(end_);
    const int64_t n = std::max<int64_t>(0, end - start);
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataType::kInt64, Shape{n}));
    for (int64_t i = 0; i < n; ++i) out->data<int64_t>()[i] = s[static_cast<size_t>(start + i)];
    return ok_status();
  }

 private:
  static constexpr int64_t kNoEnd = INT64_MAX;
  int64_t start_ = 0;
  int64_t end_ = kNoEnd;
};

class SizeKernel final : public Kernel {
 public:
  SizeKernel(const KernelCreateContext&, Status&) {}
  Status run(KernelContext& ctx) const override {
    SY_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(0, DataType::kInt64, Shape{}));
    out->data<int64_t>()[0] = ctx.input(0)->num_elements();
    return ok_status();
  }
};

class IdentityKernel final : public Kernel {
 public:
  IdentityKernel(const KernelCreateContext&, Status&) {}
  Status run(KernelContext& ctx) const override {
    const Tensor* in = ctx.input(0);
    if (in == nullptr || !in->defined()) return kernel_error(ctx, "input 0 is missing");
    return output_value(ctx, 0, *in);
  }
};

const KernelDef kShapeKernels[] = {
    {"", "Reshape", 5, kLatestVersion, 0, kAllTensorTypes, &make_kernel<ReshapeKernel>},
    {"", "Flatten", 1, kLatestVersion, 0, kAllTensorTypes, &make_kernel<FlattenKernel>},
    {"", "Squeeze", 1, kLatestVersion, 0, kAllTensorTypes, &make_kernel<SqueezeKernel>},
    {"", "Unsqueeze", 1, kLatestVersion, 0, kAllTensorTypes, &make_kernel<UnsqueezeKernel>},
    {"", "Shape", 1, kLatestVersion, 0, kAllTensorTypes, &make_kernel<ShapeKernel>},
    {"", "Size", 1, kLatestVersion, 0, kAllTensorTypes, &make_kernel<SizeKernel>},
    {"", "Identity", 1, kLatestVersion, 0, kAllTensorTypes, &make_kernel<IdentityKernel>, /*accepts_containers=*/true},
};

}  // namespace

std::span<const KernelDef> shape_kernels() { return kShapeKernels; }

}  // namespace sy::cpu
