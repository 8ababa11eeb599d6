#include "model/loader.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/mapped_file.h"
#include "model/external_data.h"
#include "model/tensor_proto.h"
#include "onnx/onnx_pb.h"

#include <google/protobuf/io/zero_copy_stream.h>
#include <sys/mman.h>
#include <unistd.h>

namespace sy {

namespace {

// Smaller model files are read: a mapping costs more than it saves.
constexpr size_t kMapModelBytes = size_t{1} << 20;

std::string normalize_domain(const std::string& domain) { return domain == "ai.onnx" ? std::string() : domain; }

const char* model_field_name(uint64_t field) {
  switch (field) {
    case 1: return "ir_version";
    case 2: return "producer_name";
    case 3: return "producer_version";
    case 4: return "domain";
    case 5: return "model_version";
    case 6: return "doc_string";
    case 7: return "graph";
    case 8: return "opset_import";
    case 14: return "metadata_props";
    case 20: return "training_info";
    case 25: return "functions";
    default: return nullptr;
  }
}

bool read_varint(const uint8_t* p, size_t n, size_t& i, uint64_t& out) {
  out = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (i >= n) return false;
    const uint8_t b = p[i++];
    out |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

// After a failed parse: walks the top-level fields to tell a file cut short
// (a field running past the end) from bytes that are not protobuf at all.
// Empty when the top level looks whole.
std::string truncation_hint(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint64_t tag = 0;
    if (!read_varint(p, n, i, tag)) return "the last field header is cut off";
    const uint64_t field = tag >> 3;
    const char* field_name = model_field_name(field);
    const std::string label =
        "field " + std::to_string(field) + (field_name ? std::string(" (") + field_name + ")" : std::string());
    uint64_t v = 0;
    switch (tag & 7) {
      case 0:
        if (!read_varint(p, n, i, v)) return label + " is cut off";
        break;
      case 1:
        if (n - i < 8) return label + " is cut off";
        i += 8;
        break;
      case 2:
        if (!read_varint(p, n, i, v)) return label + " is cut off";
        if (v > n - i)
          return label + " needs " + std::to_string(v) + " bytes but only " + std::to_string(n - i) + " remain";
        i += static_cast<size_t>(v);
        break;
      case 5:
        if (n - i < 4) return label + " is cut off";
        i += 4;
        break;
      default: return {};
    }
  }
  return {};
}

// Feeds a mapped file to the protobuf parser in chunks and gives back the
// pages it has finished with. The parser copies every byte into the
// ModelProto, so without this the file's pages and the copy are both
// resident at the end of the parse: twice the weights at the peak.
class ReleasingInputStream final : public google::protobuf::io::ZeroCopyInputStream {
 public:
  ReleasingInputStream(const uint8_t* data, size_t size) : data_(data), size_(size) {
    const long page = sysconf(_SC_PAGESIZE);
    page_ = page > 0 ? static_cast<size_t>(page) : 4096;
  }
  bool Next(const void** data, int* size) override {
    // Everything before pos_ has been consumed: the parser holds no pointer
    // into buffers it has moved past (BackUp only returns bytes of the last one).
    release_before(pos_);
    if (pos_ >= size_) return false;
    const size_t n = std::min(kChunk, size_ - pos_);
    *data = data_ + pos_;
    *size = static_cast<int>(n);
    pos_ += n;
    return true;
  }
  void BackUp(int count) override { pos_ -= static_cast<size_t>(count); }
  bool Skip(int count) override {
    if (static_cast<size_t>(count) > size_ - pos_) {
      pos_ = size_;
      return false;
    }
    pos_ += static_cast<size_t>(count);
    return true;
  }
  int64_t ByteCount() const override { return static_cast<int64_t>(pos_); }

