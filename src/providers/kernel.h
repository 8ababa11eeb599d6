// Kernels: the code that runs one node on one provider.
//
// Three phases. Creation (a KernelFactory) reads attributes, validates them
// and prepacks constant weights; it may allocate freely. prepare(), for the
// kernels that have one, runs before run() whenever the shapes of the
// node's inputs differ from the last run's on the same frame: it does the
// planning that depends on shapes alone (a GEMM's split among threads) and
// returns it as a KernelState, which the frame keeps. run() sees the node's
// tensors through a KernelContext and must not allocate on the heap:
// outputs and scratch come from the context, which reuses memory across
// runs. prepare() and run() are const and may be called from several
// threads at once, each with its own frame; so what changes with shapes
// lives in the frame's KernelState, never in the kernel.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string_view>

#include "core/thread_pool.h"
#include "model/graph.h"
#include "switchyard/status.h"
#include "switchyard/tensor.h"

namespace sy {

struct RunOptions;  // switchyard/session.h
class Profiler;     // session/profiler.h

// What a kernel's prepare() made for one set of input shapes. Read-only
// while run() runs, so that the kernel's own threads may share it. (A
// control-flow kernel keeps its bodies' frames here, which its run()
// alone uses: providers/cpu/control_flow.cc.)
class KernelState {
 public:
  virtual ~KernelState() = default;
};

class KernelContext {
 public:
  virtual ~KernelContext() = default;

  size_t num_inputs() const { return inputs_.size(); }
  // nullptr when an optional input is omitted.
  const Tensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  size_t num_outputs() const { return num_outputs_; }
  // False for an omitted optional output; allocate_output() still works
  // for it and gives throwaway memory.
  virtual bool output_requested(size_t i) const = 0;

  // The memory for output i, with the given type and shape. The returned
  // pointer stays valid until run() returns.
  virtual Result<Tensor*> allocate_output(size_t i, DataType dtype, const Shape& shape) = 0;
  // Sets output i to an existing value (a sequence or optional, or a tensor
  // shared rather than copied). Only kernels whose KernelDef accepts
  // containers use it.
  virtual Status set_output(size_t i, const Tensor& value) {
    (void)value;
    return not_implemented(node_->describe() + ": this context cannot take output " + std::to_string(i) + " by value");
  }
  // Temporary memory (64-byte aligned) valid until run() returns; one region
  // per kernel call, reused across runs. Kernels that carve it into pieces
  // round each piece with scratch_align() so every piece stays aligned.
  virtual Result<void*> scratch(size_t bytes) = 0;
  static constexpr size_t scratch_align(size_t bytes) { return (bytes + 63) / 64 * 64; }

  ThreadPool& thread_pool() const { return *pool_; }
  const Node& node() const { return *node_; }

  // What the kernel's prepare() made for these inputs' shapes; nullptr
  // when it has no prepare phase (or ran without one: kernels then plan on
  // the spot, correct but slower).
  const KernelState* state() const { return state_; }
  // Set by whoever runs the kernel (the executor, run_kernel_once).
  void set_state(const KernelState* state) { state_ = state; }

  // The options of the session run this kernel is part of, which a
  // control-flow kernel passes on to the bodies it runs (their terminate
  // flag and tag); nullptr outside a session run (constant folding, tests).
  const RunOptions* run_options() const { return run_options_; }
  // The profiler recording this run's nodes, which a control-flow kernel
  // hands to its bodies so their nodes are recorded too; nullptr when the
  // run is not profiled.
  Profiler* profiler() const { return profiler_; }

