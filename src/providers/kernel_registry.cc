#include "providers/kernel_registry.h"

#include "switchyard/provider_sdk/kernel_table.h"

namespace sy {

void KernelRegistry::add(std::span<const KernelDef> defs) { defs_.insert(defs_.end(), defs.begin(), defs.end()); }

namespace {

// The first input that is a sequence or optional, or -1.
int container_input(const Graph& graph, const Node& node) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoValue) continue;
    const ValueType::Kind k = graph.values[static_cast<size_t>(node.inputs[i])].type.kind;
    if (k != ValueType::Kind::kTensor && k != ValueType::Kind::kUnknown) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

const KernelDef* KernelRegistry::find(const Graph& graph, const Node& node, std::string& reason) const {
  return find_impl(graph, node, false, reason);
}

const KernelDef* KernelRegistry::find_widened(const Graph& graph, const Node& node, std::string& reason) const {
  return find_impl(graph, node, true, reason);
}

const KernelDef* KernelRegistry::find_impl(const Graph& graph, const Node& node, bool widen_half,
                                           std::string& reason) const {
  // The provider SDK's lookup, so that the CPU and the plugins decline a
  // node in the same words.
  static_assert(kLatestVersion == provider_sdk::kLatestVersion);
  auto input_dtype = [&](int i) -> int32_t {
    const auto input = static_cast<size_t>(i);
    if (!node.has_input(input)) return 0;
    DataType t = graph.values[static_cast<size_t>(node.inputs[input])].type.dtype;
    if (widen_half && (t == DataType::kFloat16 || t == DataType::kBfloat16)) t = DataType::kFloat;
    return static_cast<int32_t>(t);
  };
  const KernelDef* def = provider_sdk::find_kernel(std::span<const KernelDef>(defs_),
                                                   {node.domain, node.op_type, node.since_version}, input_dtype, reason);
  if (def == nullptr || def->accepts_containers) return def;
  const int c = container_input(graph, node);
  if (c < 0) return def;
  reason = "input " + std::to_string(c) + " is a " +
           graph.values[static_cast<size_t>(node.inputs[static_cast<size_t>(c)])].type.type_string() +
           "; this kernel takes tensors only";
  return nullptr;
}

}  // namespace sy
