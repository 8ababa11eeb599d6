#include "session/executor.h"

#include <algorithm>
#include <chrono>
#include <string>

namespace sy {
namespace {

// Kernel context for one step of a plan, reading and writing a frame.
class FrameKernelContext final : public KernelContext {
 public:
  FrameKernelContext(const Graph& graph, const ExecutionPlan& plan, ExecutionFrame& frame, ThreadPool* pool,
                     const RunOptions& run_options, Profiler* profiler)
      : graph_(graph), plan_(plan), frame_(frame) {
    pool_ = pool;
    run_options_ = &run_options;
    profiler_ = profiler;
  }

  void set_step(const PlanStep& step) {
    step_ = &step;
    node_ = step.node_ptr;
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const ValueId v = step.inputs[i];
      if (v == kNoValue) {
        frame_.input_ptrs[i] = nullptr;
      } else if (plan_.values[static_cast<size_t>(v)].storage == ValueStorage::kConstant) {
        frame_.input_ptrs[i] = &plan_.constants[static_cast<size_t>(v)];
      } else {
        frame_.input_ptrs[i] = &frame_.values[static_cast<size_t>(v)];
      }
    }
    inputs_ = std::span<const Tensor* const>(frame_.input_ptrs.data(), step.inputs.size());
    num_outputs_ = step.outputs.size();
    state_ = nullptr;
  }

  std::span<const Tensor* const> inputs() const { return inputs_; }

  bool output_requested(size_t i) const override { return i < step_->output_requested.size() && step_->output_requested[i]; }

  Result<Tensor*> allocate_output(size_t i, DataType dtype, const Shape& shape) override {
    if (i >= step_->outputs.size())
      return runtime_error(node_->describe() + ": kernel asked for output " + std::to_string(i) + " of " +
                           std::to_string(step_->outputs.size()));
    const ValueId v = step_->outputs[i];
    const ValuePlan& vp = plan_.values[static_cast<size_t>(v)];
    Tensor& t = frame_.values[static_cast<size_t>(v)];
    if (vp.storage == ValueStorage::kOutput || dtype == DataType::kString) {
      // Kernels write every element of their outputs, as they do in the
      // reused slots, so there is nothing to zero.
      Result<Tensor> allocated = Tensor::allocate_uninitialized(dtype, shape, vp.allocator);
      if (!allocated.ok()) return allocated.status().with_context(output_context(v, dtype, shape));
      t = std::move(allocated).value();
      return &t;
    }
    if (Status st = check_shape_is_sane(shape, dtype, std::string()); !st.ok())
      return st.with_context(output_context(v, dtype, shape));
    Result<void*> p = frame_.slots[static_cast<size_t>(vp.slot)].reserve(storage_bytes(dtype, shape.num_elements()));
    if (!p.ok()) return p.status().with_context(output_context(v, dtype, shape));
    t.reset_view(dtype, shape, *p, vp.allocator->device());
    return &t;
  }

  Status set_output(size_t i, const Tensor& value) override {
    if (i >= step_->outputs.size())
      return runtime_error(node_->describe() + ": kernel set output " + std::to_string(i) + " of " +
                           std::to_string(step_->outputs.size()));
    frame_.values[static_cast<size_t>(step_->outputs[i])] = value;
    return ok_status();
  }

  Result<void*> scratch(size_t bytes) override {
    Result<void*> p = frame_.scratch[static_cast<size_t>(step_->provider)].reserve(bytes);
    if (!p.ok()) return p.status().with_context(node_->describe() + " scratch memory");
    return p;
  }

 private:
  // Allocation failures get their context here, once for every kernel:
  // "node 'n' (Expand) output 'y' float[100000,100000]".
  std::string output_context(ValueId v, DataType dtype, const Shape& shape) const {
    return node_->describe() + " output '" + graph_.values[static_cast<size_t>(v)].name + "' " +
           std::string(data_type_name(dtype)) + shape.to_string();
  }

