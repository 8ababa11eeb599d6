// Text for a JSON string value, for the few places that write JSON by hand
// (the profiler's trace, `switchyard bench --json`).
#pragma once

#include <string>

namespace sy {

// `in` with quotes and backslashes escaped and control characters dropped
// (node names and paths never need them), ready to go between quotes.
inline std::string json_escape(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

}  // namespace sy
