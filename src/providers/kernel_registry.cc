#include "providers/kernel_registry.h"

#include "schema/op_versions.h"

namespace sy {

void KernelRegistry::add(std::span<const KernelDef> defs) { defs_.insert(defs_.end(), defs.begin(), defs.end()); }

std::string describe_type_mask(uint64_t mask) {
  std::string s;
  for (int t = 1; t <= kMaxDataTypeValue; ++t) {
    if ((mask & (uint64_t{1} << t)) == 0) continue;
    if (!s.empty()) s += ", ";
    s += data_type_name(static_cast<DataType>(t));
  }
  return s;
}

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
  const KernelDef* def = find_by_type(graph, node, reason);
  if (def == nullptr || def->accepts_containers) return def;
  const int c = container_input(graph, node);
  if (c < 0) return def;
  reason = "input " + std::to_string(c) + " is a " +
           graph.values[static_cast<size_t>(node.inputs[static_cast<size_t>(c)])].type.type_string() +
           "; this kernel takes tensors only";
  return nullptr;
}

const KernelDef* KernelRegistry::find_by_type(const Graph& graph, const Node& node, std::string& reason) const {
  const std::string_view domain = normalize_domain(node.domain);
  bool op_known = false;
  std::string versions;
  const KernelDef* version_match = nullptr;
  for (const KernelDef& d : defs_) {
    if (d.domain != domain || d.op_type != node.op_type) continue;
    op_known = true;
    if (node.since_version < d.since_version || node.since_version > d.end_version) {
      if (!versions.empty()) versions += ", ";
      versions += std::to_string(d.since_version) +
                  (d.end_version >= kLatestVersion ? "+" : "-" + std::to_string(d.end_version));
      continue;
    }
    version_match = &d;
    if (d.type_input < 0) return &d;
    if (!node.has_input(static_cast<size_t>(d.type_input))) return &d;
    const ValueType& t = graph.values[static_cast<size_t>(node.inputs[static_cast<size_t>(d.type_input)])].type;
    if (t.dtype == DataType::kUndefined) return &d;  // type unknown until run time
    if (d.type_mask & type_bit(t.dtype)) return &d;
  }
  if (!op_known) {
    reason = "op " + node.op_type + " not implemented";
    return nullptr;
  }
  if (version_match == nullptr) {
    reason = node.op_type + " version " + std::to_string(node.since_version) + " not implemented (have " + versions + ")";
    return nullptr;
  }
  const auto type_input = static_cast<size_t>(version_match->type_input);
  const ValueType& t = graph.values[static_cast<size_t>(node.inputs[type_input])].type;
  std::string supported;
  for (const KernelDef& d : defs_)
    if (d.domain == domain && d.op_type == node.op_type && node.since_version >= d.since_version &&
        node.since_version <= d.end_version)
      supported += (supported.empty() ? "" : ", ") + describe_type_mask(d.type_mask);
  reason = std::string(data_type_name(t.dtype)) + " not supported for input " + std::to_string(type_input) +
           " (supports " + supported + ")";
  return nullptr;
}

}  // namespace sy
