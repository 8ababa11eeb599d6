// The executor: runs the steps of an execution plan, in order, over one
// frame. A session runs its graph with it; control-flow kernels (If, Loop,
// Scan) are to run their bodies with it too, so it knows nothing of
// feeds, outputs or sessions: the caller binds the feeds into the frame
// before and reads the results out of it after.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "core/logging.h"
#include "core/thread_pool.h"
#include "model/graph.h"
#include "providers/provider.h"
#include "session/execution_frame.h"
#include "session/execution_plan.h"
#include "session/profiler.h"
#include "switchyard/session.h"

namespace sy {

// Frames of one plan, kept between runs: a frame's buffers keep the sizes
// earlier runs gave them, so a steady state allocates nothing, and
// concurrent runs each take a frame of their own.
class FramePool {
 public:
  // A free frame, or a new one for `plan` when none is free.
  std::unique_ptr<ExecutionFrame> acquire(const ExecutionPlan& plan, std::span<Allocator* const> allocators);
  // Takes `frame` back. Its values are dropped first, so that a frame
  // waiting for reuse holds no reference to a caller's feeds or outputs.
  void release(std::unique_ptr<ExecutionFrame> frame);

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<ExecutionFrame>> free_;
};

// What one execution needs besides the plan, the frame and the providers.
struct ExecuteOptions {
  // Steps not to run, as indices into plan.steps (the final copies of
  // outputs an IoBinding keeps on their device).
  std::span<const int> skipped_steps;
  Profiler* profiler = nullptr;  // records every step when set
  // A step that fails is logged as an error under this id (with the run's
  // tag), when the lower of this severity and the run's lets errors out.
  std::string_view log_id;
  LogSeverity log_severity = LogSeverity::kWarning;
  // False for a body a control-flow kernel runs: the error it returns is
  // logged once, by the enclosing run, with the node and body named.
  bool log_errors = true;
};

// Runs every step of `plan` on `frame`, whose feeds are bound. `chain`:
// the providers the steps name; `pool`: the kernels' threads. Stops at
// the first step that fails, or before the next step once
// run_options.terminate is set. Returns only once the device providers
// have finished the work queued, error or not, since the frame's buffers
// may be reused as soon as it returns.
Status execute_plan(const Graph& graph, const ExecutionPlan& plan, ExecutionFrame& frame,
                    std::span<ExecutionProvider* const> chain, ThreadPool* pool, const RunOptions& run_options,
                    const ExecuteOptions& options);

}  // namespace sy
