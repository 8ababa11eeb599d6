// Deterministic test data for kernel tests, from a fixed seed.
#pragma once

#include <cstddef>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace sy::testing {

// Multiples of 1/500 in [-2, 2], so products and short sums stay exact
// enough that a mismatch means a bug, not rounding.
inline std::vector<float> test_values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 7;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>((s >> 9) % 2001) - 1000) / 500.0f;
  }
  return v;
}

// Every `every`-th element of v (starting at seed % every) becomes, in
// turn, NaN, +inf, -inf, -0.0 or a denormal: the values a hostile input
// holds and a kernel must carry through as the reference does.
inline void sprinkle_nonfinite(std::vector<float>& v, size_t every, uint32_t seed) {
  const float kinds[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity(), -0.0f,
                         std::numeric_limits<float>::denorm_min() * 1000.0f};
  size_t k = 0;
  for (size_t i = seed % every; i < v.size(); i += every) v[i] = kinds[k++ % 5];
}

// a and b equal, or both NaN (NaN != NaN).
inline bool same_or_both_nan(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// got within tol of a finite want; otherwise the same infinity, or NaN.
inline bool near_or_same_nonfinite(float got, double want, double tol) {
  if (!std::isfinite(want)) return same_or_both_nan(got, static_cast<float>(want));
  return std::fabs(static_cast<double>(got) - want) <= tol;
}

// n values drawn uniformly from [lo, hi) (float or double).
template <typename T>
std::vector<T> random_uniform(size_t n, T lo, T hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<T> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = dist(gen);
  return v;
}

// n values of an 8-bit integer type, each of the 256 equally likely.
template <typename T>
std::vector<T> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(static_cast<uint8_t>(gen() & 0xffu));
  return v;
}

inline std::vector<float> random_floats(size_t n, float lo, float hi, uint32_t seed) {
  return random_uniform<float>(n, lo, hi, seed);
}

}  // namespace sy::testing