 private:
  static constexpr size_t kChunk = size_t{8} << 20;
  void release_before(size_t end) {
    const auto base = reinterpret_cast<uintptr_t>(data_);
    const uintptr_t from = (base + released_ + page_ - 1) / page_ * page_;
    const uintptr_t to = (base + end) / page_ * page_;
    if (to <= from) return;
    // A private read-only mapping: dropped pages are read again from the
    // file if anything touches them later (an error message's hint).
    madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
    released_ = to - base;
  }
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  size_t released_ = 0;
  size_t page_ = 4096;
};

Status parse_model(const uint8_t* data, size_t size, const std::string& source, onnx::ModelProto* proto,
                   bool release_pages = false) {
  if (size > static_cast<size_t>(INT_MAX))
    return Status(StatusCode::kInvalidProtobuf,
                  source + " is " + std::to_string(size) +
                      " bytes; protobuf cannot parse a model over 2 GiB, so its weights must be stored as external data");
  bool parsed = false;
  if (release_pages) {
    ReleasingInputStream stream(data, size);
    parsed = proto->ParseFromZeroCopyStream(&stream);
  } else {
    parsed = proto->ParseFromArray(data, static_cast<int>(size));
  }
  if (!parsed) {
    const std::string hint = truncation_hint(data, size);
    if (!hint.empty())
      return Status(StatusCode::kInvalidProtobuf, source + " cannot be parsed as an ONNX model; it may be truncated: " +
                                                      hint + " (" + std::to_string(size) + " bytes in all)");
    return Status(StatusCode::kInvalidProtobuf,
                  source + " is not an ONNX model (protobuf parsing failed; the file may be corrupt or truncated)");
  }
  if (size == 0) return Status(StatusCode::kInvalidProtobuf, source + " is empty, not an ONNX model");
  if (!proto->has_graph())
    return Status(StatusCode::kInvalidProtobuf, source + " is not an ONNX model: it parses but has no graph");
  if (!proto->has_ir_version() || proto->ir_version() <= 0)
    return Status(StatusCode::kInvalidProtobuf,
                  source + " has no ir_version; an ONNX model must say which IR version it follows");
  // A newer IR may change what fields mean; reading it as an older one
  // could compute something else without a word.
  if (proto->ir_version() > kNewestIrVersion)
    return not_implemented(source + " has ir_version " + std::to_string(proto->ir_version()) +
                           ", newer than the newest this build supports (" + std::to_string(kNewestIrVersion) + ")");
  return ok_status();
}

// Converts one GraphProto and, through attributes, its subgraphs.
class GraphConverter {
 public:
  explicit GraphConverter(const ExternalDataResolver* resolver) : resolver_(resolver) {}

  // `scope` holds the enclosing graphs, outermost first.
  Result<std::shared_ptr<Graph>> convert(onnx::GraphProto& proto, std::vector<Graph*>& scope);

 private:
  Result<ValueType> convert_type(const onnx::TypeProto& type, const std::string& what) const;
  Result<Attribute> convert_attribute(onnx::AttributeProto& proto, const std::string& node_label,
                                      std::vector<Graph*>& scope);
  // The id of `name` in scope[level], importing it from an enclosing graph
  // (as an outer-scope value) when only an enclosing graph defines it.
  static ValueId find_or_import(std::vector<Graph*>& scope, size_t level, const std::string& name);

  const ExternalDataResolver* resolver_;
};

Result<ValueType> GraphConverter::convert_type(const onnx::TypeProto& type, const std::string& what) const {
  auto elem_type = [&](int32_t v) -> Result<DataType> {
    if (v == 0) return DataType::kUndefined;
    if (!is_valid_data_type(v))
      return not_implemented(what + ": element type " + std::to_string(v) + " is not supported by this build");
    return static_cast<DataType>(v);
  };
  auto shape_of = [&](const onnx::TensorShapeProto& shape, ValueType& out) -> Status {
    out.has_shape = true;
    for (const auto& d : shape.dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() < 0)
          return invalid_graph(what + ": negative dimension " + std::to_string(d.dim_value()) + " in its shape");
        out.dims.push_back(Dim::known(d.dim_value()));
      } else if (d.has_dim_param() && !d.dim_param().empty()) {
        out.dims.push_back(Dim::symbolic(d.dim_param()));
      } else {
        out.dims.push_back(Dim::unknown());
      }
    }
    return ok_status();
  };

