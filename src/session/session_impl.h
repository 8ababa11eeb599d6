// Session::Impl: what a session holds, from the pipeline of DESIGN.md
// that builds it (pipeline.cc) to the runs that use it. Its parts live in
// files of their own:
//   pipeline.cc       create: from a loaded model to a plan
//   run.cc            run: feeds checked and bound, the plan executed
//                     (executor.h), outputs collected
//   io_binding.cc     the routes that let IoBinding skip copies
//   device_memory.cc  tensors on the providers' devices, and copies
//   profiler.h        the per-node profile
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/logging.h"
#include "core/thread_pool.h"
#include "model/graph.h"
#include "partition/partitioner.h"
#include "providers/provider.h"
#include "session/compiled_subgraph.h"
#include "session/execution_frame.h"
#include "session/execution_plan.h"
#include "session/executor.h"
#include "session/profiler.h"
#include "switchyard/session.h"

namespace sy {

class Session::Impl {
 public:
  static Result<std::unique_ptr<Impl>> create(Model model, const SessionOptions& options);

  // `device_outputs`: per output name asked for, the device it should stay
  // on (empty: all on the host). A device output skips its final copy to
  // the host and is returned in memory of its own on that device.
  Result<std::vector<Tensor>> run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                  const std::vector<std::string>& output_names, const RunOptions& run_options,
                                  const std::vector<Device>& device_outputs = {}) const;

  // The provider whose device is `d`, or nullptr.
  ExecutionProvider* provider_for(Device d) const;
  // Graph input `i` fed in device memory: used as it is where feed_device
  // allows, otherwise brought to the host first.
  Result<Tensor> place_feed(size_t i, const Tensor& feed) const;
  Result<Tensor> allocate_on(Device d, DataType dtype, const Shape& shape) const;
  Status copy_between(const Tensor& src, Tensor& dst) const;

  SessionOptions options;
  std::string log_id;
  LogSeverity log_severity = LogSeverity::kWarning;
  Model model;  // model.graph is the optimized, partitioned graph
  ModelMetadata metadata;
  std::vector<ValueInfo> input_infos;
  std::vector<ValueInfo> output_infos;
  std::vector<ValueInfo> overridable_infos;
  std::vector<NodeAssignment> assignment;
  PlacementSummary placement;
  std::vector<std::string> requested;  // long names, in order
  // Shared: device tensors handed to callers keep their provider alive.
  std::vector<std::shared_ptr<ExecutionProvider>> providers;
  std::vector<ExecutionProvider*> chain;
  std::vector<Allocator*> provider_allocators;
  std::vector<std::unique_ptr<Kernel>> kernels;
  // The compiled bodies of control-flow nodes, enclosing ones first; their
  // kernels point into them. Declared after `providers`, so that their
  // kernels go before the providers do.
  std::vector<std::unique_ptr<CompiledSubgraph>> subgraphs;
  ExecutionPlan plan;
  PartitionResult partition;  // kept for reports
  std::unique_ptr<ThreadPool> pool;

  // Per-node events while enable_profiling is on; runs are const and
  // record into it.
  mutable Profiler profiler;

  // Graph inputs in model order, and the values feeds bind to.
  std::vector<ValueId> input_values;
  // Overridable initializers: value and default.
  std::vector<std::pair<ValueId, Tensor>> overridable;
  // Names to positions in input_values and overridable, and to the values
  // of graph outputs: a run binding many feeds or asking for many outputs
  // does no searching.
  std::unordered_map<std::string, size_t> input_index;
  std::unordered_map<std::string, size_t> overridable_index;
  std::unordered_map<std::string, ValueId> output_value;
  // Per graph output: the first position holding the same value (a model
  // may list one output twice; the second gets a copy).
  std::vector<size_t> output_first_request;
  // The graph has sequences, optionals or subgraphs, whose kernels hand
  // values on without a copy: a result may then share a feed's bytes, and
  // run() checks each result against the feeds.
  bool results_may_share_feeds = false;

  // IoBinding routes, worked out once at creation so that a run does no
  // searching. Per graph input: the device on which a feed is used without
  // a copy, because every node reading it is a copy to that device
  // (nullopt: its readers need it on the host).
  std::vector<std::optional<Device>> feed_device;
  // Per graph output (graph.outputs order): its final copy to the host,
  // which a run keeping the output on `device` skips, reading `source`.
  struct DeviceOutputRoute {
    int step = -1;  // index into plan.steps; -1: no skippable copy
    ValueId source = kNoValue;
    Device device;
  };
  std::vector<DeviceOutputRoute> output_routes;

 private:
  Status check_feed(const ValueInfo& info, const ValueType& type, const Tensor& feed) const;

  // Runs are const and take their frames from here.
  mutable FramePool frames_;
};

// Fills Impl::feed_device and Impl::output_routes from the partitioned
// graph and the plan (io_binding.cc).
void plan_io_binding_routes(Session::Impl& s, const Graph& graph);

// For each requested output, the position of the first request of the
// same value (its own when it is the first) (run.cc).
std::vector<size_t> first_requests(const std::vector<ValueId>& wanted);

}  // namespace sy