 protected:
  const KernelState* state_ = nullptr;
  const RunOptions* run_options_ = nullptr;
  Profiler* profiler_ = nullptr;
  std::span<const Tensor* const> inputs_;
  size_t num_outputs_ = 0;
  ThreadPool* pool_ = nullptr;
  const Node* node_ = nullptr;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Whether the kernel has a prepare phase; read once when the plan is
  // built, so the kernels without one cost the executor nothing.
  virtual bool prepares() const { return false; }
  // The prepare phase: called with the run's inputs before run() whenever
  // their shapes changed. What it makes must depend on the shapes alone,
  // not the values, since it serves later inputs of the same shapes. May
  // allocate.
  virtual Result<std::unique_ptr<KernelState>> prepare(const KernelContext& ctx) const {
    (void)ctx;
    return std::unique_ptr<KernelState>();
  }
  virtual Status run(KernelContext& ctx) const = 0;
};

// Runs a kernel outside an execution plan (constant folding, single-node
// tests, a compiled partition in tests): prepares it for these inputs,
// runs it, and drops the state.
Status run_kernel_once(const Kernel& kernel, KernelContext& ctx);

// A subgraph (an If branch, a Loop body) made ready to run at session
// creation: session/compiled_subgraph.h. Kernels of control-flow ops get
// theirs when they are created.
struct CompiledSubgraph;
// The compiled subgraphs of a graph's nodes, by the body graph (the one in
// the node's attribute).
using CompiledSubgraphMap = std::map<const Graph*, const CompiledSubgraph*>;

// What a factory sees when creating a kernel for a node.
class KernelCreateContext {
 public:
  KernelCreateContext(const Graph& graph, const Node& node, const CompiledSubgraphMap* subgraphs = nullptr)
      : graph_(graph), node_(node), subgraphs_(subgraphs) {}
  const Graph& graph() const { return graph_; }
  const Node& node() const { return node_; }
  // The compiled body of the node's graph attribute `attribute`; nullptr
  // when the node has no such attribute or nothing compiled it (constant
  // folding, single-node tests).
  const CompiledSubgraph* subgraph(std::string_view attribute) const {
    if (subgraphs_ == nullptr) return nullptr;
    for (const Attribute& a : node_.attributes) {
      if (a.name != attribute || !a.g) continue;
      auto it = subgraphs_->find(a.g.get());
      return it == subgraphs_->end() ? nullptr : it->second;
    }
    return nullptr;
  }
  int opset() const { return node_.since_version; }
  size_t num_inputs() const { return node_.inputs.size(); }
  // nullptr when omitted.
  const ValueType* input_type(size_t i) const {
    return node_.has_input(i) ? &graph_.values[static_cast<size_t>(node_.inputs[i])].type : nullptr;
  }
  const ValueType* output_type(size_t i) const {
    return i < node_.outputs.size() && node_.outputs[i] != kNoValue
               ? &graph_.values[static_cast<size_t>(node_.outputs[i])].type
               : nullptr;
  }
  // The input's value when it is constant (an initializer), for prepacking.
  const Tensor* constant_input(size_t i) const {
    return node_.has_input(i) ? graph_.constant(node_.inputs[i]) : nullptr;
  }
  DataType input_dtype(size_t i) const {
    const ValueType* t = input_type(i);
    return t ? t->dtype : DataType::kUndefined;
  }
  // The kernel has copied constant input i into a form of its own (packed
  // weights) and will not read the input's bytes at run time, only its
  // shape; the session may then free the original.
  void mark_prepacked(size_t i) const {
    if (i < 64) prepacked_ |= uint64_t{1} << i;
  }
  uint64_t prepacked() const { return prepacked_; }
  // An error naming the node, for invalid attributes.
  Status error(const std::string& message) const { return invalid_graph(node_.describe() + ": " + message); }
  Status unsupported(const std::string& message) const { return not_implemented(message); }

 private:
  const Graph& graph_;
  const Node& node_;
  const CompiledSubgraphMap* subgraphs_;
  mutable uint64_t prepacked_ = 0;
};

using KernelFactory = Result<std::unique_ptr<Kernel>> (*)(const KernelCreateContext& ctx);

inline constexpr int kLatestVersion = 1 << 30;

// One row of a provider's kernel table.
struct KernelDef {
  std::string_view domain;  // "" for ai.onnx
  std::string_view op_type;
  int since_version;        // first op version this kernel implements
  int end_version;          // last one, inclusive (kLatestVersion: open-ended)
  int type_input;           // input whose dtype is checked against type_mask; -1 for none
  uint64_t type_mask;       // type_bit(...) | ...
  KernelFactory create;
  // Whether inputs may be sequences or optionals; other kernels see tensors only.
  bool accepts_containers = false;
};

// Builds a Kernel of type K from its constructor K(const KernelCreateContext&, Status&).
template <typename K>
Result<std::unique_ptr<Kernel>> make_kernel(const KernelCreateContext& ctx) {
  Status status;
  auto k = std::make_unique<K>(ctx, status);
  if (!status.ok()) return status;
  return std::unique_ptr<Kernel>(std::move(k));
}

// Error helper for run(): "node 'x' (Op): message".
inline Status kernel_error(const KernelContext& ctx, const std::string& message) {
  return runtime_error(ctx.node().describe() + ": " + message);
}

// Input i of the node, for messages: "input 2 (a_zero_point) [2] uint8"
// (the input must be present).
inline std::string describe_input(const KernelContext& ctx, size_t i, const std::string& name) {
  return "input " + std::to_string(i) + " (" + name + ") " + ctx.input(i)->describe();
}

// The same for sizes from the model or an input that are out of range (a
// shape whose element count overflows, a count too large to allocate): the
// caller's data is at fault, so InvalidArgument.
inline Status kernel_invalid_argument(const KernelContext& ctx, const std::string& message) {
  return invalid_argument(ctx.node().describe() + ": " + message);
}

}  // namespace sy
