// Bytes of bool tensors. Kernels read bool elements as C++ bool, for which
// any byte other than 0 or 1 is undefined behaviour (UBSan reports it, and
// the compiler may assume it never happens: `b ? 1 : 0` can return 2). A
// bool tensor from outside (a model's data, a caller's buffer, a numpy
// array viewed from uint8) must be checked or normalised before a kernel
// sees it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sy {

// Rewrites every nonzero byte to 1.
inline void normalize_bool_bytes(uint8_t* bytes, size_t n) {
  for (size_t i = 0; i < n; ++i) bytes[i] = bytes[i] != 0 ? 1 : 0;
}

// The index of the first byte that is neither 0 nor 1, or n when none is.
inline size_t first_invalid_bool_byte(const uint8_t* bytes, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (bytes[i] > 1) return i;
  return n;
}

}  // namespace sy
