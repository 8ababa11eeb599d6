#include "model/saver.h"

#include <algorithm>
#include <climits>
#include <map>
#include <string_view>

#include "core/mapped_file.h"
#include "model/tensor_proto.h"
#include "onnx/onnx_pb.h"

namespace sy {
namespace {

void write_shape(const ValueType& t, onnx::TensorShapeProto* shape) {
  for (const Dim& d : t.dims) {
    auto* dim = shape->add_dim();
    if (d.is_known()) dim->set_dim_value(d.value);
    else if (d.is_symbolic()) dim->set_dim_param(d.symbol);
    // an unknown dim stays empty
  }
}

void write_type(const ValueType& t, onnx::TypeProto* out) {
  switch (t.kind) {
    case ValueType::Kind::kTensor: {
      auto* tensor = out->mutable_tensor_type();
      tensor->set_elem_type(static_cast<int32_t>(t.dtype));
      if (t.has_shape) write_shape(t, tensor->mutable_shape());
      break;
    }
    case ValueType::Kind::kSparseTensor: {
      auto* tensor = out->mutable_sparse_tensor_type();
      tensor->set_elem_type(static_cast<int32_t>(t.dtype));
      if (t.has_shape) write_shape(t, tensor->mutable_shape());
      break;
    }
    case ValueType::Kind::kSequence: {
      auto* seq = out->mutable_sequence_type();
      if (t.element) write_type(*t.element, seq->mutable_elem_type());
      break;
    }
    case ValueType::Kind::kOptional: {
      auto* opt = out->mutable_optional_type();
      if (t.element) write_type(*t.element, opt->mutable_elem_type());
      break;
    }
    case ValueType::Kind::kMap: {
      auto* map = out->mutable_map_type();
      map->set_key_type(static_cast<int32_t>(t.dtype));
      if (t.element) write_type(*t.element, map->mutable_value_type());
      break;
    }
    case ValueType::Kind::kUnknown: break;
  }
}

// True when the type says enough for a value_info (the checker refuses a
// tensor type without an element type).
bool writable_type(const ValueType& t) {
  if (t.kind == ValueType::Kind::kUnknown) return false;
  if ((t.kind == ValueType::Kind::kTensor || t.kind == ValueType::Kind::kSparseTensor) &&
      t.dtype == DataType::kUndefined)
    return false;
  return true;
}

// The loader keeps TYPE_PROTO attributes as their spelling ("tensor(float)",
// "seq(tensor(int64))", ValueType::type_string()); this writes it back.
bool write_type_string(std::string_view s, onnx::TypeProto* out) {
  ValueType t;
  if (!parse_type_string(s, t)) return false;
  write_type(t, out);
  return true;
}

class GraphWriter {
 public:
  explicit GraphWriter(int64_t onnx_opset) : onnx_opset_(onnx_opset) {}

  Status write(const Graph& g, const std::vector<std::pair<ValueId, Tensor>>& overridable, onnx::GraphProto* out);
  bool used_fused_domain() const { return used_fused_domain_; }

 private:
  std::string domain_for(const Node& node);
  Status write_node(const Node& node, const Graph& g, onnx::NodeProto* out);
  Status write_attribute(const Attribute& a, const std::string& where, onnx::AttributeProto* out);

