#include "model/fingerprint.h"

#include <cstdio>

namespace sy {

Fingerprint& Fingerprint::add(std::string_view part) {
  constexpr uint64_t kPrime = 1099511628211ull;
  for (char c : part) {
    h_ ^= static_cast<unsigned char>(c);
    h_ *= kPrime;
  }
  h_ ^= 0xff;
  h_ *= kPrime;
  return *this;
}

std::string Fingerprint::hex() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
  return buf;
}

std::string graph_fingerprint(const Graph& graph) {
  Fingerprint f;
  for (const Node& node : graph.nodes) {
    if (node.removed) continue;
    f.add(node.domain).add(node.op_type).add(node.name);
    for (const Attribute& a : node.attributes) f.add(a.name);
    for (ValueId v : node.inputs)
      f.add(v == kNoValue ? std::string_view("-") : graph.values[static_cast<size_t>(v)].type.type_string());
  }
  return f.hex();
}

}  // namespace sy
