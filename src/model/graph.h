// Graph IR: what a model is after loading and before anything runs.
//
// Values and nodes live in vectors and refer to each other by index
// (ValueId, NodeId), so passes can rewrite the graph without pointer
// chasing. A removed node stays in the vector, marked `removed`, until
// Graph::compact() is called.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "switchyard/data_type.h"
#include "switchyard/status.h"
#include "switchyard/tensor.h"

namespace sy {

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr ValueId kNoValue = -1;  // an omitted optional input/output
inline constexpr NodeId kNoNode = -1;

// One dimension of a declared shape: a number, a symbol ("batch"), or
// unknown (value < 0 and empty symbol).
struct Dim {
  int64_t value = -1;
  std::string symbol;

  static Dim known(int64_t v) { return Dim{v, {}}; }
  static Dim symbolic(std::string s) { return Dim{-1, std::move(s)}; }
  static Dim unknown() { return Dim{}; }
  bool is_known() const { return value >= 0; }
  bool is_symbolic() const { return value < 0 && !symbol.empty(); }
  std::string to_string() const;  // "3", "batch", "?"
  friend bool operator==(const Dim& a, const Dim& b) { return a.value == b.value && a.symbol == b.symbol; }
};

// The type of a value. Tensors are the common case; sequences and optionals
// carry their element type in `element`.
struct ValueType {
  enum class Kind { kUnknown, kTensor, kSequence, kOptional, kMap, kSparseTensor };
  Kind kind = Kind::kUnknown;
  DataType dtype = DataType::kUndefined;  // tensor element type
  bool has_shape = false;                 // rank (and dims) known
  std::vector<Dim> dims;
  std::shared_ptr<ValueType> element;     // sequence / optional element

  static ValueType tensor(DataType dt) {
    ValueType t;
    t.kind = Kind::kTensor;
    t.dtype = dt;
    return t;
  }
  static ValueType tensor(DataType dt, std::vector<Dim> d) {
    ValueType t = tensor(dt);
    t.has_shape = true;
    t.dims = std::move(d);
    return t;
  }
  static ValueType tensor(DataType dt, const Shape& s);
  // seq(element), optional(element)
  static ValueType sequence(ValueType element);
  static ValueType optional(ValueType element);

  bool is_tensor() const { return kind == Kind::kTensor; }
  size_t rank() const { return dims.size(); }
  // True when every dim is a known number.
  bool is_static() const;
  // The static shape, when is_static().
  Shape static_shape() const;
  // "tensor(float)", "seq(tensor(int64))"
  std::string type_string() const;
  // "[batch,3,224,224]" or "[?]" when the rank is unknown
  std::string shape_string() const;
};

// Reads back ValueType::type_string()'s spelling of a tensor, sparse
// tensor, sequence or optional type ("seq(tensor(int64))"), the form the
// loader keeps TYPE_PROTO attributes in; false when `s` is not one.
bool parse_type_string(std::string_view s, ValueType& out);

enum class AttributeType {
  kUndefined = 0,
  kFloat = 1,
  kInt = 2,
  kString = 3,
  kTensor = 4,
  kGraph = 5,
  kFloats = 6,
  kInts = 7,
  kStrings = 8,
  kTensors = 9,
  kGraphs = 10,
  kSparseTensor = 11,
  kTypeProto = 13,
  kTypeProtos = 14,
};

class Graph;

struct Attribute {
  std::string name;
  AttributeType type = AttributeType::kUndefined;
  float f = 0.0f;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;     // "" means ai.onnx
  int since_version = 0;  // set by resolve(): the op version this node uses
  std::vector<ValueId> inputs;   // kNoValue for an omitted optional input
  std::vector<ValueId> outputs;  // kNoValue for an omitted optional output
  std::vector<Attribute> attributes;
  // Values of this graph that the node's subgraphs (If/Loop/Scan bodies)
  // read from the outer scope: dependencies that are not in `inputs`.
  // Filled by Graph::link_subgraph_inputs().
  std::vector<ValueId> implicit_inputs;
  bool removed = false;
  // The index, in the session's provider chain, of the provider the
  // partitioner placed this node on; -1 before placement. Provider
  // rewrites (optimizer/provider_rewrites.h) match only nodes placed alike.
  int placed_on = -1;

