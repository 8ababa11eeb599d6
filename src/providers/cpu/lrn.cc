// LRN (local response normalization, AlexNet's): each value is divided by
// (bias + alpha / size * the sum of squares over a window of neighbouring
// channels)^beta. The window of channel c is
// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)], cut at the ends.
//
// Work runs per (n, c) plane in blocks of up to kBlock spatial positions:
// the window's channel planes are summed one contiguous piece at a time
// into accumulators on the stack.
#include <algorithm>
#include <cmath>
#include <string>

#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

constexpr int64_t kBlock = 256;

struct LrnParams {
  float alpha = 1e-4f;
  float beta = 0.75f;
  float bias = 1.0f;
  int64_t size = 1;
};

template <typename T>
void lrn_planes(const T* x, T* y, int64_t batch, int64_t channels, int64_t spatial, const LrnParams& p,
                ThreadPool& pool) {
  using C = compute_t<T>;
  const int64_t before = (p.size - 1) / 2;
  const int64_t after = p.size / 2;  // ceil((size - 1) / 2)
  const auto scale = static_cast<C>(p.alpha) / static_cast<C>(p.size);
  const auto bias = static_cast<C>(p.bias);
  const auto beta = static_cast<C>(p.beta);
  const int64_t blocks = (spatial + kBlock - 1) / kBlock;
  const int64_t work = std::min(p.size, channels) * kBlock;
  parallel_range(pool, batch * channels * blocks, std::max<int64_t>(1, kMathChunk / work), [&](int64_t b, int64_t e) {
    C acc[kBlock];
    for (int64_t task = b; task < e; ++task) {
      const int64_t plane = task / blocks;
      const int64_t n = plane / channels;
      const int64_t c = plane % channels;
      const int64_t s0 = (task % blocks) * kBlock;
      const int64_t width = std::min(kBlock, spatial - s0);
      std::fill(acc, acc + width, C{0});
      const int64_t lo = std::max<int64_t>(0, c - before);
      const int64_t hi = std::min(channels - 1, c + after);
      for (int64_t i = lo; i <= hi; ++i) {
        const T* xi = x + (n * channels + i) * spatial + s0;
        for (int64_t s = 0; s < width; ++s) {
          const C v = load(xi[s]);
          acc[s] += v * v;
        }
      }
      const T* xc = x + plane * spatial + s0;
      T* yc = y + plane * spatial + s0;
      for (int64_t s = 0; s < width; ++s) yc[s] = store<T>(load(xc[s]) / std::pow(bias + scale * acc[s], beta));
    }
  });
}

class LrnKernel final : public Kernel {
 public:
  LrnKernel(const KernelCreateContext& ctx, Status& status) {
    const Node& node = ctx.node();
    p_.alpha = node.attr_float("alpha", 1e-4f);
    p_.beta = node.attr_float("beta", 0.75f);
    p_.bias = node.attr_float("bias", 1.0f);
    p_.size = node.attr_int("size", 0);
    if (!node.has_attr("size")) {
      status = ctx.error("attribute size is required");
    } else if (p_.size <= 0) {
      status = ctx.error("attribute size must be positive, got " + std::to_string(p_.size));
    }
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = *ctx.input(0);
    const Shape& shape = x.shape();
    if (shape.rank() < 2) return kernel_error(ctx, "X must have rank 2 or more (N, C, ...), got " + shape.to_string());
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), shape));
    if (x.num_elements() == 0) return ok_status();
    const bool handled = visit_type(FloatTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      lrn_planes<T>(x.data<T>(), y->data<T>(), shape[0], shape[1], shape.size_from(2), p_, ctx.thread_pool());
    });
    if (!handled) return kernel_error(ctx, "unsupported type " + describe_input(ctx, 0, "X"));
    return ok_status();
  }

 private:
  LrnParams p_;
};

constexpr uint64_t kFloatMask = type_mask(FloatTypes{});

// Version 13 adds bfloat16.
constexpr KernelDef kLrnKernels[] = {
    {"", "LRN", 1, 12, 0, kFloatMask & ~type_bit(DataType::kBfloat16), &make_kernel<LrnKernel>},
    {"", "LRN", 13, kLatestVersion, 0, kFloatMask, &make_kernel<LrnKernel>},
};

}  // namespace

std::span<const KernelDef> lrn_kernels() { return kLrnKernels; }

}  // namespace sy::cpu
