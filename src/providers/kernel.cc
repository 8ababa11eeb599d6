#include "providers/kernel.h"

namespace sy {

Status run_kernel_once(const Kernel& kernel, KernelContext& ctx) {
  std::unique_ptr<KernelState> state;
  if (kernel.prepares()) {
    SY_ASSIGN_OR_RETURN(state, kernel.prepare(ctx));
  }
  const KernelState* before = ctx.state();
  ctx.set_state(state.get());
  Status st = kernel.run(ctx);
  ctx.set_state(before);
  return st;
}

}  // namespace sy
