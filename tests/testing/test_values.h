// Deterministic test data for kernel tests: multiples of 1/500 in [-2, 2]
// from a fixed seed, so products and short sums stay exact enough that a
// mismatch means a bug, not rounding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sy::testing {

inline std::vector<float> test_values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 7;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>((s >> 9) % 2001) - 1000) / 500.0f;
  }
  return v;
}

}  // namespace sy::testing
