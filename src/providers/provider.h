// ExecutionProvider: one entry of the provider chain (DESIGN.md, "The
// provider interface"). A provider says whether it can load here, which
// nodes it can run (declining the rest with a reason a person can act on),
// rewrites the nodes placed on it (its fusions), and only then creates
// kernels, for exactly the nodes it keeps.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/graph.h"
#include "providers/kernel.h"
#include "providers/kernel_registry.h"
#include "switchyard/allocator.h"
#include "switchyard/status.h"

namespace sy {

struct Availability {
  bool available = true;
  std::string reason;  // why not, when !available
  std::string fix;     // what to do about it
};

// A provider's answer for one node, before any kernel exists.
struct NodeSupport {
  NodeId node = kNoNode;
  bool supported = false;
  std::string reason;  // when not
};

// A kernel made for a node placed on the provider.
struct CreatedKernel {
  std::unique_ptr<Kernel> kernel;
  // Bit i: the kernel reads input i from host memory (a shape argument),
  // so the partitioner keeps or copies that input on the host.
  uint64_t host_inputs = 0;
  // Bit i: the kernel prepacked constant input i and reads only its shape.
  uint64_t prepacked_inputs = 0;
};

// A run of nodes placed on one provider, one after another in execution
// order, offered whole to a provider that compiles partitions.
struct PartitionToCompile {
  std::vector<NodeId> nodes;     // execution order
  std::vector<ValueId> inputs;   // read from outside the partition, constants included
  std::vector<ValueId> outputs;  // made inside, read outside (or graph outputs)
  // Model, device, provider version and the partition's nodes: the same
  // partition of the same model on the same device and provider build
  // gets the same key in every session, for engines cached on disk.
  std::string cache_key;
};

class ExecutionProvider {
 public:
  virtual ~ExecutionProvider() = default;

  // The ONNX Runtime-compatible long name, "CPUExecutionProvider".
  virtual std::string name() const = 0;
  // The short alias users type, "cpu".
  virtual std::string short_name() const = 0;
  virtual Availability availability() const = 0;
  virtual Device device() const = 0;
  virtual Allocator* allocator() = 0;

  // For each candidate, whether this provider can run it, or the reason it
  // cannot. Creates nothing. Called once per session with the nodes no
  // provider ahead of this one took (and again for a node whose kernel a
  // provider ahead failed to create).
  virtual std::vector<NodeSupport> capability(const Graph& graph, std::span<const NodeId> candidates) = 0;

  // After placement: the names of the provider rewrites
  // (optimizer/provider_rewrites.h) its kernels implement, which run on the
  // nodes placed on it. None by default.
  virtual std::vector<std::string> rewrites() const { return {}; }
  // After placement, before the rewrites and at every optimization level:
  // makes the nodes placed on it (`placement`, its index in the chain) into
  // what its kernels run, where capability() claimed a node on that
  // promise (the CPU widens float16 nodes it has float kernels for). New
  // nodes are placed on it too. Nothing by default.
  virtual Status adapt_placed_nodes(Graph& graph, int placement) {
    (void)graph;
    (void)placement;
    return ok_status();
  }

  // The kernel for a node placed on this provider (after its rewrites, so
  // possibly a fused op it asked for). An error declines the node after
  // all; it then goes to the next provider with that error as the reason.
  // `subgraphs`: the compiled bodies of the graph's control-flow nodes
  // (If, Loop, Scan), for the kernels that run them.
  virtual Result<CreatedKernel> create_kernel(const Graph& graph, NodeId node,
                                              const CompiledSubgraphMap& subgraphs) = 0;

  // Optional, for providers that build one engine per partition: one
  // kernel that runs all of `partition`'s nodes, reading its inputs and
  // writing its outputs in their order. NotImplemented declines: its nodes
  // then get a kernel each from create_kernel.
  virtual bool compiles_partitions() const { return false; }
  virtual Result<CreatedKernel> compile(const Graph& graph, const PartitionToCompile& partition);
  // Part of compile()'s cache key.
  virtual std::string version() const { return {}; }

  // Copies between this provider's device and host memory. `dst` is already
  // allocated with src's dtype and shape. The CPU provider never needs them.
  virtual Status copy_to_host(const Tensor& src, Tensor& dst) const;
  virtual Status copy_from_host(const Tensor& src, Tensor& dst) const;
  // A copy within this provider's device.
  virtual Status copy_on_device(const Tensor& src, Tensor& dst) const;

  // Waits for work the provider queued asynchronously (a GPU stream); the
  // session calls it at the end of a run. Host providers have nothing to wait for.
  virtual Status synchronize() { return ok_status(); }
  // Whether the partitioner keeps shape arithmetic (Shape and the integer
  // math on its result) away from this provider and lets host nodes read
  // only the shape of its tensors without a copy. True for device plugins;
  // the test-only simulated provider keeps the plain rules.
  virtual bool keeps_shape_math_on_host() const { return false; }
  // The options it accepts, "key (values)", and the libraries it opens at
  // run time ("libcudnn.so.9 or libcudnn.so.8"), as it states them: what
  // doctor lists. Empty when it says nothing.
  virtual std::vector<std::string> option_specs() const { return {}; }
  virtual std::vector<std::string> required_libraries() const { return {}; }
  // Facts for doctor and logs, one per line (device, memory, library
  // versions); empty when there is nothing to add.
  virtual std::string describe() const { return {}; }
};

// A provider whose answers come from a KernelRegistry: capability finds the
// def and checks types; create_kernel runs the def's factory, whose
// failures (an attribute it does not handle) decline the node after all.
class RegistryProvider : public ExecutionProvider {
 public:
  std::vector<NodeSupport> capability(const Graph& graph, std::span<const NodeId> candidates) override;
  Result<CreatedKernel> create_kernel(const Graph& graph, NodeId node, const CompiledSubgraphMap& subgraphs) override;
  const KernelRegistry& registry() const { return registry_; }

 protected:
  // A node the registry could run but this provider chooses not to (a GPU
  // provider leaving shape arithmetic on the CPU): return a reason, or an
  // empty string to go ahead.
  virtual std::string decline_reason(const Graph& graph, const Node& node) const;
  KernelRegistry registry_;
};

}  // namespace sy