  const Graph& graph_;
  const ExecutionPlan& plan_;
  ExecutionFrame& frame_;
  const PlanStep* step_ = nullptr;
};

// Whether `inputs` have the shapes recorded in `shapes` (rank, then dims,
// per input; -1 for an omitted one). Runs before every step whose kernel
// prepares, so it only compares.
bool same_shapes(std::span<const Tensor* const> inputs, const std::vector<int64_t>& shapes) {
  size_t at = 0;
  for (const Tensor* t : inputs) {
    if (at >= shapes.size()) return false;
    if (t == nullptr) {
      if (shapes[at++] != -1) return false;
      continue;
    }
    const Shape& s = t->shape();
    if (shapes[at++] != static_cast<int64_t>(s.rank()) || at + s.rank() > shapes.size()) return false;
    for (size_t d = 0; d < s.rank(); ++d)
      if (shapes[at++] != s[d]) return false;
  }
  return at == shapes.size();
}

void record_shapes(std::span<const Tensor* const> inputs, std::vector<int64_t>& shapes) {
  shapes.clear();
  for (const Tensor* t : inputs) {
    if (t == nullptr) {
      shapes.push_back(-1);
      continue;
    }
    shapes.push_back(static_cast<int64_t>(t->shape().rank()));
    for (size_t d = 0; d < t->shape().rank(); ++d) shapes.push_back(t->shape()[d]);
  }
}

// The prepare phase of a step: its kernel's state for this frame, made
// again only when the step's input shapes changed since the last run.
Status prepare_step(const Kernel& kernel, PreparedStep& prepared, KernelContext& ctx,
                    std::span<const Tensor* const> inputs) {
  if (!prepared.prepared || !same_shapes(inputs, prepared.shapes)) {
    prepared.prepared = false;
    prepared.state.reset();
    ctx.set_state(nullptr);
    SY_ASSIGN_OR_RETURN(prepared.state, kernel.prepare(ctx));
    record_shapes(inputs, prepared.shapes);
    prepared.prepared = true;
  }
  ctx.set_state(prepared.state.get());
  return ok_status();
}

// Device providers queue work asynchronously; the frame's buffers may be
// reused by the next run only once that work is done, error or not.
Status wait_for_devices(std::span<ExecutionProvider* const> chain) {
  Status first;
  for (ExecutionProvider* p : chain) {
    if (p->device().is_cpu()) continue;
    Status st = p->synchronize();
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

}  // namespace

std::unique_ptr<ExecutionFrame> FramePool::acquire(const ExecutionPlan& plan, std::span<Allocator* const> allocators) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      auto f = std::move(free_.back());
      free_.pop_back();
      return f;
    }
  }
  return std::make_unique<ExecutionFrame>(plan, allocators);
}

void FramePool::release(std::unique_ptr<ExecutionFrame> frame) {
  for (Tensor& t : frame->values)
    if (t.owns_memory() || t.defined()) t = Tensor();
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(std::move(frame));
}

Status execute_plan(const Graph& graph, const ExecutionPlan& plan, ExecutionFrame& frame,
                    std::span<ExecutionProvider* const> chain, ThreadPool* pool, const RunOptions& run_options,
                    const ExecuteOptions& options) {
  FrameKernelContext ctx(graph, plan, frame, pool, run_options, options.profiler);
  // Read once: the loop below reads locals, not the options.
  const std::span<const int> skipped = options.skipped_steps;
  Profiler* const profiler = options.profiler;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep& step = plan.steps[s];
    if (!skipped.empty() && std::find(skipped.begin(), skipped.end(), static_cast<int>(s)) != skipped.end()) continue;
    if (run_options.terminate != nullptr && run_options.terminate->load(std::memory_order_relaxed)) {
      (void)wait_for_devices(chain);
      return Status(StatusCode::kFail, "run" + (run_options.run_tag.empty() ? std::string() : " '" + run_options.run_tag + "'") +
                                           " terminated by RunOptions.terminate before " + step.node_ptr->describe());
    }
    ctx.set_step(step);
    const auto started = profiler != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    // Prepared again when the node's own inputs change shape; the values
    // its subgraphs read (the inputs after those) do not key it, since a
    // control-flow kernel's state (its bodies' frames) does not depend on them.
    Status st = step.prepares ? prepare_step(*step.kernel, frame.prepared[s], ctx,
                                             ctx.inputs().first(step.num_node_inputs))
                              : ok_status();
    if (st.ok()) st = step.kernel->run(ctx);
    // A kernel's own allocations (outside allocate_output) fail without
    // saying where; the node is named here, once.
    if (st.code() == StatusCode::kOutOfMemory && st.message().find(step.node_ptr->describe()) == std::string::npos)
      st = st.with_context(step.node_ptr->describe());
    if (!st.ok()) {
      (void)wait_for_devices(chain);  // the run's error is the one to report
      if (!options.log_errors) return st;
      const auto run_severity = static_cast<LogSeverity>(run_options.log_level);
      const std::string id(options.log_id);
      log_message(LogSeverity::kError, std::min(run_severity, options.log_severity),
                  run_options.run_tag.empty() ? id : id + "/" + run_options.run_tag, st.to_string());
      return st;
    }
    if (profiler != nullptr) profiler->record(step, started);
  }
  return wait_for_devices(chain);
}

}  // namespace sy
