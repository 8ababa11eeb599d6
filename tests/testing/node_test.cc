#include "testing/node_test.h"

#include "model/loader.h"
#include "model/resolve.h"
#include "providers/cpu/cpu_provider.h"
#include "providers/kernel.h"
#include "providers/owning_kernel_context.h"
#include "testing/model_builder.h"

namespace sy::testing {

Tensor make_bool_tensor(const Shape& shape, const std::vector<int>& values) {
  Tensor t = Tensor::allocate(DataType::kBool, shape).value();
  for (size_t i = 0; i < values.size(); ++i) t.data<bool>()[i] = values[i] != 0;
  return t;
}

NodeTest::NodeTest(std::string op_type, int opset, std::string domain) {
  node_.name = "test_node";
  node_.op_type = std::move(op_type);
  node_.domain = domain;
  graph_.name = "node_test";
  graph_.opsets[domain] = opset;
  if (!domain.empty()) graph_.opsets[""] = 21;
}

NodeTest& NodeTest::input(Tensor t) {
  feed_slot_.push_back(static_cast<int>(node_.inputs.size()));
  node_.inputs.push_back(kNoValue);
  feeds_.push_back(std::move(t));
  return *this;
}

NodeTest& NodeTest::constant_input(Tensor t) {
  const std::string name = "const" + std::to_string(node_.inputs.size());
  const ValueId v = graph_.add_value(name, ValueType::tensor(t.dtype(), t.shape()));
  graph_.values[static_cast<size_t>(v)].is_initializer = true;
  graph_.initializers[v] = std::move(t);
  node_.inputs.push_back(v);
  return *this;
}

NodeTest& NodeTest::type_attr(const std::string& name, const std::string& type) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kTypeProto;
  a.s = type;
  node_.attributes.push_back(std::move(a));
  return *this;
}

NodeTest& NodeTest::missing_input() {
  node_.inputs.push_back(kNoValue);
  return *this;
}

NodeTest& NodeTest::dynamic_shapes() {
  dynamic_ = true;
  return *this;
}

NodeTest& NodeTest::attr(const std::string& name, int64_t v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kInt;
  a.i = v;
  node_.attributes.push_back(std::move(a));
  return *this;
}

NodeTest& NodeTest::attr(const std::string& name, float v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kFloat;
  a.f = v;
  node_.attributes.push_back(std::move(a));
  return *this;
}

NodeTest& NodeTest::attr(const std::string& name, const std::string& v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kString;
  a.s = v;
  node_.attributes.push_back(std::move(a));
  return *this;
}

NodeTest& NodeTest::attr(const std::string& name, std::vector<int64_t> v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kInts;
  a.ints = std::move(v);
  node_.attributes.push_back(std::move(a));
  return *this;
}

NodeTest& NodeTest::attr(const std::string& name, std::vector<float> v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kFloats;
  a.floats = std::move(v);
  node_.attributes.push_back(std::move(a));
  return *this;
}

NodeTest& NodeTest::attr(const std::string& name, std::vector<std::string> v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kStrings;
  a.strings = std::move(v);
  node_.attributes.push_back(std::move(a));
  return *this;
}

NodeTest& NodeTest::attr(const std::string& name, Tensor v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kTensor;
  a.t = std::move(v);
  node_.attributes.push_back(std::move(a));
  return *this;
}

NodeTest& NodeTest::outputs(int n) {
  num_outputs_ = n;
  return *this;
}

NodeTest& NodeTest::threads(int n) {
  threads_ = n;
  return *this;
}

