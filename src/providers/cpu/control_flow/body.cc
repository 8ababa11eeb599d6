#include "providers/cpu/control_flow/body.h"

#include "providers/cpu/copy_util.h"
#include "session/executor.h"

namespace sy::cpu {

std::string Body::input_name(size_t i) const {
  const Graph& g = graph();
  return attribute + " input " + std::to_string(i) + " ('" + g.values[static_cast<size_t>(g.inputs[i])].name + "')";
}

std::string Body::output_name(size_t i) const {
  const Graph& g = graph();
  return attribute + " output " + std::to_string(i) + " ('" + g.values[static_cast<size_t>(g.outputs[i])].name + "')";
}

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
  return ok_status();
}

std::unique_ptr<ExecutionFrame> make_body_frame(const Body& body) {
  return std::make_unique<ExecutionFrame>(body.compiled->plan, body.compiled->allocators);
}

OuterBinding::OuterBinding(const KernelContext& ctx, const Body& body, ExecutionFrame& frame)
    : body_(body), frame_(frame) {
  for (const auto& [input, v] : body.bindings) frame.values[static_cast<size_t>(v)] = *ctx.input(input);
}

OuterBinding::~OuterBinding() {
  for (const auto& [input, v] : body_.bindings) frame_.values[static_cast<size_t>(v)] = Tensor();
}

void unbind_body_inputs(const Body& body, ExecutionFrame& frame) {
  for (ValueId v : body.graph().inputs) frame.values[static_cast<size_t>(v)] = Tensor();
}

namespace {

// A body runs under the enclosing run's options; outside a session run,
// under the defaults.
const RunOptions& body_run_options(const KernelContext& ctx) {
  static const RunOptions defaults;
  return ctx.run_options() != nullptr ? *ctx.run_options() : defaults;
}

}  // namespace

Status execute_body(KernelContext& ctx, const Body& body, ExecutionFrame& frame) {
  const CompiledSubgraph& sub = *body.compiled;
  ExecuteOptions options;
  options.log_errors = false;  // the enclosing run logs what this returns
  options.profiler = ctx.profiler();
  Status st = execute_plan(*sub.graph, sub.plan, frame, sub.chain, &ctx.thread_pool(), body_run_options(ctx), options);
  if (!st.ok()) return st.with_context(ctx.node().describe() + " " + body.attribute);
  return ok_status();
}

Result<const Tensor*> body_output(const KernelContext& ctx, const Body& body, const ExecutionFrame& frame, size_t i) {
  const CompiledSubgraph& sub = *body.compiled;
  const auto v = static_cast<size_t>(sub.graph->outputs[i]);
  const Tensor& value =
      sub.plan.values[v].storage == ValueStorage::kConstant ? sub.plan.constants[v] : frame.values[v];
  if (value.is_tensor() && !value.defined())
    return kernel_error(ctx, body.attribute + " did not produce its output '" + sub.graph->values[v].name + "'");
  if (value.is_tensor() && !value.device().is_cpu())
    return kernel_error(ctx, body.output_name(i) + " is on " + value.device().to_string() +
                                 ", not on the host where the node runs");
  return &value;
}

OutputSource body_output_source(const Body& body, size_t i) {
  const CompiledSubgraph& sub = *body.compiled;
  const auto v = static_cast<size_t>(sub.graph->outputs[i]);
  if (sub.plan.values[v].storage == ValueStorage::kConstant || sub.graph->values[v].is_outer_scope)
    return OutputSource::kStable;
  if (sub.plan.values[v].storage == ValueStorage::kFeed) return OutputSource::kBodyInput;
  return OutputSource::kSlot;
}

std::string describe_value(const Tensor* t) {
  if (t == nullptr) return "nothing";
  if (t->kind() == ValueKind::kSequence) return "a sequence of " + std::string(data_type_name(t->dtype()));
  if (t->kind() == ValueKind::kNone) return "an empty optional";
  return t->describe();
}

Status check_carried(const KernelContext& ctx, const Body& body, size_t output, const Tensor& initial,
                     const Tensor& out, int64_t iteration, const char* what) {
  const bool same_kind = initial.is_tensor() == out.is_tensor() &&
                         (initial.kind() == ValueKind::kSequence) == (out.kind() == ValueKind::kSequence);
  const bool optional_involved = initial.kind() == ValueKind::kNone || out.kind() == ValueKind::kNone;
  if ((same_kind || optional_involved) && (initial.dtype() == out.dtype() || initial.dtype() == DataType::kUndefined ||
                                           out.dtype() == DataType::kUndefined))
    return ok_status();
  return kernel_error(ctx, body.output_name(output) + " gives " + describe_value(&out) + " at iteration " +
                               std::to_string(iteration) + ", but its " + what + " started as " +
                               describe_value(&initial));
}

Status carry_value(const KernelContext& ctx, const Tensor& out, OutputSource source, GrowableBuffer& spare,
                   Tensor& carried) {
  if (!out.is_tensor() || source != OutputSource::kBodyInput) {
    carried = out;
    return ok_status();
  }
  if (out.dtype() == DataType::kString) {
    SY_ASSIGN_OR_RETURN(carried, out.clone());
    return ok_status();
  }
  SY_ASSIGN_OR_RETURN(void* p, spare.reserve(out.byte_size()));
  Tensor copy;
  copy.reset_view(out.dtype(), out.shape(), p, kCpuDevice);
  copy_tensor_data(out, copy, ctx.thread_pool());
  carried = copy;
  return ok_status();
}

}  // namespace sy::cpu
