// SequenceMap: runs its compiled body (body.h) once per item of its
// sequence inputs (a tensor input is passed whole to every run) and makes
// a sequence of each body output. The items are the runs' outputs, copied
// out of the frame (whose slots the next run reuses) into tensors of their
// own, since a sequence owns its items.
#include <memory>
#include <string>
#include <vector>

#include "providers/cpu/control_flow/body.h"

namespace sy::cpu {
namespace {

class SequenceMapState final : public KernelState {
 public:
  mutable std::unique_ptr<ExecutionFrame> frame;
};

class SequenceMapKernel final : public Kernel {
 public:
  SequenceMapKernel(const KernelCreateContext& ctx, Status& status) {
    status = make_body(ctx, "body", body_);
    if (!status.ok()) return;
    if (body_.num_inputs() != ctx.node().inputs.size() || body_.num_outputs() != ctx.node().outputs.size())
      status = ctx.error("body has " + std::to_string(body_.num_inputs()) + " inputs and " +
                         std::to_string(body_.num_outputs()) + " outputs; expected one per input and output of the node (" +
                         std::to_string(ctx.node().inputs.size()) + " and " + std::to_string(ctx.node().outputs.size()) + ")");
  }

  bool prepares() const override { return true; }

  Result<std::unique_ptr<KernelState>> prepare(const KernelContext&) const override {
    auto state = std::make_unique<SequenceMapState>();
    state->frame = make_body_frame(body_);
    return std::unique_ptr<KernelState>(std::move(state));
  }

  Status run(KernelContext& ctx) const override {
    const auto* state = static_cast<const SequenceMapState*>(ctx.state());
    if (state != nullptr) return run_map(ctx, *state->frame);
    std::unique_ptr<ExecutionFrame> frame = make_body_frame(body_);
    return run_map(ctx, *frame);
  }

 private:
  Status run_map(KernelContext& ctx, ExecutionFrame& frame) const {
    const Tensor* first = ctx.input(0);
    if (first == nullptr || first->kind() != ValueKind::kSequence)
      return kernel_error(ctx, "input 0 (input_sequence) must be a sequence, got " + describe_value(first));
    const size_t count = first->items().size();
    for (size_t i = 1; i < ctx.node().inputs.size(); ++i) {
      const Tensor* in = ctx.input(i);
      if (in == nullptr) return kernel_invalid_argument(ctx, "input " + std::to_string(i) + " is missing");
      if (in->kind() == ValueKind::kSequence && in->items().size() != count)
        return kernel_invalid_argument(ctx, "input " + std::to_string(i) + " is a sequence of " +
                                                std::to_string(in->items().size()) + " items; input 0 has " +
                                                std::to_string(count));
      if (in->kind() == ValueKind::kNone)
        return kernel_invalid_argument(ctx, "input " + std::to_string(i) + " must be a tensor or a sequence, got " +
                                                describe_value(in));
    }

    OuterBinding outer(ctx, body_, frame);
    struct Release {
      const Body& body;
      ExecutionFrame& frame;
      ~Release() { unbind_body_inputs(body, frame); }
    } release{body_, frame};

    std::vector<std::vector<Tensor>> items(body_.num_outputs());
    for (auto& list : items) list.reserve(count);
    for (size_t n = 0; n < count; ++n) {
      for (size_t i = 0; i < body_.num_inputs(); ++i) {
        const Tensor& in = *ctx.input(i);
        bind_body_input(body_, frame, i, in.kind() == ValueKind::kSequence ? in.items()[n] : in);
      }
      SY_RETURN_IF_ERROR(execute_body(ctx, body_, frame).with_context("item " + std::to_string(n)));
      for (size_t o = 0; o < body_.num_outputs(); ++o) {
        SY_ASSIGN_OR_RETURN(const Tensor* out, body_output(ctx, body_, frame, o));
        if (!out->is_tensor())
          return kernel_error(ctx, body_.output_name(o) + " must be a tensor (an item of a sequence), got " +
                                       describe_value(out));
        if (!items[o].empty() && items[o].front().dtype() != out->dtype())
          return kernel_error(ctx, body_.output_name(o) + " is " + out->describe() + " for item " + std::to_string(n) +
                                       " but " + std::string(data_type_name(items[o].front().dtype())) +
                                       " for the first: a sequence holds one element type");
        if (out->owns_memory()) {
          items[o].push_back(*out);
        } else {
          SY_ASSIGN_OR_RETURN(Tensor copy, out->clone());
          items[o].push_back(std::move(copy));
        }
      }
    }
    for (size_t o = 0; o < body_.num_outputs(); ++o) {
      DataType dtype = items[o].empty() ? DataType::kUndefined : items[o].front().dtype();
      if (dtype == DataType::kUndefined) {
        const Graph& g = body_.graph();
        dtype = g.values[static_cast<size_t>(g.outputs[o])].type.dtype;
      }
      SY_RETURN_IF_ERROR(ctx.set_output(o, Tensor::sequence(dtype, std::move(items[o]))));
    }
    return ok_status();
  }

  Body body_;
};

const KernelDef kSequenceMapKernels[] = {
    {"", "SequenceMap", 17, kLatestVersion, -1, 0, &make_kernel<SequenceMapKernel>, /*accepts_containers=*/true},
};

}  // namespace

std::span<const KernelDef> sequence_map_kernels() { return kSequenceMapKernels; }

}  // namespace sy::cpu
