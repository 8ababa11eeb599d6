// GroupNormalization: the channels of each sample are split into
// num_groups groups of adjacent channels, and each group is normalised by
// its own mean and variance: y = (x - mean) / sqrt(var + epsilon) * scale +
// bias. Scale and bias have one value per channel from version 21, one
// per group in version 18.
//
// A group's channel planes are one contiguous run of X, so each (sample,
// group) is a row: mean first, then the variance around it (two passes, no
// cancellation), then per channel y = x * a + o with a and o folded from
// the statistics, scale and bias. Rows run in parallel.
#include <algorithm>
#include <cmath>
#include <string>

#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/norm_attributes.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

struct GroupGeometry {
  int64_t batch = 0, channels = 0, groups = 0, spatial = 0;
  bool per_group = false;  // scale and bias per group (version 18)
};

// W is the type the statistics are computed in.
template <typename T, typename W>
void group_norm_rows(const T* x, const T* scale, const T* bias, T* y, const GroupGeometry& g, W epsilon,
                     ThreadPool& pool) {
  const int64_t per_group = g.channels / g.groups;
  const int64_t len = per_group * g.spatial;
  parallel_range(pool, g.batch * g.groups, std::max<int64_t>(1, kCheapChunk / len), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      const int64_t group = row % g.groups;
      const T* xr = x + row * len;
      T* yr = y + row * len;
      const W mean = row_sum_as<W>(xr, len, [](W v) { return v; }) / static_cast<W>(len);
      const W var = row_sum_as<W>(xr, len, [mean](W v) { return (v - mean) * (v - mean); }) / static_cast<W>(len);
      const W inv = W{1} / std::sqrt(var + epsilon);
      for (int64_t k = 0; k < per_group; ++k) {
        const int64_t at = g.per_group ? group : group * per_group + k;
        const W a = static_cast<W>(load(scale[at])) * inv;
        const W o = static_cast<W>(load(bias[at])) - mean * a;
        const T* xp = xr + k * g.spatial;
        T* yp = yr + k * g.spatial;
        for (int64_t i = 0; i < g.spatial; ++i)
          yp[i] = store<T>(static_cast<compute_t<T>>(static_cast<W>(load(xp[i])) * a + o));
      }
    }
  });
}

class GroupNormKernel final : public Kernel {
 public:
  GroupNormKernel(const KernelCreateContext& ctx, Status& status) : per_group_(ctx.opset() < 21) {
    const Node& node = ctx.node();
    epsilon_ = node.attr_float("epsilon", 1e-5f);
    groups_ = node.attr_int("num_groups", 0);
    if (!node.has_attr("num_groups")) {
      status = ctx.error("attribute num_groups is required");
    } else if (groups_ <= 0) {
      status = ctx.error("attribute num_groups must be positive, got " + std::to_string(groups_));
    } else {
      status = read_stash_type(ctx, stash_);
    }
  }

  Status run(KernelContext& ctx) const override {
    for (size_t i = 0; i < 3; ++i)
      if (ctx.input(i) == nullptr) return kernel_error(ctx, "input " + std::to_string(i) + " is missing");
    const Tensor& x = *ctx.input(0);
    const Tensor& scale = *ctx.input(1);
    const Tensor& bias = *ctx.input(2);
    const Shape& shape = x.shape();
    if (shape.rank() < 2) return kernel_error(ctx, "X must have rank 2 or more (N, C, ...), got " + shape.to_string());
    GroupGeometry g;
    g.batch = shape[0];
    g.channels = shape[1];
    g.groups = groups_;
    g.spatial = shape.size_from(2);
    g.per_group = per_group_;
    if (g.channels % groups_ != 0)
      return kernel_error(ctx, "X " + shape.to_string() + " has " + std::to_string(g.channels) +
                                   " channels, not a multiple of num_groups " + std::to_string(groups_));
    const int64_t want = per_group_ ? groups_ : g.channels;
    for (size_t i = 1; i <= 2; ++i) {
      const Tensor& p = *ctx.input(i);
      if (p.dtype() != x.dtype() || p.shape().rank() != 1 || p.num_elements() != want)
        return kernel_error(ctx, describe_input(ctx, i, i == 1 ? "scale" : "bias") + " must be " +
                                     std::string(data_type_name(x.dtype())) + " [" + std::to_string(want) + "]" +
                                     (per_group_ ? " (one value per group)" : " (one value per channel)"));
    }
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), shape));
    if (x.num_elements() == 0) return ok_status();
    const bool handled = visit_type(FloatTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      visit_stats_type<T>(stash_, [&](auto wtag) {
        using W = typename decltype(wtag)::type;
        group_norm_rows<T, W>(x.data<T>(), scale.data<T>(), bias.data<T>(), y->data<T>(), g, epsilon_,
                              ctx.thread_pool());
      });
    });
    if (!handled) return kernel_error(ctx, "unsupported type " + describe_input(ctx, 0, "X"));
    return ok_status();
  }

 private:
  bool per_group_;
  float epsilon_ = 1e-5f;
  int64_t groups_ = 0;
  DataType stash_ = DataType::kFloat;
};

constexpr KernelDef kGroupNormKernels[] = {
    {"", "GroupNormalization", 18, kLatestVersion, 0, type_mask(FloatTypes{}), &make_kernel<GroupNormKernel>},
};

}  // namespace

std::span<const KernelDef> group_norm_kernels() { return kGroupNormKernels; }

}  // namespace sy::cpu
