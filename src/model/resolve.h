// resolve(): the step between loading and optimizing. For every node: the
// op version in force at the model's opset (unknown ops are errors naming
// node, domain and version), then type and shape inference in topological
// order, recursing into subgraphs. Attributes of standard ops (the domains
// the ONNX spec defines) must be ones the spec lists for that op version.
#pragma once

#include <map>
#include <string>

#include "model/graph.h"
#include "switchyard/status.h"

namespace sy {

// The session config key that sets ResolveOptions::allow_unknown_attributes.
inline constexpr const char* kAllowUnknownAttributesKey = "session.allow_unknown_attributes";

struct ResolveOptions {
  // Keep an attribute the spec does not list for the node's op version
  // instead of refusing the model (session config
  // "session.allow_unknown_attributes" = "1"). Kernels never read it.
  bool allow_unknown_attributes = false;
};

// The options a session's config asks for; a value other than "0" or "1"
// for a key above is an error.
Result<ResolveOptions> resolve_options_from_config(const std::map<std::string, std::string>& config);

Status resolve(Graph& graph, const ResolveOptions& options = {});

// Re-runs inference only (after a pass changed the graph).
Status infer_types(Graph& graph);

}  // namespace sy
