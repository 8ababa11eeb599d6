#include "model/resolve.h"

#include <algorithm>
#include <memory>

#include "model/saver.h"
#include "model/version_adapter.h"
#include "schema/fused.h"
#include "schema/op_versions.h"
#include "schema/schema.h"
#include "schema/type_constraints.h"

namespace sy {
namespace {

Status check_opsets(const Graph& graph) {
  for (const auto& [domain, version] : graph.opsets) {
    const std::string_view d = normalize_domain(domain);
    const int newest = newest_opset(d);
    if (newest == 0) continue;  // a custom domain: its ops are checked one by one
    if (version > newest)
      return not_implemented("the model uses opset " + std::to_string(version) + " of domain '" +
                             (d.empty() ? std::string("ai.onnx") : std::string(d)) +
                             "', newer than the newest this build supports (" + std::to_string(newest) + ")");
  }
  return ok_status();
}

// A com.switchyard node read from a file that save_model() wrote under an
// ai.onnx op name: an op the model's ai.onnx opset could not express (a
// Gelu in an opset-17 model). It becomes that op again, at the model's
// opset or, for an op newer than it, at the op's first version.
Status resolve_saved_onnx_node(const Graph& graph, Node& node) {
  const int first = first_op_version("", node.op_type);
  if (first == 0)
    return not_implemented(node.describe() + ": unknown op '" + node.op_type + "' in domain '" + kSavedFusedDomain +
                           "' (it has FusedConv and FusedMatMul, and Switchyard writes ai.onnx op names there)");
  node.domain.clear();
  node.since_version = resolve_op_version("", node.op_type, std::max<int64_t>(graph.opset(""), first));
  return ok_status();
}

// The spec's word for an attribute type (Changelog.md's "#### Attributes"
// blocks, as tools/gen_op_versions.py copies them).
std::string_view spec_type_word(AttributeType type) {
  switch (type) {
    case AttributeType::kFloat: return "float";
    case AttributeType::kInt: return "int";
    case AttributeType::kString: return "string";
    case AttributeType::kTensor: return "tensor";
    case AttributeType::kGraph: return "graph";
    case AttributeType::kFloats: return "floats";
    case AttributeType::kInts: return "ints";
    case AttributeType::kStrings: return "strings";
    case AttributeType::kTensors: return "tensors";
    case AttributeType::kGraphs: return "graphs";
    case AttributeType::kSparseTensor: return "sparse_tensor";
    case AttributeType::kTypeProto: return "type_proto";
    case AttributeType::kTypeProtos: return "type_protos";
    case AttributeType::kUndefined: break;
  }
  return "undefined";
}

// An attribute the spec does not list may be a typo, or one from a newer
// op version, that would be ignored and compute something else in silence;
// so would one of another type than the spec's (LeakyRelu's alpha given as
// an int reads as absent, and the kernel takes the default). Unknown names
// may be allowed by a session option; a wrong type never is.
Status check_attributes(const Node& node, const OpVersion& version, bool allow_unknown) {
  const std::string op_version = node.op_type + "-" + std::to_string(version.since_version);
  for (const Attribute& a : node.attributes) {
    const std::string_view want = listed_attribute_type(version, a.name);
    if (want.empty()) {
      if (allow_unknown) continue;
      const std::string accepted = listed_attribute_names(version);
      return invalid_graph(node.describe() + ": unknown attribute '" + a.name + "' for " + op_version +
                           " of domain '" + node.domain_name() + "' (" +
                           (accepted.empty() ? std::string("it takes no attributes") : "it takes " + accepted) +
                           "); session config '" + kAllowUnknownAttributesKey + "' = '1' ignores such attributes");
    }
    const std::string_view got = spec_type_word(a.type);
    const char* source = node.domain == kSwitchyardDomain ? " in its schema (schema/fused.cc)" : " in the ONNX spec";
    if (got != want)
      return invalid_graph(node.describe() + ": attribute '" + a.name + "' of " + op_version + " has type " +
                           std::string(want) + source + "; the model gives it as " + std::string(got));
  }
  return ok_status();
}

Status resolve_versions(Graph& graph, const ResolveOptions& options) {
  for (Node& node : graph.nodes) {
    if (node.removed) continue;
    // Nodes Switchyard inserts itself (device copies, fused ops) carry
    // their version already; loaded ones do not.
    if (node.domain == kSwitchyardDomain && node.since_version != 0) continue;
    // An ai.onnx op save_model() wrote in com.switchyard becomes an ai.onnx
    // node again, checked as one; the domain's own ops (FusedConv ...) are
    // resolved against its import like any other domain's, below.
    if (node.domain == kSavedFusedDomain && first_op_version(kSwitchyardDomain, node.op_type) == 0) {
      SY_RETURN_IF_ERROR(resolve_saved_onnx_node(graph, node));
      const OpVersion* spec = find_op_version("", node.op_type, node.since_version);
      if (spec != nullptr) SY_RETURN_IF_ERROR(check_attributes(node, *spec, options.allow_unknown_attributes));
      continue;
    }
    const std::string domain(normalize_domain(node.domain));
    const int64_t opset = graph.opset(domain);
    const std::string domain_name = domain.empty() ? "ai.onnx" : domain;
    if (opset == 0 && !graph.opsets.count(domain) && (graph.parent == nullptr))
      return invalid_graph(node.describe() + ": domain '" + domain_name + "' is not imported by the model's opset_import");
    const int version = resolve_op_version(domain, node.op_type, opset);
    if (version == 0) {
      const int first = first_op_version(domain, node.op_type);
      if (first == 0)
        return not_implemented(node.describe() + ": unknown op '" + node.op_type + "' in domain '" + domain_name +
                               "' (opset " + std::to_string(opset) + ")");
      return invalid_graph(node.describe() + ": op '" + node.op_type + "' does not exist at opset " +
                           std::to_string(opset) + " of domain '" + domain_name + "' (it first appears in opset " +
                           std::to_string(first) + ")");
    }
    node.since_version = version;
    const OpVersion* spec = find_op_version(domain, node.op_type, version);
    if (spec != nullptr) SY_RETURN_IF_ERROR(check_attributes(node, *spec, options.allow_unknown_attributes));
    for (Attribute& a : node.attributes) {
      if (a.g) SY_RETURN_IF_ERROR(resolve_versions(*a.g, options));
      for (auto& g : a.graphs) SY_RETURN_IF_ERROR(resolve_versions(*g, options));
    }
  }
  return ok_status();
}

// Combines a value's declared type (value_info, graph outputs) with the
// inferred one. The declared type fills in what inference cannot derive
// (symbolic dims); where the two contradict, inference wins: it follows the
// op's semantics, while a stale value_info would make later passes (Shape
// folding, memory planning) act on a shape the value never has.
void merge_inferred(ValueType& declared, ValueType inferred) {
  if (inferred.kind == ValueType::Kind::kUnknown) return;
  if (declared.kind == ValueType::Kind::kUnknown || declared.kind != inferred.kind) {
    declared = std::move(inferred);
    return;
  }
  if (inferred.dtype != DataType::kUndefined) declared.dtype = inferred.dtype;
  // A sequence's or optional's element merges the same way.
  if (inferred.element != nullptr) {
    if (declared.element == nullptr) {
      declared.element = std::move(inferred.element);
    } else {
      auto element = std::make_shared<ValueType>(*declared.element);
      merge_inferred(*element, *inferred.element);  // copied: the element may be shared
      declared.element = std::move(element);
    }
  }
  if (!inferred.has_shape) return;
  if (!declared.has_shape || declared.dims.size() != inferred.dims.size()) {
    declared.has_shape = true;
    declared.dims = std::move(inferred.dims);
    return;
  }
  for (size_t i = 0; i < declared.dims.size(); ++i) {
    const Dim& d = declared.dims[i];
    const Dim& n = inferred.dims[i];
    if (n.is_known() || (!d.is_known() && !d.is_symbolic())) declared.dims[i] = n;
  }
}

// A subgraph's outer-scope values carry the types the loader copied from
// the enclosing graph, before inference gave that graph's intermediates
// theirs; the body is inferred with the enclosing graph's current types.
void refresh_outer_scope_types(const Graph& enclosing, Graph& body) {
  for (Value& v : body.values) {
    if (!v.is_outer_scope) continue;
    const ValueId outer = enclosing.find_value(v.name);
    if (outer == kNoValue) continue;
    const ValueType& t = enclosing.values[static_cast<size_t>(outer)].type;
    if (t.kind != ValueType::Kind::kUnknown) v.type = t;
  }
}

}  // namespace

Status infer_types(Graph& graph) {
  SY_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.topological_order());
  std::vector<ValueType> outputs;
  for (NodeId id : order) {
    // An opset 1-6 node becomes the version the kernels run, now that its
    // inputs' types are known (it may add a node: references into
    // graph.nodes are taken after).
    SY_RETURN_IF_ERROR(adapt_old_version(graph, id));
    Node& node = graph.nodes[static_cast<size_t>(id)];
    const OpSchema* schema = find_schema(node.domain, node.op_type, node.since_version);
    for (Attribute& a : node.attributes) {
      if (a.g) {
        refresh_outer_scope_types(graph, *a.g);
        if (schema != nullptr && schema->seed_body != nullptr) schema->seed_body(graph, node, a.name, *a.g);
        SY_RETURN_IF_ERROR(infer_types(*a.g).with_context(node.describe() + " " + a.name));
      }
      for (auto& g : a.graphs) {
        refresh_outer_scope_types(graph, *g);
        SY_RETURN_IF_ERROR(infer_types(*g).with_context(node.describe() + " " + a.name));
      }
    }
    // The spec's type constraints, before inference reads the inputs as the
    // types it expects (an op without a schema here is still checked).
    const OpVersion* spec = find_op_version(normalize_domain(node.domain), node.op_type, node.since_version);
    if (spec != nullptr) SY_RETURN_IF_ERROR(check_input_types(graph, node, *spec));
    if (schema == nullptr || schema->infer == nullptr) continue;
    const auto n_in = static_cast<int>(node.inputs.size());
    const auto n_out = static_cast<int>(node.outputs.size());
    const int max_inputs = schema->max_inputs;
    if (n_in < schema->min_inputs || (max_inputs >= 0 && n_in > max_inputs))
      return invalid_graph(node.describe() + ": has " + std::to_string(n_in) + " inputs, expected " +
                           std::to_string(schema->min_inputs) +
                           (max_inputs < 0 ? " or more" : " to " + std::to_string(max_inputs)));
    if (n_out < schema->min_outputs || (schema->max_outputs >= 0 && n_out > schema->max_outputs))
      return invalid_graph(node.describe() + ": has " + std::to_string(n_out) + " outputs, expected " +
                           std::to_string(schema->min_outputs) +
                           (schema->max_outputs < 0 ? " or more" : " to " + std::to_string(schema->max_outputs)));
    outputs.assign(node.outputs.size(), ValueType{});
    InferenceContext ctx(graph, node, outputs);
    SY_RETURN_IF_ERROR(schema->infer(ctx));
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == kNoValue) continue;
      merge_inferred(graph.values[static_cast<size_t>(node.outputs[i])].type, std::move(outputs[i]));
    }
  }
  return ok_status();
}

Result<ResolveOptions> resolve_options_from_config(const std::map<std::string, std::string>& config) {
  ResolveOptions options;
  auto it = config.find(kAllowUnknownAttributesKey);
  if (it == config.end()) return options;
  if (it->second != "0" && it->second != "1")
    return invalid_argument(std::string("session config '") + kAllowUnknownAttributesKey + "' is '" + it->second +
                            "'; accepted: '0' or '1'");
  options.allow_unknown_attributes = it->second == "1";
  return options;
}

Status resolve(Graph& graph, const ResolveOptions& options) {
  graph.link_subgraph_inputs();
  SY_RETURN_IF_ERROR(check_opsets(graph));
  SY_RETURN_IF_ERROR(resolve_versions(graph, options));
  return infer_types(graph);
}

}  // namespace sy
