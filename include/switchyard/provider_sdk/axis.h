// The provider SDK: helpers every provider's kernels need to agree on
// with the core, header-only and free of the core's types, so that a
// provider library built apart (the CUDA one, an out-of-tree plugin)
// includes only include/switchyard/. This one: axes.
#pragma once

#include <cstdint>

namespace sy::provider_sdk {

// Normalises `axis` in [-rank, rank) to [0, rank); false when out of range.
inline bool normalize_axis(int64_t& axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  return true;
}

}  // namespace sy::provider_sdk
