// Attributes the normalizations share: stash_type (LayerNormalization,
// RMSNormalization, GroupNormalization), the precision their statistics are
// computed in; and axis and epsilon, which LayerNormalization and
// RMSNormalization read alike.
#pragma once

#include <string>
#include <type_traits>

#include "providers/cpu/elementwise_common.h"
#include "providers/kernel.h"

namespace sy::cpu {

// Reads stash_type (default 1, float) into `out`; an error naming the node
// unless it is 1 (float), 11 (double) or 16 (bfloat16).
inline Status read_stash_type(const KernelCreateContext& ctx, DataType& out) {
  const int64_t stash = ctx.node().attr_int("stash_type", 1);
  if (stash != static_cast<int64_t>(DataType::kFloat) && stash != static_cast<int64_t>(DataType::kDouble) &&
      stash != static_cast<int64_t>(DataType::kBfloat16))
    return ctx.error("attribute stash_type must be 1 (float), 11 (double) or 16 (bfloat16), got " +
                     std::to_string(stash));
  out = static_cast<DataType>(stash);
  return ok_status();
}

// Calls f(TypeTag<W>{}) with W the type to compute the statistics of T
// data in: double for double data or a double stash, else float (for a
// bfloat16 stash too: more precise, never less).
template <typename T, typename F>
void visit_stats_type(DataType stash, F&& f) {
  if constexpr (std::is_same_v<T, double>) {
    f(TypeTag<double>{});
  } else if (stash == DataType::kDouble) {
    f(TypeTag<double>{});
  } else {
    f(TypeTag<float>{});
  }
}

// LayerNormalization's and RMSNormalization's attributes: statistics over
// X's dims from `axis` on.
struct AxisNormAttributes {
  int64_t axis = -1;
  float epsilon = 1e-5f;
  DataType stash = DataType::kFloat;

  Status read(const KernelCreateContext& ctx) {
    axis = ctx.node().attr_int("axis", -1);
    epsilon = ctx.node().attr_float("epsilon", 1e-5f);
    return read_stash_type(ctx, stash);
  }

  // `axis` in [0, rank) for X of shape `x`; an error naming the node when
  // it is out of range.
  Result<size_t> first_axis(const KernelContext& ctx, const Shape& x) const {
    int64_t a = axis;
    if (!normalize_axis(a, static_cast<int64_t>(x.rank())))
      return kernel_error(ctx, "axis " + std::to_string(axis) + " is out of range for X " + x.to_string());
    return static_cast<size_t>(a);
  }
};

}  // namespace sy::cpu
