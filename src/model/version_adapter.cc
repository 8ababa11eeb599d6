#include "model/version_adapter.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "optimizer/rewrite_util.h"
#include "schema/op_versions.h"

namespace sy {
namespace {

// The ops whose old versions differ from the version in force at opset
// `to` only by attributes that no longer mean anything at inference.
struct AttributeDrop {
  std::string_view op;
  int to;
  std::string_view drop[2];
};

constexpr AttributeDrop kAttributeDrops[] = {
    {"Abs", 6, {"consumed_inputs"}},
    {"Ceil", 6, {"consumed_inputs"}},
    {"Clip", 6, {"consumed_inputs"}},
    {"Elu", 6, {"consumed_inputs"}},
    {"Exp", 6, {"consumed_inputs"}},
    {"Floor", 6, {"consumed_inputs"}},
    {"HardSigmoid", 6, {"consumed_inputs"}},
    {"InstanceNormalization", 6, {"consumed_inputs"}},
    {"LeakyRelu", 6, {"consumed_inputs"}},
    {"Log", 6, {"consumed_inputs"}},
    {"Max", 6, {"consumed_inputs"}},
    {"Mean", 6, {"consumed_inputs"}},
    {"Min", 6, {"consumed_inputs"}},
    {"Neg", 6, {"consumed_inputs"}},
    {"Reciprocal", 6, {"consumed_inputs"}},
    {"Relu", 6, {"consumed_inputs"}},
    {"Selu", 6, {"consumed_inputs"}},
    {"Sigmoid", 6, {"consumed_inputs"}},
    {"Sqrt", 6, {"consumed_inputs"}},
    {"Sum", 6, {"consumed_inputs"}},
    {"Tanh", 6, {"consumed_inputs"}},
    // Inference mode is the only mode a runtime has; is_test says nothing.
    {"BatchNormalization", 7, {"consumed_inputs", "is_test"}},
    {"Dropout", 7, {"consumed_inputs", "is_test"}},
    // Gemm-7 broadcasts C whenever it can; broadcast=0 required a full C.
    {"Gemm", 7, {"broadcast"}},
    // The hidden sequence Y is computed when the node lists it.
    {"GRU", 7, {"output_sequence"}},
    {"LSTM", 7, {"output_sequence"}},
    {"RNN", 7, {"output_sequence"}},
};

// The binary ops whose versions before 7 broadcast B onto A only with
// broadcast=1, aligned at `axis`.
constexpr std::string_view kLegacyBroadcastOps[] = {"Add", "Sub", "Mul",   "Div",  "Pow", "And",
                                                    "Or",  "Xor", "Equal", "Greater", "Less"};

bool drop_attribute(Node& node, std::string_view name) {
  const auto it = std::find_if(node.attributes.begin(), node.attributes.end(),
                               [&](const Attribute& a) { return a.name == name; });
  if (it == node.attributes.end()) return false;
  node.attributes.erase(it);
  return true;
}

// The node moves to the op version in force at opset `to`.
void move_to(Node& node, int to) { node.since_version = resolve_op_version("", node.op_type, to); }

void note(Graph& graph, const Node& node, int from, const std::string& what) {
  graph.version_adaptations.push_back(node.describe() + ": " + node.op_type + "-" + std::to_string(from) + " -> " +
                                      node.op_type + "-" + std::to_string(node.since_version) + ": " + what);
}

// The rank of value v as inferred so far; -1 when unknown.
int64_t known_rank(const Graph& graph, ValueId v) {
  if (v == kNoValue) return -1;
  const ValueType& t = graph.values[static_cast<size_t>(v)].type;
  return t.is_tensor() && t.has_shape ? static_cast<int64_t>(t.rank()) : -1;
}

// Input `input` of node `id` with `count` trailing 1-dims appended: a
// reshaped copy of a constant, else the output of a new Unsqueeze-13.
Status append_unit_dims(Graph& graph, NodeId id, size_t input, int64_t count) {
  const ValueId b = graph.nodes[static_cast<size_t>(id)].inputs[input];
  const ValueType b_type = graph.values[static_cast<size_t>(b)].type;
  const auto rank = static_cast<int64_t>(b_type.rank());
  if (const Tensor* c = graph.constant(b)) {
    std::vector<int64_t> dims(c->shape().dims().begin(), c->shape().dims().end());
    dims.insert(dims.end(), static_cast<size_t>(count), 1);
    SY_ASSIGN_OR_RETURN(Tensor reshaped, c->reshaped(Shape(dims)));
    // A copy: the constant may have other readers that want it as it is.
    SY_ASSIGN_OR_RETURN(Tensor owned, reshaped.clone());
    const std::string name = graph.values[static_cast<size_t>(b)].name + "_aligned";
    graph.nodes[static_cast<size_t>(id)].inputs[input] = rewrite::add_constant(graph, name, std::move(owned));
    return ok_status();
  }
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < count; ++i) axes.push_back(rank + i);
  SY_ASSIGN_OR_RETURN(Tensor axes_tensor, Tensor::allocate(DataType::kInt64, Shape{count}));
  std::copy(axes.begin(), axes.end(), axes_tensor.data<int64_t>());
  const std::string base = graph.values[static_cast<size_t>(b)].name + "_aligned";
  const ValueId axes_value = rewrite::add_constant(graph, base + "_axes", std::move(axes_tensor));
  ValueType out_type = b_type;
  out_type.dims.insert(out_type.dims.end(), static_cast<size_t>(count), Dim::known(1));
  const ValueId out = graph.add_value(rewrite::unique_value_name(graph, base), out_type);
  Node unsqueeze;
  unsqueeze.name = graph.values[static_cast<size_t>(out)].name;
  unsqueeze.op_type = "Unsqueeze";
  unsqueeze.since_version = 13;
  unsqueeze.inputs = {b, axes_value};
  unsqueeze.outputs = {out};
  graph.add_node(std::move(unsqueeze));
  graph.nodes[static_cast<size_t>(id)].inputs[input] = out;
  graph.rebuild_links();
  return ok_status();
}

// Add-1/6 and the rest: B aligned at A's `axis` becomes B with trailing
// 1-dims, which numpy broadcasting aligns at the same place.
Status adapt_legacy_broadcast(Graph& graph, NodeId id) {
  Node& node = graph.nodes[static_cast<size_t>(id)];
  const int from = node.since_version;
  const bool aligned = node.attr_int("broadcast", 0) != 0 && node.has_attr("axis") && node.inputs.size() == 2;
  const int64_t written_axis = node.attr_int("axis", 0);
  int64_t axis = written_axis, trailing = 0;
  // Checked before anything changes, so a refused node stays as written.
  if (aligned) {
    const int64_t rank_a = known_rank(graph, node.inputs[0]);
    const int64_t rank_b = known_rank(graph, node.inputs[1]);
    if (rank_a < 0 || rank_b < 0)
      return invalid_graph(node.describe() + ": " + node.op_type + "-" + std::to_string(from) +
                           " broadcasts B at axis " + std::to_string(written_axis) +
                           ", which needs the ranks of A and B; they are not known before running");
    if (axis < 0) axis += rank_a;
    trailing = rank_a - axis - rank_b;
    if (axis < 0 || trailing < 0)
      return invalid_graph(node.describe() + ": axis " + std::to_string(written_axis) + " does not place B (rank " +
                           std::to_string(rank_b) + ") inside A (rank " + std::to_string(rank_a) + ")");
  }
  drop_attribute(node, "broadcast");
  drop_attribute(node, "axis");
  drop_attribute(node, "consumed_inputs");
  move_to(node, 7);
  if (!aligned) {
    note(graph, node, from, "broadcast and consumed_inputs dropped");
    return ok_status();
  }
  if (trailing > 0) SY_RETURN_IF_ERROR(append_unit_dims(graph, id, 1, trailing));
  note(graph, graph.nodes[static_cast<size_t>(id)], from,
       "B aligned at axis " + std::to_string(axis) + " with " + std::to_string(trailing) + " trailing 1-dims");
  return ok_status();
}

// PRelu-1/6: a 1-D slope of X's channel count is per channel.
Status adapt_prelu(Graph& graph, NodeId id) {
  Node& node = graph.nodes[static_cast<size_t>(id)];
  const int from = node.since_version;
  drop_attribute(node, "consumed_inputs");
  move_to(node, 7);
  const ValueType& x = graph.values[static_cast<size_t>(node.inputs[0])].type;
  const ValueType& slope = graph.values[static_cast<size_t>(node.inputs[1])].type;
  const bool per_channel = x.has_shape && x.rank() > 2 && slope.has_shape && slope.rank() == 1 &&
                           slope.dims[0].is_known() && slope.dims[0].value > 1;
  if (!per_channel) {
    note(graph, node, from, "consumed_inputs dropped");
    return ok_status();
  }
  SY_RETURN_IF_ERROR(append_unit_dims(graph, id, 1, static_cast<int64_t>(x.rank()) - 2));
  note(graph, graph.nodes[static_cast<size_t>(id)], from, "the [C] slope applied per channel");
  return ok_status();
}

// Cast-1 names its target type.
Status adapt_cast(Graph& graph, Node& node) {
  static constexpr std::pair<std::string_view, DataType> kNames[] = {
      {"FLOAT", DataType::kFloat},   {"UINT8", DataType::kUint8},     {"INT8", DataType::kInt8},
      {"UINT16", DataType::kUint16}, {"INT16", DataType::kInt16},     {"INT32", DataType::kInt32},
      {"INT64", DataType::kInt64},   {"STRING", DataType::kString},   {"BOOL", DataType::kBool},
      {"FLOAT16", DataType::kFloat16}, {"DOUBLE", DataType::kDouble}, {"UINT32", DataType::kUint32},
      {"UINT64", DataType::kUint64},
  };
  const int from = node.since_version;
  std::string name = node.attr_string("to", "");
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const auto& [text, type] : kNames) {
    if (name != text) continue;
    drop_attribute(node, "to");
    node.attributes.push_back(rewrite::int_attribute("to", static_cast<int64_t>(type)));
    move_to(node, 6);
    note(graph, node, from, "to \"" + name + "\" as a type number");
    return ok_status();
  }
  return invalid_graph(node.describe() + ": Cast-1 attribute 'to' is \"" + node.attr_string("to", "") +
                       "\", not a type name (FLOAT, INT64, ...)");
}

