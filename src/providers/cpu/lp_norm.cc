// LpNormalization: x divided by its L1 or L2 norm along one axis; where the
// norm is zero (every value along the axis is zero) the output is zero.
//
// X is seen as [outer, len, inner] around the axis. With inner 1 (the last
// axis) each norm is over one contiguous row. Otherwise a block of up to
// kBlock adjacent norms is summed at once, one contiguous piece of each of
// the len slices at a time, into accumulators on the stack.
#include <algorithm>
#include <cmath>
#include <string>

#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

constexpr int64_t kBlock = 256;

template <typename W>
W lp_term(W v, bool l1) {
  return l1 ? std::fabs(v) : v * v;
}

template <typename W>
W lp_root(W sum, bool l1) {
  return l1 ? sum : std::sqrt(sum);
}

template <typename T>
void lp_normalize(const T* x, T* y, int64_t outer, int64_t len, int64_t inner, bool l1, ThreadPool& pool) {
  using C = compute_t<T>;
  if (inner == 1) {
    parallel_range(pool, outer, std::max<int64_t>(1, kCheapChunk / len), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* xr = x + r * len;
        T* yr = y + r * len;
        const C norm = lp_root(row_sum(xr, len, [l1](C v) { return lp_term(v, l1); }), l1);
        for (int64_t i = 0; i < len; ++i) yr[i] = store<T>(norm == C{0} ? C{0} : load(xr[i]) / norm);
      }
    });
    return;
  }
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  parallel_range(pool, outer * blocks, std::max<int64_t>(1, kCheapChunk / (len * kBlock)), [&](int64_t b, int64_t e) {
    C norm[kBlock];
    for (int64_t task = b; task < e; ++task) {
      const int64_t o = task / blocks;
      const int64_t i0 = (task % blocks) * kBlock;
      const int64_t width = std::min(kBlock, inner - i0);
      const T* xo = x + o * len * inner + i0;
      T* yo = y + o * len * inner + i0;
      std::fill(norm, norm + width, C{0});
      for (int64_t k = 0; k < len; ++k)
        for (int64_t i = 0; i < width; ++i) norm[i] += lp_term(load(xo[k * inner + i]), l1);
      for (int64_t i = 0; i < width; ++i) norm[i] = lp_root(norm[i], l1);
      for (int64_t k = 0; k < len; ++k)
        for (int64_t i = 0; i < width; ++i)
          yo[k * inner + i] = store<T>(norm[i] == C{0} ? C{0} : load(xo[k * inner + i]) / norm[i]);
    }
  });
}

class LpNormKernel final : public Kernel {
 public:
  LpNormKernel(const KernelCreateContext& ctx, Status& status) {
    axis_ = ctx.node().attr_int("axis", -1);
    const int64_t p = ctx.node().attr_int("p", 2);
    if (p != 1 && p != 2) status = ctx.error("attribute p must be 1 or 2, got " + std::to_string(p));
    l1_ = p == 1;
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Shape& shape = x.shape();
    int64_t axis = axis_;
    if (shape.rank() == 0 || !normalize_axis(axis, static_cast<int64_t>(shape.rank())))
      return kernel_error(ctx, "axis " + std::to_string(axis_) + " is out of range for input " + shape.to_string());
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), shape));
    if (x.num_elements() == 0) return ok_status();
    const auto ax = static_cast<size_t>(axis);
    const bool handled = visit_type(FloatTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      lp_normalize<T>(x.data<T>(), y->data<T>(), shape.size_to(ax), shape[ax], shape.size_from(ax + 1), l1_,
                      ctx.thread_pool());
    });
    if (!handled) return kernel_error(ctx, "unsupported type " + describe_input(ctx, 0, "input"));
    return ok_status();
  }

 private:
  int64_t axis_ = -1;
  bool l1_ = false;
};

constexpr uint64_t kFloatMask = type_mask(FloatTypes{});

// Version 22 adds bfloat16.
constexpr KernelDef kLpNormKernels[] = {
    {"", "LpNormalization", 1, 21, 0, kFloatMask & ~type_bit(DataType::kBfloat16), &make_kernel<LpNormKernel>},
    {"", "LpNormalization", 22, kLatestVersion, 0, kFloatMask, &make_kernel<LpNormKernel>},
};

}  // namespace

std::span<const KernelDef> lp_norm_kernels() { return kLpNormKernels; }

}  // namespace sy::cpu
