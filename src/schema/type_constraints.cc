#include "schema/type_constraints.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace sy {
namespace {

// True when the type is known down to its element type, so that its
// type_string() names it exactly ("seq(tensor(float))").
bool fully_known(const ValueType& t) {
  switch (t.kind) {
    case ValueType::Kind::kTensor: return t.dtype != DataType::kUndefined;
    case ValueType::Kind::kSequence:
    case ValueType::Kind::kOptional: return t.element != nullptr && fully_known(*t.element);
    default: return false;  // unknown, map, sparse: the spec's list is not checked
  }
}

// The next space-separated token of `list` from `pos`, advancing `pos`.
std::string_view next_token(std::string_view list, size_t& pos, char separator) {
  while (pos < list.size() && list[pos] == separator) ++pos;
  const size_t start = pos;
  while (pos < list.size() && list[pos] != separator) ++pos;
  return list.substr(start, pos - start);
}

// The accepted types of `var` ("tensor(float),tensor(double)"); empty when
// the spec lists no constraint for it.
std::string_view accepted_types(std::string_view constraints, std::string_view var) {
  size_t pos = 0;
  while (pos < constraints.size()) {
    const std::string_view entry = next_token(constraints, pos, ';');
    const size_t eq = entry.find('=');
    if (eq != std::string_view::npos && entry.substr(0, eq) == var) return entry.substr(eq + 1);
  }
  return {};
}

bool accepts(std::string_view accepted, std::string_view type) {
  size_t pos = 0;
  while (pos < accepted.size())
    if (next_token(accepted, pos, ',') == type) return true;
  return false;
}

std::string readable_list(std::string_view accepted) {
  std::string out(accepted);
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] == ',') out.insert(++i, " ");
  return out;
}

std::string input_label(const Graph& graph, const Node& node, size_t i) {
  return "input " + std::to_string(i) + " '" + graph.values[static_cast<size_t>(node.inputs[i])].name + "'";
}

}  // namespace

Status check_input_types(const Graph& graph, const Node& node, const OpVersion& spec) {
  if (spec.inputs.empty()) return ok_status();
  // The spec's input list, with the last entry repeated for a variadic tail.
  std::vector<std::string_view> declared;
  size_t pos = 0;
  while (pos < spec.inputs.size()) {
    const std::string_view token = next_token(spec.inputs, pos, ' ');
    if (!token.empty()) declared.push_back(token);
  }
  if (declared.empty()) return ok_status();
  // The type each variable took, and the input that gave it.
  std::vector<std::pair<std::string_view, size_t>> bound;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoValue) continue;
    std::string_view token = declared[std::min(i, declared.size() - 1)];
    if (i >= declared.size() && token.back() != '*' && token.back() != '+') break;  // arity is checked elsewhere
    const bool heterogeneous = token.back() == '+';
    if (token.back() == '*' || token.back() == '+') token.remove_suffix(1);
    const ValueType& type = graph.values[static_cast<size_t>(node.inputs[i])].type;
    if (!fully_known(type)) continue;
    const std::string actual = type.type_string();
    const bool literal = token.find('(') != std::string_view::npos;  // "tensor(int64)"
    if (literal) {
      if (actual != token)
        return invalid_graph(node.describe() + ": " + input_label(graph, node, i) + " is " + actual + "; " +
                             node.op_type + "-" + std::to_string(spec.since_version) + " takes " +
                             std::string(token) + " there");
      continue;
    }
    const std::string_view accepted = accepted_types(spec.type_constraints, token);
    if (!accepted.empty() && !accepts(accepted, actual))
      return invalid_graph(node.describe() + ": " + input_label(graph, node, i) + " is " + actual + "; type " +
                           std::string(token) + " of " + node.op_type + "-" + std::to_string(spec.since_version) +
                           " accepts " + readable_list(accepted));
    if (heterogeneous) continue;
    size_t first = node.inputs.size();
    for (const auto& [var, input] : bound)
      if (var == token) first = input;
    if (first == node.inputs.size()) {
      bound.emplace_back(token, i);
      continue;
    }
    const ValueType& first_type = graph.values[static_cast<size_t>(node.inputs[first])].type;
    const std::string expected = first_type.type_string();
    if (expected != actual)
      return invalid_graph(node.describe() + ": " + input_label(graph, node, i) + " is " + actual + " but " +
                           input_label(graph, node, first) + " is " + expected + "; " + node.op_type + "-" +
                           std::to_string(spec.since_version) + " gives both type " + std::string(token) +
                           ", so they must match");
  }
  return ok_status();
}

}  // namespace sy
