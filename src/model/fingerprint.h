// Fingerprints: the same input gives the same value in every process, for
// keys of caches kept on disk (a plugin's per-model caches, compiled
// partitions' engines).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/graph.h"

namespace sy {

// FNV-1a over a sequence of strings; each is ended by a separator byte, so
// ("ab", "c") and ("a", "bc") differ.
class Fingerprint {
 public:
  Fingerprint& add(std::string_view part);
  // 16 hex digits.
  std::string hex() const;

 private:
  uint64_t h_ = 14695981039346656037ull;  // FNV-1a's 64-bit offset basis
};

// The graph's live nodes in file order: domain, op type, name, attribute
// names and the static types of their inputs.
std::string graph_fingerprint(const Graph& graph);

}  // namespace sy
