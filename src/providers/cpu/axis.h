// Axis helpers shared by the CPU kernel families.
#pragma once

#include <cstdint>

namespace sy::cpu {

// Normalises `axis` in [-rank, rank) to [0, rank); false when out of range.
inline bool normalize_axis(int64_t& axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  return true;
}

}  // namespace sy::cpu
