#include "testing/model_builder.h"

#include <fstream>

#include "onnx/onnx_pb.h"

namespace sy::testing {
namespace {

void fill_tensor_proto(const std::string& name, const Tensor& t, onnx::TensorProto* proto) {
  proto->set_name(name);
  proto->set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) proto->add_dims(d);
  if (t.dtype() == DataType::kString) {
    for (int64_t i = 0; i < t.num_elements(); ++i) proto->add_string_data(t.data<std::string>()[i]);
    return;
  }
  proto->set_raw_data(t.raw_data(), t.byte_size());
}

void fill_value_info(const std::string& name, DataType dtype, bool has_shape, const std::vector<DimSpec>& dims,
                     onnx::ValueInfoProto* info) {
  info->set_name(name);
  onnx::TypeProto_Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(dtype));
  if (!has_shape) return;
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (const DimSpec& d : dims) {
    onnx::TensorShapeProto_Dimension* dim = shape->add_dim();
    if (d.value >= 0) {
      dim->set_dim_value(d.value);
    } else if (!d.symbol.empty()) {
      dim->set_dim_param(d.symbol);
    }
  }
}

}  // namespace

AttrSpec::AttrSpec(std::string n, const ModelBuilder& body)
    : name(std::move(n)), kind(Kind::kGraph), g(std::make_shared<ModelBuilder>(body)) {}

ModelBuilder& ModelBuilder::input(const std::string& name, DataType dtype, std::vector<DimSpec> dims) {
  inputs_.push_back({name, dtype, true, std::move(dims)});
  return *this;
}

ModelBuilder& ModelBuilder::input_without_shape(const std::string& name, DataType dtype) {
  inputs_.push_back({name, dtype, false, {}});
  return *this;
}

ModelBuilder& ModelBuilder::output(const std::string& name, DataType dtype, std::vector<DimSpec> dims) {
  outputs_.push_back({name, dtype, true, std::move(dims)});
  return *this;
}

ModelBuilder& ModelBuilder::output_without_shape(const std::string& name, DataType dtype) {
  outputs_.push_back({name, dtype, false, {}});
  return *this;
}

ModelBuilder& ModelBuilder::initializer(const std::string& name, const Tensor& value, bool also_input) {
  initializers_.push_back({name, value});
  if (also_input) {
    std::vector<DimSpec> dims;
    for (int64_t d : value.shape()) dims.emplace_back(d);
    inputs_.push_back({name, value.dtype(), true, std::move(dims)});
  }
  return *this;
}

ModelBuilder& ModelBuilder::node(const std::string& op_type, std::vector<std::string> inputs,
                                 std::vector<std::string> outputs, std::vector<AttrSpec> attrs, std::string name) {
  if (name.empty()) name = op_type + "_" + std::to_string(nodes_.size());
  nodes_.push_back({op_type, std::move(inputs), std::move(outputs), std::move(attrs), std::move(name), ""});
  return *this;
}

ModelBuilder& ModelBuilder::domain_node(const std::string& domain, const std::string& op_type,
                                        std::vector<std::string> inputs, std::vector<std::string> outputs,
                                        std::vector<AttrSpec> attrs, std::string name) {
  node(op_type, std::move(inputs), std::move(outputs), std::move(attrs), std::move(name));
  nodes_.back().domain = domain;
  return *this;
}

ModelBuilder& ModelBuilder::opset_import(const std::string& domain, int64_t version) {
  other_opsets_.emplace_back(domain, version);
  return *this;
}

std::string ModelBuilder::build() const {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("switchyard-tests");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(opset_);
  for (const auto& [domain, version] : other_opsets_) {
    onnx::OperatorSetIdProto* other = model.add_opset_import();
    other->set_domain(domain);
    other->set_version(version);
  }
  fill_graph(model.mutable_graph());
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

void ModelBuilder::fill_graph(onnx::GraphProto* graph) const {
  graph->set_name("test_graph");
  for (const ValueSpec& v : inputs_) fill_value_info(v.name, v.dtype, v.has_shape, v.dims, graph->add_input());
  for (const ValueSpec& v : outputs_) fill_value_info(v.name, v.dtype, v.has_shape, v.dims, graph->add_output());
  for (const InitSpec& i : initializers_) fill_tensor_proto(i.name, i.value, graph->add_initializer());
  for (const NodeSpec& n : nodes_) {
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type(n.op_type);
    node->set_name(n.name);
    if (!n.domain.empty()) node->set_domain(n.domain);
    for (const std::string& in : n.inputs) node->add_input(in);
    for (const std::string& out : n.outputs) node->add_output(out);
    for (const AttrSpec& a : n.attrs) {
      onnx::AttributeProto* attr = node->add_attribute();
      attr->set_name(a.name);
      switch (a.kind) {
        case AttrSpec::Kind::kInt:
          attr->set_type(onnx::AttributeProto::INT);
          attr->set_i(a.i);
          break;
        case AttrSpec::Kind::kFloat:
          attr->set_type(onnx::AttributeProto::FLOAT);
          attr->set_f(a.f);
          break;
        case AttrSpec::Kind::kString:
          attr->set_type(onnx::AttributeProto::STRING);
          attr->set_s(a.s);
          break;
        case AttrSpec::Kind::kInts:
          attr->set_type(onnx::AttributeProto::INTS);
          for (int64_t v : a.ints) attr->add_ints(v);
          break;
        case AttrSpec::Kind::kFloats:
          attr->set_type(onnx::AttributeProto::FLOATS);
          for (float v : a.floats) attr->add_floats(v);
          break;
        case AttrSpec::Kind::kTensor:
          attr->set_type(onnx::AttributeProto::TENSOR);
          fill_tensor_proto("", a.t, attr->mutable_t());
          break;
        case AttrSpec::Kind::kGraph:
          attr->set_type(onnx::AttributeProto::GRAPH);
          a.g->fill_graph(attr->mutable_g());
          break;
      }
    }
  }
}

Status ModelBuilder::save(const std::string& path) const {
  const std::string bytes = build();
  std::ofstream out(path, std::ios::binary);
  if (!out) return Status(StatusCode::kNoSuchFile, "cannot write " + path);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return out ? ok_status() : Status(StatusCode::kFail, "failed writing " + path);
}

}  // namespace sy::testing