Result<std::vector<Tensor>> NodeTest::run() {
  for (size_t k = 0; k < feeds_.size(); ++k) {
    const Tensor& t = feeds_[k];
    ValueType type = ValueType::tensor(t.dtype(), t.shape());
    if (dynamic_)
      for (Dim& d : type.dims) d = Dim::unknown();
    // A sequence feed is declared seq(tensor(T)), an empty optional
    // optional(tensor(T)); their items' shapes are left unknown.
    if (t.kind() == ValueKind::kSequence) type = ValueType::sequence(ValueType::tensor(t.dtype()));
    if (t.kind() == ValueKind::kNone) type = ValueType::optional(ValueType::tensor(t.dtype()));
    const ValueId v = graph_.add_value("input" + std::to_string(k), type);
    graph_.values[static_cast<size_t>(v)].is_graph_input = true;
    graph_.inputs.push_back(v);
    node_.inputs[static_cast<size_t>(feed_slot_[k])] = v;
  }
  for (int i = 0; i < num_outputs_; ++i) {
    const ValueId v = graph_.add_value("output" + std::to_string(i));
    graph_.values[static_cast<size_t>(v)].is_graph_output = true;
    graph_.outputs.push_back(v);
    node_.outputs.push_back(v);
  }
  const NodeId id = graph_.add_node(node_);
  // Kernel tests also give nodes the private sy_* attributes the optimizer
  // writes, which the spec does not list.
  ResolveOptions resolve_options;
  resolve_options.allow_unknown_attributes = true;
  SY_RETURN_IF_ERROR(resolve(graph_, resolve_options));
  const Node& node = graph_.nodes[static_cast<size_t>(id)];
  std::string reason;
  const KernelDef* def = cpu::cpu_kernel_registry().find(graph_, node, reason);
  if (def == nullptr) return not_implemented(reason);
  KernelCreateContext create_ctx(graph_, node);
  SY_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, def->create(create_ctx));

  std::vector<const Tensor*> inputs;
  size_t feed = 0;
  for (ValueId v : node.inputs) {
    if (v == kNoValue) {
      inputs.push_back(nullptr);
    } else if (const Tensor* c = graph_.constant(v)) {
      inputs.push_back(c);
    } else {
      inputs.push_back(&feeds_[feed++]);
    }
  }
  ThreadPool pool(threads_);
  OwningKernelContext ctx(node, inputs, &pool);
  SY_RETURN_IF_ERROR(run_kernel_once(*kernel, ctx));
  return std::move(ctx.outputs());
}

namespace {

double as_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat: return t.data<float>()[i];
    case DataType::kDouble: return t.data<double>()[i];
    case DataType::kFloat16: return float16_to_float(t.data<uint16_t>()[i]);
    case DataType::kBfloat16: return bfloat16_to_float(t.data<uint16_t>()[i]);
    case DataType::kInt8: return t.data<int8_t>()[i];
    case DataType::kInt16: return t.data<int16_t>()[i];
    case DataType::kInt32: return t.data<int32_t>()[i];
    case DataType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DataType::kUint8: return t.data<uint8_t>()[i];
    case DataType::kUint16: return t.data<uint16_t>()[i];
    case DataType::kUint32: return t.data<uint32_t>()[i];
    case DataType::kUint64: return static_cast<double>(t.data<uint64_t>()[i]);
    case DataType::kBool: return t.data<bool>()[i] ? 1.0 : 0.0;
    default: return std::nan("");
  }
}

}  // namespace

void expect_tensor_near(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  ASSERT_EQ(actual.dtype(), expected.dtype()) << "dtype";
  ASSERT_EQ(actual.shape(), expected.shape()) << actual.shape().to_string() << " vs " << expected.shape().to_string();
  int failures = 0;
  for (int64_t i = 0; i < actual.num_elements() && failures < 10; ++i) {
    const double a = as_double(actual, i);
    const double e = as_double(expected, i);
    if (std::isnan(a) && std::isnan(e)) continue;
    if (std::isinf(a) && std::isinf(e) && (a > 0) == (e > 0)) continue;
    if (!(std::fabs(a - e) <= atol + rtol * std::fabs(e))) {
      ADD_FAILURE() << "element " << i << ": got " << a << ", expected " << e;
      ++failures;
    }
  }
}

void expect_tensor_eq(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.dtype(), expected.dtype()) << "dtype";
  ASSERT_EQ(actual.shape(), expected.shape()) << actual.shape().to_string() << " vs " << expected.shape().to_string();
  if (actual.dtype() == DataType::kString) {
    for (int64_t i = 0; i < actual.num_elements(); ++i)
      EXPECT_EQ(actual.data<std::string>()[i], expected.data<std::string>()[i]) << "element " << i;
    return;
  }
  EXPECT_EQ(0, std::memcmp(actual.raw_data(), expected.raw_data(), actual.byte_size())) << "tensor bytes differ";
}

Graph load_resolved(const ModelBuilder& b) {
  const std::string bytes = b.build();
  auto model = load_model_from_bytes(bytes.data(), bytes.size());
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  if (!model.ok()) return Graph();
  Status st = resolve(*model->graph);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return std::move(*model->graph);
}

}  // namespace sy::testing