  ValueType out;
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: {
      out.kind = ValueType::Kind::kTensor;
      SY_ASSIGN_OR_RETURN(out.dtype, elem_type(type.tensor_type().elem_type()));
      if (type.tensor_type().has_shape()) SY_RETURN_IF_ERROR(shape_of(type.tensor_type().shape(), out));
      break;
    }
    case onnx::TypeProto::kSparseTensorType: {
      out.kind = ValueType::Kind::kSparseTensor;
      SY_ASSIGN_OR_RETURN(out.dtype, elem_type(type.sparse_tensor_type().elem_type()));
      if (type.sparse_tensor_type().has_shape()) SY_RETURN_IF_ERROR(shape_of(type.sparse_tensor_type().shape(), out));
      break;
    }
    case onnx::TypeProto::kSequenceType: {
      out.kind = ValueType::Kind::kSequence;
      if (type.sequence_type().has_elem_type()) {
        SY_ASSIGN_OR_RETURN(ValueType e, convert_type(type.sequence_type().elem_type(), what));
        out.element = std::make_shared<ValueType>(std::move(e));
      }
      break;
    }
    case onnx::TypeProto::kOptionalType: {
      out.kind = ValueType::Kind::kOptional;
      if (type.optional_type().has_elem_type()) {
        SY_ASSIGN_OR_RETURN(ValueType e, convert_type(type.optional_type().elem_type(), what));
        out.element = std::make_shared<ValueType>(std::move(e));
      }
      break;
    }
    case onnx::TypeProto::kMapType: {
      out.kind = ValueType::Kind::kMap;
      // The key type goes in dtype, the value type in element.
      SY_ASSIGN_OR_RETURN(out.dtype, elem_type(type.map_type().key_type()));
      if (type.map_type().has_value_type()) {
        SY_ASSIGN_OR_RETURN(ValueType e, convert_type(type.map_type().value_type(), what));
        out.element = std::make_shared<ValueType>(std::move(e));
      }
      break;
    }
    default: break;  // unknown (or newer) kind: left for inference
  }
  return out;
}

ValueId GraphConverter::find_or_import(std::vector<Graph*>& scope, size_t level, const std::string& name) {
  Graph& g = *scope[level];
  ValueId id = g.find_value(name);
  if (id != kNoValue || level == 0) return id;
  const ValueId outer = find_or_import(scope, level - 1, name);
  if (outer == kNoValue) return kNoValue;
  ValueType type = scope[level - 1]->values[static_cast<size_t>(outer)].type;
  id = g.add_value(name, std::move(type));
  g.values[static_cast<size_t>(id)].is_outer_scope = true;
  return id;
}