// Reshape-1's shape attribute becomes Reshape-5's input.
Status adapt_reshape(Graph& graph, Node& node) {
  const int from = node.since_version;
  const std::vector<int64_t> shape = node.attr_ints("shape");
  SY_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kInt64, Shape{static_cast<int64_t>(shape.size())}));
  std::copy(shape.begin(), shape.end(), t.data<int64_t>());
  drop_attribute(node, "shape");
  drop_attribute(node, "consumed_inputs");
  const ValueId v = rewrite::add_constant(graph, node.name.empty() ? "reshape_shape" : node.name + "_shape", std::move(t));
  node.inputs.resize(1);
  node.inputs.push_back(v);
  move_to(node, 5);
  note(graph, node, from, "shape attribute as input 1");
  graph.rebuild_links();
  return ok_status();
}

// Split-1 may take the split sizes as a second input; Split-2 only as the
// attribute.
Status adapt_split(Graph& graph, Node& node) {
  const int from = node.since_version;
  if (node.has_input(1)) {
    std::vector<int64_t> sizes;
    if (!rewrite::int64_constant(graph, node.inputs[1], &sizes))
      return invalid_graph(node.describe() + ": Split-1's split input must be a constant to run");
    drop_attribute(node, "split");
    node.attributes.push_back(rewrite::ints_attribute("split", std::move(sizes)));
  }
  node.inputs.resize(1);
  move_to(node, 2);
  note(graph, node, from, "split sizes as the attribute");
  graph.rebuild_links();
  return ok_status();
}

