// A provider's kernel table and its lookup: the row that runs a node, or
// the reason none does. Part of the provider SDK (see axis.h). The lookup
// is written once, generic over the row type, and the core's CPU registry
// (src/providers/kernel_registry.cc) uses it too, so every provider
// declines a node in the same words: "op Foo not implemented", "Relu
// version 9 not implemented (have 13+)", "float16 not supported for input
// 0 (supports float, double)".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "switchyard/provider_sdk/dtype.h"
#include "switchyard/provider_sdk/kernel.h"
#include "switchyard/provider_sdk/node_info.h"

namespace sy::provider_sdk {

// A row's end_version when it covers every later version of the op.
inline constexpr int kLatestVersion = 1 << 30;

// One row of a provider's kernel table.
template <typename Info, typename Context>
struct BasicKernelRow {
  const char* domain;  // "" for ai.onnx
  const char* op_type;
  int since_version;  // first op version the kernel runs
  int end_version;    // last, inclusive (kLatestVersion: open-ended)
  int type_input;     // the input whose dtype must be in type_mask; -1 for none
  uint64_t type_mask;  // type_bit(DataType::kFloat) | ...
  // Bit i: input i is read from host memory (a shape argument), so the
  // core leaves it there or copies it there.
  uint64_t host_inputs;
  BasicKernelFactory<Info, Context> create;
};
using KernelRow = BasicKernelRow<NodeInfo, RunContext>;

// What the lookup reads of a node besides its input types.
struct KernelQuery {
  std::string_view domain;  // "" or "ai.onnx" for the standard ops
  std::string_view op_type;
  int since_version;  // the version of the op's schema the node resolved to
};

// The first row of `rows` for the node's domain, op and version whose
// type_input has a dtype in its type_mask, or null with `reason` set.
// Row is any struct with the fields domain, op_type, since_version,
// end_version, type_input and type_mask of BasicKernelRow (the core's
// KernelDef is one). input_dtype(i) gives input i's dtype number, 0 when
// the input is omitted or its type is unknown until run time: such a row
// is taken, the kernel checks at run time.
template <typename Row, typename InputDtype>
const Row* find_kernel(std::span<const Row> rows, const KernelQuery& node, InputDtype&& input_dtype,
                       std::string& reason) {
  const std::string_view domain = node.domain == "ai.onnx" ? std::string_view() : node.domain;
  bool op_known = false;
  std::string versions;  // of the op's rows for other versions: "1-12, 13+"
  const Row* version_match = nullptr;
  for (const Row& row : rows) {
    if (std::string_view(row.domain) != domain || std::string_view(row.op_type) != node.op_type) continue;
    op_known = true;
    if (node.since_version < row.since_version || node.since_version > row.end_version) {
      // Appended piece by piece: GCC 12 warns (-Wrestrict, its bug 105329)
      // about "-" + std::string at -O3, which a plugin may build with.
      if (!versions.empty()) versions += ", ";
      versions += std::to_string(row.since_version);
      if (row.end_version >= kLatestVersion) {
        versions += "+";
      } else {
        versions += "-";
        versions += std::to_string(row.end_version);
      }
      continue;
    }
    version_match = &row;
    if (row.type_input < 0) return &row;
    const int32_t dtype = input_dtype(row.type_input);
    if (dtype == 0 || (dtype < 64 && (row.type_mask & (uint64_t{1} << dtype)) != 0)) return &row;
  }
  if (!op_known) {
    reason = "op " + std::string(node.op_type) + " not implemented";
    return nullptr;
  }
  if (version_match == nullptr) {
    reason = std::string(node.op_type) + " version " + std::to_string(node.since_version) + " not implemented (have " +
             versions + ")";
    return nullptr;
  }
  // Every row for this version declined the type: list what they take.
  std::string supported;
  for (const Row& row : rows)
    if (std::string_view(row.domain) == domain && std::string_view(row.op_type) == node.op_type &&
        node.since_version >= row.since_version && node.since_version <= row.end_version)
      supported += (supported.empty() ? "" : ", ") + describe_type_mask(row.type_mask);
  const int type_input = version_match->type_input;
  reason = std::string(dtype_name(input_dtype(type_input))) + " not supported for input " +
           std::to_string(type_input) + " (supports " + supported + ")";
  return nullptr;
}

// The same for a node read through the host's table.
template <typename Row>
const Row* find_kernel(std::span<const Row> rows, const NodeInfo& node, std::string& reason) {
  const std::string domain = node.domain(), op_type = node.op_type();
  return find_kernel(rows, KernelQuery{domain, op_type, node.since_version()},
                     [&node](int i) { return node.input_dtype(i); }, reason);
}

}  // namespace sy::provider_sdk
