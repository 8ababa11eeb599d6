#include "model/graph.h"

#include <functional>
#include <queue>
#include <unordered_set>
#include <utility>

namespace sy {

std::string Dim::to_string() const {
  if (is_known()) return std::to_string(value);
  if (!symbol.empty()) return symbol;
  return "?";
}

ValueType ValueType::tensor(DataType dt, const Shape& s) {
  std::vector<Dim> d;
  d.reserve(s.rank());
  for (int64_t x : s) d.push_back(Dim::known(x));
  return tensor(dt, std::move(d));
}

ValueType ValueType::sequence(ValueType element) {
  ValueType t;
  t.kind = Kind::kSequence;
  t.element = std::make_shared<ValueType>(std::move(element));
  return t;
}

ValueType ValueType::optional(ValueType element) {
  ValueType t;
  t.kind = Kind::kOptional;
  t.element = std::make_shared<ValueType>(std::move(element));
  return t;
}

bool ValueType::is_static() const {
  if (!has_shape) return false;
  for (const Dim& d : dims)
    if (!d.is_known()) return false;
  return true;
}

Shape ValueType::static_shape() const {
  Shape s;
  for (const Dim& d : dims) s.push_back(d.value);
  return s;
}

std::string ValueType::type_string() const {
  switch (kind) {
    case Kind::kTensor: return tensor_type_string(dtype);
    case Kind::kSparseTensor: return "sparse_" + tensor_type_string(dtype);
    case Kind::kSequence: return "seq(" + (element ? element->type_string() : std::string("?")) + ")";
    case Kind::kOptional: return "optional(" + (element ? element->type_string() : std::string("?")) + ")";
    case Kind::kMap: return "map";
    case Kind::kUnknown: return "unknown";
  }
  return "unknown";
}

bool parse_type_string(std::string_view s, ValueType& out) {
  auto inside = [&](std::string_view prefix, std::string_view& body) {
    if (s.size() < prefix.size() + 2 || s.substr(0, prefix.size()) != prefix || s[prefix.size()] != '(' ||
        s.back() != ')')
      return false;
    body = s.substr(prefix.size() + 1, s.size() - prefix.size() - 2);
    return true;
  };
  std::string_view body;
  const bool sparse = inside("sparse_tensor", body);
  if (sparse || inside("tensor", body)) {
    for (int v = 1; v <= kMaxDataTypeValue; ++v) {
      if (!is_valid_data_type(v) || data_type_name(static_cast<DataType>(v)) != body) continue;
      out = ValueType::tensor(static_cast<DataType>(v));
      if (sparse) out.kind = ValueType::Kind::kSparseTensor;
      return true;
    }
    return false;
  }
  const bool seq = inside("seq", body);
  if (!seq && !inside("optional", body)) return false;
  ValueType element;
  if (!parse_type_string(body, element)) return false;
  out = seq ? ValueType::sequence(std::move(element)) : ValueType::optional(std::move(element));
  return true;
}

std::string ValueType::shape_string() const {
  if (!has_shape) return "[?]";
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += dims[i].to_string();
  }
  return s + "]";
}

const Attribute* Node::attr(const std::string& attr_name) const {
  for (const Attribute& a : attributes)
    if (a.name == attr_name) return &a;
  return nullptr;
}

int64_t Node::attr_int(const std::string& attr_name, int64_t default_value) const {
  const Attribute* a = attr(attr_name);
  return a ? a->i : default_value;
}

float Node::attr_float(const std::string& attr_name, float default_value) const {
  const Attribute* a = attr(attr_name);
  return a ? a->f : default_value;
}

std::string Node::attr_string(const std::string& attr_name, const std::string& default_value) const {
  const Attribute* a = attr(attr_name);
  return a ? a->s : default_value;
}

std::vector<int64_t> Node::attr_ints(const std::string& attr_name) const {
  const Attribute* a = attr(attr_name);
  return a ? a->ints : std::vector<int64_t>{};
}

std::vector<float> Node::attr_floats(const std::string& attr_name) const {
  const Attribute* a = attr(attr_name);
  return a ? a->floats : std::vector<float>{};
}

std::string Node::describe() const {
  std::string op = domain.empty() ? op_type : domain + "." + op_type;
  return "node '" + name + "' (" + op + ")";
}

ValueId Graph::find_value(const std::string& value_name) const {
  auto it = index_.find(value_name);
  return it == index_.end() ? kNoValue : it->second;
}

ValueId Graph::add_value(const std::string& value_name, ValueType type) {
  const auto id = static_cast<ValueId>(values.size());
  Value v;
  v.name = value_name;
  v.type = std::move(type);
  values.push_back(std::move(v));
  if (!value_name.empty()) index_[value_name] = id;
  return id;
}

void Graph::rename_value(ValueId v, const std::string& new_name) {
  Value& value = values[static_cast<size_t>(v)];
  auto it = index_.find(value.name);
  if (it != index_.end() && it->second == v) index_.erase(it);
  value.name = new_name;
  index_[new_name] = v;
}

namespace {

// Consumer lists are built in node order, so a node reading a value twice
// would be its list's last entry: no search through a long list (a value
// read by 100k nodes) is needed to keep each consumer once.
void add_consumer(std::vector<NodeId>& consumers, NodeId id) {
  if (consumers.empty() || consumers.back() != id) consumers.push_back(id);
}

}  // namespace

