// Every op version the ONNX spec defines (op_versions.inc, generated).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace sy {

struct OpVersion {
  std::string_view domain;  // "" for ai.onnx
  std::string_view op_type;
  int since_version;
};

std::span<const OpVersion> all_op_versions();

// "ai.onnx" -> "", everything else unchanged.
std::string_view normalize_domain(std::string_view domain);

// The since_version of the op's definition in force at `opset`; 0 when the
// spec has no such op in that domain at that opset.
int resolve_op_version(std::string_view domain, std::string_view op_type, int64_t opset);

// The first version of the op, 0 if the spec never defines it.
int first_op_version(std::string_view domain, std::string_view op_type);

// Highest opset the spec data knows for a domain (ai.onnx: 28 today).
int newest_opset(std::string_view domain);

}  // namespace sy
