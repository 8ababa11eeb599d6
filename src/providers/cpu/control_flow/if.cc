// If: runs one of two compiled branches (body.h) on a frame the kernel
// keeps per branch, and hands the branch's outputs on as its own.
#include <memory>
#include <string>

#include "providers/cpu/control_flow/body.h"
#include "providers/cpu/copy_util.h"

namespace sy::cpu {
namespace {

// The If's state in one frame of the enclosing plan: a frame per branch,
// whose buffers grow to what the branch needs and stay. Only the step's own
// run() uses it, on the thread running that enclosing frame, hence mutable.
class IfState final : public KernelState {
 public:
  mutable std::unique_ptr<ExecutionFrame> frames[2];  // else, then
};

class IfKernel final : public Kernel {
 public:
  IfKernel(const KernelCreateContext& ctx, Status& status) {
    static const char* const kNames[2] = {"else_branch", "then_branch"};
    for (int b = 0; b < 2 && status.ok(); ++b) {
      status = make_body(ctx, kNames[b], bodies_[b]);
      if (status.ok() && bodies_[b].num_outputs() != ctx.node().outputs.size())
        status = ctx.error(std::string(kNames[b]) + " has " + std::to_string(bodies_[b].num_outputs()) +
                           " outputs; the node has " + std::to_string(ctx.node().outputs.size()));
    }
  }

  bool prepares() const override { return true; }

  Result<std::unique_ptr<KernelState>> prepare(const KernelContext&) const override {
    auto state = std::make_unique<IfState>();
    for (int b = 0; b < 2; ++b) state->frames[b] = make_body_frame(bodies_[b]);
    return std::unique_ptr<KernelState>(std::move(state));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* cond = ctx.input(0);
    if (cond == nullptr || !cond->is_tensor() || cond->dtype() != DataType::kBool || cond->num_elements() != 1)
      return kernel_invalid_argument(ctx, "cond must be a bool tensor of one element, got " +
                                              (cond == nullptr ? std::string("nothing") : cond->describe()));
    const int b = cond->data<bool>()[0] ? 1 : 0;
    const auto* state = static_cast<const IfState*>(ctx.state());
    if (state != nullptr) return run_branch(ctx, bodies_[b], *state->frames[b]);
    // Run without a prepare phase: a frame for this run only.
    std::unique_ptr<ExecutionFrame> frame = make_body_frame(bodies_[b]);
    return run_branch(ctx, bodies_[b], *frame);
  }

 private:
  // The branch's outputs sit in its frame's slots, which the next run
  // reuses: a tensor is copied into the node's output (a slot of the
  // enclosing plan, no allocation), a sequence or optional is shared.
  static Status run_branch(KernelContext& ctx, const Body& body, ExecutionFrame& frame) {
    OuterBinding outer(ctx, body, frame);
    SY_RETURN_IF_ERROR(execute_body(ctx, body, frame));
    for (size_t i = 0; i < body.num_outputs(); ++i) {
      SY_ASSIGN_OR_RETURN(const Tensor* value, body_output(ctx, body, frame, i));
      SY_RETURN_IF_ERROR(output_value(ctx, i, *value));
    }
    return ok_status();
  }

  Body bodies_[2];  // else, then: indexed by the condition
};

const KernelDef kIfKernels[] = {
    {"", "If", 1, kLatestVersion, 0, type_bit(DataType::kBool), &make_kernel<IfKernel>, /*accepts_containers=*/true},
};

}  // namespace

std::span<const KernelDef> if_kernels() { return kIfKernels; }

}  // namespace sy::cpu