  int64_t onnx_opset_;
  bool used_fused_domain_ = false;
};

std::string GraphWriter::domain_for(const Node& node) {
  if (node.domain == kSwitchyardDomain) used_fused_domain_ = true;  // FusedConv and the like
  if (!node.domain.empty()) return node.domain;
  if (node.since_version > onnx_opset_) {
    used_fused_domain_ = true;
    return kSavedFusedDomain;
  }
  return "";
}

Status GraphWriter::write_attribute(const Attribute& a, const std::string& where, onnx::AttributeProto* out) {
  out->set_name(a.name);
  switch (a.type) {
    case AttributeType::kFloat:
      out->set_type(onnx::AttributeProto::FLOAT);
      out->set_f(a.f);
      return ok_status();
    case AttributeType::kInt:
      out->set_type(onnx::AttributeProto::INT);
      out->set_i(a.i);
      return ok_status();
    case AttributeType::kString:
      out->set_type(onnx::AttributeProto::STRING);
      out->set_s(a.s);
      return ok_status();
    case AttributeType::kTensor:
      out->set_type(onnx::AttributeProto::TENSOR);
      return tensor_to_proto(a.t, "", out->mutable_t());
    case AttributeType::kGraph:
      out->set_type(onnx::AttributeProto::GRAPH);
      return write(*a.g, {}, out->mutable_g());
    case AttributeType::kFloats:
      out->set_type(onnx::AttributeProto::FLOATS);
      for (float f : a.floats) out->add_floats(f);
      return ok_status();
    case AttributeType::kInts:
      out->set_type(onnx::AttributeProto::INTS);
      for (int64_t i : a.ints) out->add_ints(i);
      return ok_status();
    case AttributeType::kStrings:
      out->set_type(onnx::AttributeProto::STRINGS);
      for (const std::string& s : a.strings) out->add_strings(s);
      return ok_status();
    case AttributeType::kTensors:
      out->set_type(onnx::AttributeProto::TENSORS);
      for (const Tensor& t : a.tensors) SY_RETURN_IF_ERROR(tensor_to_proto(t, "", out->add_tensors()));
      return ok_status();
    case AttributeType::kGraphs:
      out->set_type(onnx::AttributeProto::GRAPHS);
      for (const auto& g : a.graphs) SY_RETURN_IF_ERROR(write(*g, {}, out->add_graphs()));
      return ok_status();
    case AttributeType::kTypeProto:
      out->set_type(onnx::AttributeProto::TYPE_PROTO);
      if (!write_type_string(a.s, out->mutable_tp()))
        return not_implemented(where + ": cannot write type '" + a.s + "' back as a TypeProto");
      return ok_status();
    case AttributeType::kTypeProtos:
      out->set_type(onnx::AttributeProto::TYPE_PROTOS);
      for (const std::string& s : a.strings)
        if (!write_type_string(s, out->add_type_protos()))
          return not_implemented(where + ": cannot write type '" + s + "' back as a TypeProto");
      return ok_status();
    case AttributeType::kSparseTensor:
      // The loader made it dense; Constant(sparse_value), its only user, is
      // folded by the basic level.
      return not_implemented(where + " is a sparse tensor, which cannot be written back");
    case AttributeType::kUndefined: break;
  }
  return not_implemented(where + " has no type");
}

Status GraphWriter::write_node(const Node& node, const Graph& g, onnx::NodeProto* out) {
  out->set_name(node.name);
  out->set_op_type(node.op_type);
  const std::string domain = domain_for(node);
  if (!domain.empty()) out->set_domain(domain);
  auto name_of = [&](ValueId v) { return v == kNoValue ? std::string() : g.values[static_cast<size_t>(v)].name; };
  for (ValueId v : node.inputs) out->add_input(name_of(v));
  for (ValueId v : node.outputs) out->add_output(name_of(v));
  for (const Attribute& a : node.attributes)
    SY_RETURN_IF_ERROR(write_attribute(a, node.describe() + " attribute '" + a.name + "'", out->add_attribute()));
  return ok_status();
}

Status GraphWriter::write(const Graph& g, const std::vector<std::pair<ValueId, Tensor>>& overridable,
                          onnx::GraphProto* out) {
  out->set_name(g.name);
  if (!g.doc_string.empty()) out->set_doc_string(g.doc_string);
  auto add_value_info = [&](ValueId v, google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list) {
    const Value& value = g.values[static_cast<size_t>(v)];
    onnx::ValueInfoProto* info = list->Add();
    info->set_name(value.name);
    if (writable_type(value.type)) write_type(value.type, info->mutable_type());
  };
  for (ValueId v : g.inputs) add_value_info(v, out->mutable_input());

  // Initializers in value order, so the file does not depend on hashing.
  std::vector<std::pair<ValueId, const Tensor*>> constants;
  for (const auto& [v, t] : g.initializers) constants.emplace_back(v, &t);
  for (const auto& [v, t] : overridable) constants.emplace_back(v, &t);
  std::sort(constants.begin(), constants.end());
  for (const auto& [v, t] : constants) {
    const Value& value = g.values[static_cast<size_t>(v)];
    SY_RETURN_IF_ERROR(tensor_to_proto(*t, value.name, out->add_initializer()));
    // An input with a default value: listed among the inputs too.
    if (value.is_graph_input) add_value_info(v, out->mutable_input());
  }

  SY_ASSIGN_OR_RETURN(std::vector<NodeId> order, g.topological_order());
  for (NodeId id : order) SY_RETURN_IF_ERROR(write_node(g.nodes[static_cast<size_t>(id)], g, out->add_node()));

  for (size_t v = 0; v < g.values.size(); ++v) {
    const Value& value = g.values[v];
    const bool produced = value.producer != kNoNode && !g.nodes[static_cast<size_t>(value.producer)].removed;
    if (!produced || value.is_graph_output || !writable_type(value.type)) continue;
    add_value_info(static_cast<ValueId>(v), out->mutable_value_info());
  }
  for (ValueId v : g.outputs) add_value_info(v, out->mutable_output());
  return ok_status();
}

}  // namespace

Result<std::string> model_to_bytes(const Model& model, const Graph& graph,
                                   const std::vector<std::pair<ValueId, Tensor>>& overridable) {
  onnx::ModelProto proto;
  proto.set_ir_version(model.ir_version);
  if (!model.producer_name.empty()) proto.set_producer_name(model.producer_name);
  if (!model.producer_version.empty()) proto.set_producer_version(model.producer_version);
  if (!model.domain.empty()) proto.set_domain(model.domain);
  if (model.model_version != 0) proto.set_model_version(model.model_version);
  if (!model.doc_string.empty()) proto.set_doc_string(model.doc_string);
  for (const auto& [key, value] : model.metadata) {
    auto* p = proto.add_metadata_props();
    p->set_key(key);
    p->set_value(value);
  }

  auto onnx_opset = model.opsets.find("");
  GraphWriter writer(onnx_opset == model.opsets.end() ? 0 : onnx_opset->second);
  SY_RETURN_IF_ERROR(writer.write(graph, overridable, proto.mutable_graph()));

  // The model's imports, and those the optimizer added to the graph (the
  // com.switchyard domain of its fused ops).
  std::map<std::string, int64_t> opsets = model.opsets;
  for (const auto& [domain, version] : graph.opsets) opsets.emplace(domain, version);
  if (writer.used_fused_domain()) opsets.emplace(kSwitchyardDomain, kSwitchyardOpset);
  for (const auto& [domain, version] : opsets) {
    auto* op = proto.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }

  if (proto.ByteSizeLong() > static_cast<size_t>(INT_MAX))
    return not_implemented("the model is " + std::to_string(proto.ByteSizeLong()) +
                           " bytes; writing models over 2 GiB (external data) is not supported");
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) return fail("cannot serialize the model");
  return bytes;
}

Status save_model(const Model& model, const Graph& graph, const std::string& path,
                  const std::vector<std::pair<ValueId, Tensor>>& overridable) {
  SY_ASSIGN_OR_RETURN(std::string bytes, model_to_bytes(model, graph, overridable));
  return write_file(path, bytes);
}

}  // namespace sy