Result<Attribute> GraphConverter::convert_attribute(onnx::AttributeProto& proto, const std::string& node_label,
                                                    std::vector<Graph*>& scope) {
  Attribute out;
  out.name = proto.name();
  const std::string what = node_label + " attribute '" + proto.name() + "'";
  if (proto.name().empty()) return invalid_graph(node_label + " has an attribute without a name");
  if (!proto.ref_attr_name().empty())
    return invalid_graph(what + " refers to function attribute '" + proto.ref_attr_name() +
                         "' (ref_attr_name), which is only meaningful inside a function body");

  auto type = proto.type();
  if (type == onnx::AttributeProto::UNDEFINED) {
    // IR version 1 had no type field: the field that is set says it.
    if (proto.has_f()) type = onnx::AttributeProto::FLOAT;
    else if (proto.has_i()) type = onnx::AttributeProto::INT;
    else if (proto.has_s()) type = onnx::AttributeProto::STRING;
    else if (proto.has_t()) type = onnx::AttributeProto::TENSOR;
    else if (proto.has_g()) type = onnx::AttributeProto::GRAPH;
    else if (proto.has_sparse_tensor()) type = onnx::AttributeProto::SPARSE_TENSOR;
    else if (proto.has_tp()) type = onnx::AttributeProto::TYPE_PROTO;
    else if (proto.floats_size() > 0) type = onnx::AttributeProto::FLOATS;
    else if (proto.ints_size() > 0) type = onnx::AttributeProto::INTS;
    else if (proto.strings_size() > 0) type = onnx::AttributeProto::STRINGS;
    else if (proto.tensors_size() > 0) type = onnx::AttributeProto::TENSORS;
    else if (proto.graphs_size() > 0) type = onnx::AttributeProto::GRAPHS;
    else if (proto.type_protos_size() > 0) type = onnx::AttributeProto::TYPE_PROTOS;
    else return invalid_graph(what + " has no type and no value");
  }

  auto subgraph = [&](onnx::GraphProto& g, const std::string& label) -> Result<std::shared_ptr<Graph>> {
    auto r = convert(g, scope);
    if (!r.ok()) return r.status().with_context("in " + label);
    return r;
  };

  switch (type) {
    case onnx::AttributeProto::FLOAT:
      out.type = AttributeType::kFloat;
      out.f = proto.f();
      break;
    case onnx::AttributeProto::INT:
      out.type = AttributeType::kInt;
      out.i = proto.i();
      break;
    case onnx::AttributeProto::STRING:
      out.type = AttributeType::kString;
      out.s = proto.s();
      break;
    case onnx::AttributeProto::TENSOR: {
      out.type = AttributeType::kTensor;
      SY_ASSIGN_OR_RETURN(out.t, take_tensor_from_proto(*proto.mutable_t(), resolver_, what));
      break;
    }
    case onnx::AttributeProto::SPARSE_TENSOR: {
      out.type = AttributeType::kSparseTensor;
      SY_ASSIGN_OR_RETURN(out.t, tensor_from_sparse_proto(proto.sparse_tensor(), resolver_, what));
      break;
    }
    case onnx::AttributeProto::GRAPH: {
      out.type = AttributeType::kGraph;
      SY_ASSIGN_OR_RETURN(out.g, subgraph(*proto.mutable_g(), what));
      break;
    }
    case onnx::AttributeProto::FLOATS:
      out.type = AttributeType::kFloats;
      out.floats.assign(proto.floats().begin(), proto.floats().end());
      break;
    case onnx::AttributeProto::INTS:
      out.type = AttributeType::kInts;
      out.ints.assign(proto.ints().begin(), proto.ints().end());
      break;
    case onnx::AttributeProto::STRINGS:
      out.type = AttributeType::kStrings;
      out.strings.assign(proto.strings().begin(), proto.strings().end());
      break;
    case onnx::AttributeProto::TENSORS:
      out.type = AttributeType::kTensors;
      for (int k = 0; k < proto.tensors_size(); ++k) {
        SY_ASSIGN_OR_RETURN(Tensor t, take_tensor_from_proto(*proto.mutable_tensors(k), resolver_,
                                                             what + " tensor " + std::to_string(k)));
        out.tensors.push_back(std::move(t));
      }
      break;
    case onnx::AttributeProto::GRAPHS:
      out.type = AttributeType::kGraphs;
      for (int k = 0; k < proto.graphs_size(); ++k) {
        SY_ASSIGN_OR_RETURN(std::shared_ptr<Graph> g,
                            subgraph(*proto.mutable_graphs(k), what + " graph " + std::to_string(k)));
        out.graphs.push_back(std::move(g));
      }
      break;
    case onnx::AttributeProto::TYPE_PROTO: {
      // Attribute has no slot for a type; its spelling ("tensor(float)",
      // "seq(tensor(int64))") goes in `s`.
      out.type = AttributeType::kTypeProto;
      SY_ASSIGN_OR_RETURN(ValueType t, convert_type(proto.tp(), what));
      out.s = t.type_string();
      break;
    }
    case onnx::AttributeProto::TYPE_PROTOS:
      out.type = AttributeType::kTypeProtos;
      for (const auto& tp : proto.type_protos()) {
        SY_ASSIGN_OR_RETURN(ValueType t, convert_type(tp, what));
        out.strings.push_back(t.type_string());
      }
      break;
    default:
      return not_implemented(what + " has attribute type " + std::to_string(static_cast<int>(type)) +
                             ", which is not supported");
  }
  return out;
}

