#include "providers/cpu/elementwise_broadcast.h"

#include <string>

namespace sy::cpu {

Status broadcast_shapes(const KernelContext& ctx, std::span<const Shape* const> shapes, Shape& out) {
  size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->rank());
  out.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t result = 1;
    for (const Shape* s : shapes) {
      const size_t offset = rank - s->rank();
      if (d < offset) continue;
      const int64_t v = (*s)[d - offset];
      if (v == 1) continue;
      if (result == 1) {
        result = v;
      } else if (result != v) {
        std::string list;
        for (const Shape* t : shapes) list += (list.empty() ? "" : " vs ") + t->to_string();
        return kernel_error(ctx, "input shapes cannot be broadcast together: " + list + " (dimension " +
                                     std::to_string(result) + " vs " + std::to_string(v) + ")");
      }
    }
    out[d] = result;
  }
  return ok_status();
}

Status make_broadcast_plan(const KernelContext& ctx, std::span<const Shape* const> inputs, const Shape& out,
                           BroadcastPlan& plan) {
  plan = BroadcastPlan{};
  plan.num_inputs = static_cast<int>(inputs.size());
  plan.total = out.num_elements();
  const size_t rank = out.rank();
  unsigned last_mask = ~0u;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t od = out[d];
    if (od == 1) continue;
    unsigned mask = 0;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const size_t offset = rank - inputs[k]->rank();
      const int64_t v = d >= offset ? (*inputs[k])[d - offset] : 1;
      if (v == od) mask |= 1u << k;
    }
    if (plan.rank > 0 && mask == last_mask) {
      plan.dims[plan.rank - 1] *= od;
      continue;
    }
    if (plan.rank == kMaxBroadcastRank)
      return not_implemented(ctx.node().describe() + ": broadcasting needs more than " +
                             std::to_string(kMaxBroadcastRank) + " dimensions after merging, output " +
                             out.to_string());
    plan.dims[plan.rank] = od;
    for (size_t k = 0; k < inputs.size(); ++k) plan.strides[k][plan.rank] = (mask >> k) & 1u;  // fixed below
    ++plan.rank;
    last_mask = mask;
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    int64_t running = 1;
    for (int d = plan.rank - 1; d >= 0; --d) {
      if (plan.strides[k][d] != 0) {
        plan.strides[k][d] = running;
        running *= plan.dims[d];
      }
    }
    plan.inner_moves[k] = plan.rank > 0 && plan.strides[k][plan.rank - 1] == 1;
  }
  return ok_status();
}

}  // namespace sy::cpu