  const Attribute* attr(const std::string& attr_name) const;
  bool has_attr(const std::string& attr_name) const { return attr(attr_name) != nullptr; }
  int64_t attr_int(const std::string& attr_name, int64_t default_value) const;
  float attr_float(const std::string& attr_name, float default_value) const;
  std::string attr_string(const std::string& attr_name, const std::string& default_value) const;
  std::vector<int64_t> attr_ints(const std::string& attr_name) const;  // empty if absent
  std::vector<float> attr_floats(const std::string& attr_name) const;

  // "node 'conv1' (Conv)" — used at the start of error messages.
  std::string describe() const;
  // "ai.onnx" for the empty domain.
  std::string domain_name() const { return domain.empty() ? "ai.onnx" : domain; }
  size_t num_inputs() const { return inputs.size(); }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != kNoValue; }
};

struct Value {
  std::string name;
  ValueType type;
  NodeId producer = kNoNode;
  std::vector<NodeId> consumers;
  bool is_graph_input = false;
  bool is_graph_output = false;
  bool is_initializer = false;
  bool is_outer_scope = false;  // defined by an enclosing graph (subgraphs)
};

class Graph {
 public:
  std::string name;
  std::string doc_string;
  std::vector<Node> nodes;
  std::vector<Value> values;
  std::vector<ValueId> inputs;   // graph inputs that are not initializers
  std::vector<ValueId> outputs;
  // Constant data: initializers, and values the optimizer folded.
  std::unordered_map<ValueId, Tensor> initializers;
  // domain ("" for ai.onnx) -> opset version. Subgraphs share the model's.
  std::map<std::string, int64_t> opsets;
  const Graph* parent = nullptr;  // enclosing graph, for subgraphs
  // While one provider's rewrites run after placement: that provider's
  // index. The rewrite helpers (optimizer/rewrite_util.h) then see only
  // nodes placed on it, and add_node() places new nodes on it. -1 (every
  // node) otherwise.
  int rewrite_scope = -1;
  // What the version adapters (model/version_adapter.h) changed, a line
  // per node, for `switchyard inspect`.
  std::vector<std::string> version_adaptations;

  // -1 when absent.
  ValueId find_value(const std::string& value_name) const;
  // Adds a value; the name must be new.
  ValueId add_value(const std::string& value_name, ValueType type = {});
  // Renames a value; the new name must be unused.
  void rename_value(ValueId v, const std::string& new_name);
  // Appends a node and links producer/consumer edges.
  NodeId add_node(Node node);
  // Fills Node::implicit_inputs from the subgraphs' outer-scope values and
  // relinks, so ordering and dead-code passes see those dependencies.
  void link_subgraph_inputs();
  // Recomputes producer/consumer links from the nodes (after rewrites).
  void rebuild_links();
  // Drops removed nodes and renumbers; ValueIds are kept.
  void compact();
  // Live nodes in an order where every producer comes before its consumers;
  // an error naming a node on a cycle if there is one.
  Result<std::vector<NodeId>> topological_order() const;
  // The constant tensor for a value, or nullptr.
  const Tensor* constant(ValueId v) const;
  int64_t opset(const std::string& domain) const;
  size_t num_live_nodes() const;

 private:
  std::unordered_map<std::string, ValueId> index_;
};

// A loaded model: the main graph plus the metadata ModelProto carries.
struct Model {
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::map<std::string, std::string> metadata;
  std::map<std::string, int64_t> opsets;
  std::shared_ptr<Graph> graph;
  std::string path;  // the file it came from; empty when loaded from bytes
};

}  // namespace sy