Result<std::shared_ptr<Graph>> GraphConverter::convert(onnx::GraphProto& proto, std::vector<Graph*>& scope) {
  auto g = std::make_shared<Graph>();
  g->name = proto.name();
  g->doc_string = proto.doc_string();
  g->parent = scope.empty() ? nullptr : scope.back();
  const bool is_main = scope.empty();
  scope.push_back(g.get());
  struct PopScope {
    std::vector<Graph*>& s;
    ~PopScope() { s.pop_back(); }
  } pop_scope{scope};
  const size_t level = scope.size() - 1;

  // How each value was defined, for duplicate-name errors.
  std::vector<std::string> origin;
  auto define = [&](const std::string& name, ValueType type, std::string how) -> Result<ValueId> {
    if (name.empty()) return invalid_graph(how + " has an empty name");
    const ValueId existing = g->find_value(name);
    if (existing != kNoValue)
      return invalid_graph("value name '" + name + "' is defined twice: as " + origin[static_cast<size_t>(existing)] +
                           " and as " + how);
    const ValueId id = g->add_value(name, std::move(type));
    origin.push_back(std::move(how));
    return id;
  };

  // Inputs that are also initializers are declared, with their types, by
  // the initializer (they are overridable initializers).
  std::unordered_set<std::string> initializer_names;
  for (const auto& t : proto.initializer()) initializer_names.insert(t.name());
  for (const auto& s : proto.sparse_initializer()) initializer_names.insert(s.values().name());
  std::unordered_map<std::string, const onnx::ValueInfoProto*> declared_inputs;

  for (const auto& in : proto.input()) {
    const std::string what = "graph input '" + in.name() + "'";
    if (initializer_names.count(in.name()) != 0) {
      if (!declared_inputs.emplace(in.name(), &in).second)
        return invalid_graph("value name '" + in.name() + "' is listed twice as a graph input");
      continue;
    }
    // Loop and Scan bodies often leave their inputs' types to inference.
    if (is_main && (!in.has_type() || in.type().value_case() == onnx::TypeProto::VALUE_NOT_SET))
      return invalid_graph(what + " has no type; every input of the main graph must declare one");
    SY_ASSIGN_OR_RETURN(ValueType type, convert_type(in.type(), what));
    SY_ASSIGN_OR_RETURN(ValueId id, define(in.name(), std::move(type), "a graph input"));
    g->values[static_cast<size_t>(id)].is_graph_input = true;
    g->inputs.push_back(id);
  }

  auto add_initializer = [&](const std::string& name, Tensor tensor) -> Status {
    ValueType type = ValueType::tensor(tensor.dtype(), tensor.shape());
    auto declared = declared_inputs.find(name);
    if (declared != declared_inputs.end() && declared->second->has_type()) {
      // The declared input type is the contract for values fed in its
      // place, so it wins over the initializer's exact shape.
      SY_ASSIGN_OR_RETURN(ValueType d, convert_type(declared->second->type(), "graph input '" + name + "'"));
      if (d.kind == ValueType::Kind::kTensor) {
        if (d.dtype != DataType::kUndefined && d.dtype != tensor.dtype())
          return invalid_graph("initializer '" + name + "' holds " + std::string(data_type_name(tensor.dtype())) +
                               " but the graph input of that name declares " + d.type_string());
        d.dtype = tensor.dtype();
        type = std::move(d);
      }
    }
    SY_ASSIGN_OR_RETURN(ValueId id, define(name, std::move(type), "an initializer"));
    Value& v = g->values[static_cast<size_t>(id)];
    v.is_initializer = true;
    v.is_graph_input = declared != declared_inputs.end();
    g->initializers.emplace(id, std::move(tensor));
    return ok_status();
  };
  for (int k = 0; k < proto.initializer_size(); ++k) {
    onnx::TensorProto& t = *proto.mutable_initializer(k);
    if (t.name().empty()) return invalid_graph("initializer #" + std::to_string(k) + " has no name");
    const std::string name = t.name();
    SY_ASSIGN_OR_RETURN(Tensor tensor, take_tensor_from_proto(t, resolver_, "initializer '" + name + "'"));
    SY_RETURN_IF_ERROR(add_initializer(name, std::move(tensor)));
  }
  for (int k = 0; k < proto.sparse_initializer_size(); ++k) {
    const onnx::SparseTensorProto& s = proto.sparse_initializer(k);
    const std::string& name = s.values().name();
    if (name.empty()) return invalid_graph("sparse initializer #" + std::to_string(k) + " has no name");
    SY_ASSIGN_OR_RETURN(Tensor tensor, tensor_from_sparse_proto(s, resolver_, "sparse initializer '" + name + "'"));
    SY_RETURN_IF_ERROR(add_initializer(name, std::move(tensor)));
  }

  // Every node output is defined before any input is looked up, so nodes
  // listed out of order still connect; topological_order() catches cycles.
  const int num_nodes = proto.node_size();
  std::vector<std::string> node_names(static_cast<size_t>(num_nodes));
  std::vector<std::vector<ValueId>> node_outputs(static_cast<size_t>(num_nodes));
  for (int k = 0; k < num_nodes; ++k) {
    const onnx::NodeProto& n = proto.node(k);
    if (n.op_type().empty()) return invalid_graph("node #" + std::to_string(k) + " has no op_type");
    std::string& name = node_names[static_cast<size_t>(k)];
    name = n.name().empty() ? n.op_type() + "_" + std::to_string(k) : n.name();
    for (int j = 0; j < n.output_size(); ++j) {
      ValueId id = kNoValue;
      if (!n.output(j).empty()) {
        SY_ASSIGN_OR_RETURN(id, define(n.output(j), {},
                                       "output " + std::to_string(j) + " of node '" + name + "' (" + n.op_type() + ")"));
      }
      node_outputs[static_cast<size_t>(k)].push_back(id);
    }
  }

  for (const auto& vi : proto.value_info()) {
    const ValueId id = g->find_value(vi.name());
    if (id == kNoValue || !vi.has_type()) continue;  // stale value_info is harmless
    Value& v = g->values[static_cast<size_t>(id)];
    if (v.type.kind != ValueType::Kind::kUnknown) continue;
    SY_ASSIGN_OR_RETURN(v.type, convert_type(vi.type(), "value_info '" + vi.name() + "'"));
  }

  for (int k = 0; k < num_nodes; ++k) {
    onnx::NodeProto& np = *proto.mutable_node(k);
    Node node;
    node.name = node_names[static_cast<size_t>(k)];
    node.op_type = np.op_type();
    node.domain = normalize_domain(np.domain());
    const std::string label = node.describe();
    for (int j = 0; j < np.input_size(); ++j) {
      const std::string& in = np.input(j);
      if (in.empty()) {
        node.inputs.push_back(kNoValue);
        continue;
      }
      const ValueId id = find_or_import(scope, level, in);
      if (id == kNoValue)
        return invalid_graph(label + " input " + std::to_string(j) + " '" + in +
                             "' is not defined: no graph input, initializer or node output has that name" +
                             (is_main ? "" : ", here or in an enclosing graph"));
      node.inputs.push_back(id);
    }
    for (int a = 0; a < np.attribute_size(); ++a) {
      SY_ASSIGN_OR_RETURN(Attribute attr, convert_attribute(*np.mutable_attribute(a), label, scope));
      if (node.has_attr(attr.name)) return invalid_graph(label + " has attribute '" + attr.name + "' twice");
      node.attributes.push_back(std::move(attr));
    }
    node.outputs = std::move(node_outputs[static_cast<size_t>(k)]);
    g->add_node(std::move(node));
  }

  for (const auto& out : proto.output()) {
    if (out.name().empty()) return invalid_graph("a graph output has an empty name");
    const ValueId id = find_or_import(scope, level, out.name());
    if (id == kNoValue)
      return invalid_graph("graph output '" + out.name() +
                           "' is not defined: no graph input, initializer or node output has that name");
    Value& v = g->values[static_cast<size_t>(id)];
    v.is_graph_output = true;
    if (v.type.kind == ValueType::Kind::kUnknown && out.has_type()) {
      SY_ASSIGN_OR_RETURN(ValueType t, convert_type(out.type(), "graph output '" + out.name() + "'"));
      g->values[static_cast<size_t>(id)].type = std::move(t);
    }
    g->outputs.push_back(id);
  }
  return g;
}