// Tile-1 repeats along one axis: Tile(X, tiles, axis) becomes Tile-6 with
// repeats of 1 everywhere but there.
Status adapt_tile(Graph& graph, Node& node) {
  const int from = node.since_version;
  std::vector<int64_t> tiles, axis;
  const int64_t rank = known_rank(graph, node.inputs[0]);
  if (node.inputs.size() != 3 || !rewrite::int64_constant(graph, node.inputs[1], &tiles) ||
      !rewrite::int64_constant(graph, node.inputs[2], &axis) || tiles.size() != 1 || axis.size() != 1 || rank < 0)
    return invalid_graph(node.describe() + ": Tile-1 runs when tiles and axis are constant scalars and X's rank is known");
  const int64_t a = axis[0] < 0 ? axis[0] + rank : axis[0];
  if (a < 0 || a >= rank)
    return invalid_graph(node.describe() + ": Tile-1 axis " + std::to_string(axis[0]) + " is outside X's rank " +
                         std::to_string(rank));
  SY_ASSIGN_OR_RETURN(Tensor repeats, Tensor::allocate(DataType::kInt64, Shape{rank}));
  for (int64_t i = 0; i < rank; ++i) repeats.data<int64_t>()[i] = i == a ? tiles[0] : 1;
  const ValueId v = rewrite::add_constant(graph, node.name.empty() ? "tile_repeats" : node.name + "_repeats",
                                          std::move(repeats));
  node.inputs = {node.inputs[0], v};
  move_to(node, 6);
  note(graph, node, from, "tiles and axis as repeats");
  graph.rebuild_links();
  return ok_status();
}