NodeId Graph::add_node(Node node) {
  const auto id = static_cast<NodeId>(nodes.size());
  if (rewrite_scope >= 0) node.placed_on = rewrite_scope;
  for (ValueId in : node.inputs)
    if (in != kNoValue) add_consumer(values[static_cast<size_t>(in)].consumers, id);
  for (ValueId out : node.outputs)
    if (out != kNoValue) values[static_cast<size_t>(out)].producer = id;
  nodes.push_back(std::move(node));
  return id;
}

namespace {

void collect_outer_names(const Graph& g, std::vector<std::string>& names) {
  for (const Value& v : g.values)
    if (v.is_outer_scope) names.push_back(v.name);
  for (const Node& n : g.nodes)
    for (const Attribute& a : n.attributes) {
      if (a.g) collect_outer_names(*a.g, names);
      for (const auto& sub : a.graphs) collect_outer_names(*sub, names);
    }
}

}  // namespace

void Graph::link_subgraph_inputs() {
  for (Node& node : nodes) {
    node.implicit_inputs.clear();
    std::vector<std::string> names;
    for (const Attribute& a : node.attributes) {
      if (a.g) {
        a.g->link_subgraph_inputs();
        collect_outer_names(*a.g, names);
      }
      for (const auto& sub : a.graphs) {
        sub->link_subgraph_inputs();
        collect_outer_names(*sub, names);
      }
    }
    std::unordered_set<ValueId> seen;
    for (const std::string& name : names) {
      const ValueId v = find_value(name);
      if (v != kNoValue && seen.insert(v).second) node.implicit_inputs.push_back(v);
    }
  }
  rebuild_links();
}

void Graph::rebuild_links() {
  for (Value& v : values) {
    v.producer = kNoNode;
    v.consumers.clear();
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].removed) continue;
    const auto id = static_cast<NodeId>(n);
    for (const auto* list : {&nodes[n].inputs, &nodes[n].implicit_inputs})
      for (ValueId in : *list)
        if (in != kNoValue) add_consumer(values[static_cast<size_t>(in)].consumers, id);
    for (ValueId out : nodes[n].outputs)
      if (out != kNoValue) values[static_cast<size_t>(out)].producer = id;
  }
}

void Graph::compact() {
  std::vector<Node> live;
  live.reserve(nodes.size());
  for (Node& n : nodes)
    if (!n.removed) live.push_back(std::move(n));
  nodes = std::move(live);
  rebuild_links();
}

Result<std::vector<NodeId>> Graph::topological_order() const {
  // Kahn's algorithm, taking ready nodes in file order (smallest index
  // first) so the order is deterministic and close to what the exporter
  // wrote. The edges come from the nodes' own input lists, one per use, and
  // are kept in one flat array: linear in the graph's size, however many
  // nodes read one value or however many values one node reads.
  const size_t count = nodes.size();
  auto live_producer = [&](ValueId in) {
    if (in == kNoValue) return kNoNode;
    const NodeId p = values[static_cast<size_t>(in)].producer;
    return p != kNoNode && !nodes[static_cast<size_t>(p)].removed ? p : kNoNode;
  };
  auto for_each_edge = [&](auto&& visit) {
    for (size_t n = 0; n < count; ++n) {
      if (nodes[n].removed) continue;
      for (const auto* list : {&nodes[n].inputs, &nodes[n].implicit_inputs})
        for (ValueId in : *list) {
          const NodeId p = live_producer(in);
          if (p != kNoNode) visit(static_cast<size_t>(p), static_cast<NodeId>(n));
        }
    }
  };
  // The consumers of node p are successors[begin[p] .. begin[p + 1]).
  std::vector<size_t> begin(count + 1, 0);
  std::vector<int> missing(count, 0);
  for_each_edge([&](size_t p, NodeId c) {
    ++begin[p + 1];
    ++missing[static_cast<size_t>(c)];
  });
  for (size_t n = 0; n < count; ++n) begin[n + 1] += begin[n];
  std::vector<NodeId> successors(begin[count]);
  std::vector<size_t> fill(begin.begin(), begin.end() - 1);
  for_each_edge([&](size_t p, NodeId c) { successors[fill[p]++] = c; });

  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (size_t n = 0; n < count; ++n)
    if (!nodes[n].removed && missing[n] == 0) ready.push(static_cast<NodeId>(n));
  std::vector<NodeId> order;
  order.reserve(count);
  while (!ready.empty()) {
    const NodeId n = ready.top();
    ready.pop();
    order.push_back(n);
    const auto p = static_cast<size_t>(n);
    for (size_t e = begin[p]; e < begin[p + 1]; ++e)
      if (--missing[static_cast<size_t>(successors[e])] == 0) ready.push(successors[e]);
  }
  if (order.size() != num_live_nodes()) {
    for (size_t n = 0; n < count; ++n)
      if (!nodes[n].removed && missing[n] > 0)
        return invalid_graph("the graph has a cycle through " + nodes[n].describe());
  }
  return order;
}

const Tensor* Graph::constant(ValueId v) const {
  auto it = initializers.find(v);
  return it == initializers.end() ? nullptr : &it->second;
}

int64_t Graph::opset(const std::string& domain) const {
  auto it = opsets.find(domain);
  if (it != opsets.end()) return it->second;
  return parent ? parent->opset(domain) : 0;
}

size_t Graph::num_live_nodes() const {
  size_t n = 0;
  for (const Node& node : nodes)
    if (!node.removed) ++n;
  return n;
}

}  // namespace sy