Result<Model> convert_model(onnx::ModelProto& proto, const ExternalDataResolver* resolver, const std::string& source) {
  Model model;
  model.ir_version = proto.ir_version();
  model.producer_name = proto.producer_name();
  model.producer_version = proto.producer_version();
  model.domain = proto.domain();
  model.model_version = proto.model_version();
  model.doc_string = proto.doc_string();
  for (const auto& p : proto.metadata_props()) model.metadata[p.key()] = p.value();
  for (const auto& op : proto.opset_import()) {
    const std::string domain = normalize_domain(op.domain());
    auto [it, added] = model.opsets.emplace(domain, op.version());
    if (!added && it->second != op.version())
      return invalid_graph(source + ": opset_import lists domain '" + (domain.empty() ? "ai.onnx" : domain) +
                           "' twice, with versions " + std::to_string(it->second) + " and " +
                           std::to_string(op.version()));
  }
  GraphConverter converter(resolver);
  std::vector<Graph*> scope;
  auto graph = converter.convert(*proto.mutable_graph(), scope);
  if (!graph.ok()) return graph.status().with_context(source);
  model.graph = std::move(graph).value();
  model.graph->opsets = model.opsets;
  return model;
}

}  // namespace

Result<Model> load_model(const std::string& path, ExternalDataMode mode) {
  MappedFile::Options options;
  options.map_threshold = kMapModelBytes;
  auto file = MappedFile::open(path, options);
  if (!file.ok()) return file.status();
  onnx::ModelProto proto;
  SY_RETURN_IF_ERROR(parse_model(file.value()->data(), file.value()->size(), path, &proto, file.value()->is_mapped()));
  file.value().reset();  // the proto holds copies of everything it needs

  std::error_code ec;
  std::filesystem::path dir = std::filesystem::absolute(path, ec).parent_path();
  if (ec || dir.empty()) dir = std::filesystem::path(path).parent_path();
  // When the model file is a link (a Hugging Face cache snapshot), its data
  // file may be a link to a sibling of the real file.
  std::string real_dir;
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (!ec) real_dir = real.parent_path().string();
  ExternalDataResolver resolver(dir.empty() ? "." : dir.string(), path, real_dir, mode);
  SY_ASSIGN_OR_RETURN(Model model, convert_model(proto, &resolver, path));
  model.path = path;
  return model;
}

Result<Model> load_model_from_bytes(const void* data, size_t size, const std::string& external_data_dir,
                                    ExternalDataMode mode) {
  if (data == nullptr && size > 0) return invalid_argument("load_model_from_bytes: data is null");
  const std::string source = "model bytes";
  onnx::ModelProto proto;
  SY_RETURN_IF_ERROR(parse_model(static_cast<const uint8_t*>(data), size, source, &proto));
  if (external_data_dir.empty()) return convert_model(proto, nullptr, source);
  ExternalDataResolver resolver(external_data_dir, source + " (external data folder " + external_data_dir + ")", "",
                                mode);
  return convert_model(proto, &resolver, source);
}

}  // namespace sy