// Upsample-1 scales the last two dims of a 4-D input.
Status adapt_upsample(Graph& graph, Node& node) {
  const int from = node.since_version;
  const float h = node.attr_float("height_scale", 0.0f), w = node.attr_float("width_scale", 0.0f);
  if (!(h >= 1.0f && w >= 1.0f))
    return invalid_graph(node.describe() + ": Upsample-1 needs height_scale and width_scale of at least 1");
  std::string mode = node.attr_string("mode", "nearest");
  std::transform(mode.begin(), mode.end(), mode.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (mode == "bilinear") mode = "linear";
  node.attributes.clear();
  node.attributes.push_back(rewrite::string_attribute("mode", mode));
  Attribute scales;
  scales.name = "scales";
  scales.type = AttributeType::kFloats;
  scales.floats = {1.0f, 1.0f, h, w};
  node.attributes.push_back(std::move(scales));
  move_to(node, 7);
  note(graph, node, from, "height_scale and width_scale as scales");
  return ok_status();
}

}  // namespace

Status adapt_old_version(Graph& graph, NodeId id) {
  Node& node = graph.nodes[static_cast<size_t>(id)];
  if (!node.domain.empty() && node.domain != "ai.onnx") return ok_status();
  if (node.since_version == 0 || node.since_version >= 7) return ok_status();
  const std::string& op = node.op_type;
  for (std::string_view legacy : kLegacyBroadcastOps)
    if (op == legacy) return adapt_legacy_broadcast(graph, id);
  if (op == "PRelu") return adapt_prelu(graph, id);
  if (op == "Cast" && node.since_version < 6) return adapt_cast(graph, node);
  if (op == "Reshape" && node.since_version < 5) return adapt_reshape(graph, node);
  if (op == "Split" && node.since_version < 2) return adapt_split(graph, node);
  if (op == "Tile" && node.since_version < 6) return adapt_tile(graph, node);
  if (op == "Upsample" && node.since_version < 7) return adapt_upsample(graph, node);
  if (op == "Concat" && node.since_version < 4) {
    const int from = node.since_version;
    if (!node.has_attr("axis")) node.attributes.push_back(rewrite::int_attribute("axis", 1));
    move_to(node, 4);
    note(graph, node, from, "axis made explicit");
    return ok_status();
  }
  for (const AttributeDrop& d : kAttributeDrops) {
    if (op != d.op || node.since_version >= d.to) continue;
    const int from = node.since_version;
    std::string dropped;
    for (std::string_view name : d.drop)
      if (!name.empty() && drop_attribute(node, name)) dropped += (dropped.empty() ? "" : ", ") + std::string(name);
    move_to(node, d.to);
    note(graph, node, from, dropped.empty() ? "same semantics" : dropped + " dropped");
    return ok_status();
  }
  return ok_status();
}

}  // namespace sy
