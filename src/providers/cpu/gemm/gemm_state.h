// The prepared state of a kernel that runs GEMMs: the plans of its
// products for one set of input shapes (gemm/sgemm.h, GemmPlans), made by
// its prepare() and read by run().
#pragma once

#include "providers/cpu/gemm/sgemm.h"
#include "providers/kernel.h"

namespace sy::cpu {

struct GemmState : KernelState {
  GemmPlans plans;
};

// The plans in ctx's state, whose kernel's state is a GemmState (or
// derives from it); an empty set, every product then planned on the spot,
// when the kernel ran without its prepare phase.
inline const GemmPlans& gemm_plans(const KernelContext& ctx) {
  static const GemmPlans none;
  return ctx.state() != nullptr ? static_cast<const GemmState*>(ctx.state())->plans : none;
}

}  // namespace sy::cpu
