#include "providers/provider.h"

#include <cstring>

namespace sy {

namespace {

// The default copies, for providers whose device memory is host memory.
// Each direction has its own override point; neither calls the other, so
// a provider that overrides one never has it used for the other direction.
Status host_memory_copy(const ExecutionProvider& p, const Tensor& src, Tensor& dst, const char* what) {
  if (src.byte_size() != dst.byte_size())
    return invalid_argument(p.name() + " " + what + ": size mismatch, " + src.describe() + " vs " + dst.describe());
  if (src.dtype() == DataType::kString) return not_implemented(p.name() + " cannot copy string tensors");
  if (src.byte_size() > 0) std::memcpy(dst.raw_data(), src.raw_data(), src.byte_size());
  return ok_status();
}

}  // namespace

Status ExecutionProvider::copy_to_host(const Tensor& src, Tensor& dst) const {
  return host_memory_copy(*this, src, dst, "copy_to_host");
}

Status ExecutionProvider::copy_from_host(const Tensor& src, Tensor& dst) const {
  return host_memory_copy(*this, src, dst, "copy_from_host");
}

Status ExecutionProvider::copy_on_device(const Tensor& src, Tensor& dst) const {
  return host_memory_copy(*this, src, dst, "copy_on_device");
}

Result<CreatedKernel> ExecutionProvider::compile(const Graph&, const PartitionToCompile&) {
  return not_implemented(name() + " does not compile partitions");
}

std::string RegistryProvider::decline_reason(const Graph&, const Node&) const { return {}; }

std::vector<NodeSupport> RegistryProvider::capability(const Graph& graph, std::span<const NodeId> candidates) {
  std::vector<NodeSupport> answers;
  answers.reserve(candidates.size());
  for (NodeId id : candidates) {
    NodeSupport a;
    a.node = id;
    const Node& node = graph.nodes[static_cast<size_t>(id)];
    a.reason = decline_reason(graph, node);
    if (a.reason.empty()) a.supported = registry_.find(graph, node, a.reason) != nullptr;
    answers.push_back(std::move(a));
  }
  return answers;
}

Result<CreatedKernel> RegistryProvider::create_kernel(const Graph& graph, NodeId id,
                                                      const CompiledSubgraphMap& subgraphs) {
  const Node& node = graph.nodes[static_cast<size_t>(id)];
  std::string reason;
  const KernelDef* def = registry_.find(graph, node, reason);
  if (def == nullptr) return not_implemented(reason);
  KernelCreateContext ctx(graph, node, &subgraphs);
  SY_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, def->create(ctx));
  CreatedKernel created;
  created.kernel = std::move(kernel);
  created.prepacked_inputs = ctx.prepacked();
  return created;
}

}  // namespace sy
