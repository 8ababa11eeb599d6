// Control-flow kernels: If (Loop and Scan follow on the same machinery).
//
// A branch is a CompiledSubgraph (session/compiled_subgraph.h) the session
// made once, before this kernel; running it is binding the enclosing
// frame's values into a frame of the branch's plan and executing that plan
// with the session's executor. The branch frames live in the kernel's
// state for the enclosing frame (made by prepare(), kept by the frame), so
// a steady state plans nothing, creates nothing and allocates nothing.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "providers/cpu/copy_util.h"
#include "providers/kernel.h"
#include "session/compiled_subgraph.h"
#include "session/execution_frame.h"
#include "session/executor.h"

namespace sy::cpu {
namespace {

// A body as a control-flow kernel runs it: the compiled subgraph, and for
// each outer-scope value it reads, the kernel input that holds it (the
// step's inputs after the node's own are its implicit inputs, in order).
struct Body {
  const CompiledSubgraph* compiled = nullptr;
  std::string attribute;                             // "then_branch"
  std::vector<std::pair<size_t, ValueId>> bindings;  // (kernel input, body value)
};

Status make_body(const KernelCreateContext& ctx, const char* attribute, Body& body) {
  body.attribute = attribute;
  body.compiled = ctx.subgraph(attribute);
  if (body.compiled == nullptr)
    return ctx.unsupported(std::string(attribute) + " was not compiled by a session (subgraphs run only in one)");
  const Node& node = ctx.node();
  const Graph& inner = *body.compiled->graph;
  for (size_t k = 0; k < node.implicit_inputs.size(); ++k) {
    const ValueId outer = node.implicit_inputs[k];
    const ValueId v = inner.find_value(ctx.graph().values[static_cast<size_t>(outer)].name);
    if (v != kNoValue && inner.values[static_cast<size_t>(v)].is_outer_scope)
      body.bindings.emplace_back(node.inputs.size() + k, v);
  }
  if (inner.outputs.size() != node.outputs.size())
    return ctx.error(std::string(attribute) + " has " + std::to_string(inner.outputs.size()) +
                     " outputs; the node has " + std::to_string(node.outputs.size()));
  return ok_status();
}

// A body runs under the enclosing run's options (its terminate flag stops
// the body too); outside a session run, under the defaults.
const RunOptions& body_run_options(const KernelContext& ctx) {
  static const RunOptions defaults;
  return ctx.run_options() != nullptr ? *ctx.run_options() : defaults;
}

// Runs `body` on `frame`: binds the outer-scope values, executes, copies the
// outputs into the node's, and drops the bindings again so that the frame
// holds no reference to the enclosing frame's values between runs.
Status run_body(KernelContext& ctx, const Body& body, ExecutionFrame& frame) {
  const CompiledSubgraph& sub = *body.compiled;
  for (const auto& [input, v] : body.bindings) frame.values[static_cast<size_t>(v)] = *ctx.input(input);
  struct Unbind {
    const Body& body;
    ExecutionFrame& frame;
    ~Unbind() {
      for (const auto& [input, v] : body.bindings) frame.values[static_cast<size_t>(v)] = Tensor();
    }
  } unbind{body, frame};

  ExecuteOptions options;
  options.log_errors = false;  // the enclosing run logs what this returns
  Status st = execute_plan(*sub.graph, sub.plan, frame, sub.chain, &ctx.thread_pool(), body_run_options(ctx), options);
  if (!st.ok()) return st.with_context(ctx.node().describe() + " " + body.attribute);

  // The outputs sit in the body frame's slots, which the next run reuses:
  // a tensor is copied into the node's output (a slot of the enclosing
  // plan, no allocation), a sequence or optional is shared by value.
  const Graph& g = *sub.graph;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const auto v = static_cast<size_t>(g.outputs[i]);
    const Tensor& value =
        sub.plan.values[v].storage == ValueStorage::kConstant ? sub.plan.constants[v] : frame.values[v];
    if (value.is_tensor() && !value.defined())
      return kernel_error(ctx, body.attribute + " did not produce its output '" + g.values[v].name + "'");
    SY_RETURN_IF_ERROR(output_value(ctx, i, value));
  }
  return ok_status();
}

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
    status = make_body(ctx, "else_branch", bodies_[0]);
    if (status.ok()) status = make_body(ctx, "then_branch", bodies_[1]);
  }

  bool prepares() const override { return true; }

  Result<std::unique_ptr<KernelState>> prepare(const KernelContext&) const override {
    auto state = std::make_unique<IfState>();
    for (int b = 0; b < 2; ++b) {
      const CompiledSubgraph& sub = *bodies_[b].compiled;
      state->frames[b] = std::make_unique<ExecutionFrame>(sub.plan, sub.allocators);
    }
    return std::unique_ptr<KernelState>(std::move(state));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* cond = ctx.input(0);
    if (cond == nullptr || !cond->is_tensor() || cond->dtype() != DataType::kBool || cond->num_elements() != 1)
      return kernel_invalid_argument(ctx, "cond must be a bool tensor of one element, got " +
                                              (cond == nullptr ? std::string("nothing") : cond->describe()));
    const int b = cond->data<bool>()[0] ? 1 : 0;
    const auto* state = static_cast<const IfState*>(ctx.state());
    if (state != nullptr) return run_body(ctx, bodies_[b], *state->frames[b]);
    // Run without a prepare phase: a frame for this run only.
    ExecutionFrame frame(bodies_[b].compiled->plan, bodies_[b].compiled->allocators);
    return run_body(ctx, bodies_[b], frame);
  }

 private:
  Body bodies_[2];  // else, then: indexed by the condition
};

const KernelDef kControlFlowKernels[] = {
    {"", "If", 1, kLatestVersion, 0, type_bit(DataType::kBool), &make_kernel<IfKernel>, /*accepts_containers=*/true},
};

}  // namespace

std::span<const KernelDef> control_flow_kernels() { return kControlFlowKernels; }

}  // namespace sy::cpu
