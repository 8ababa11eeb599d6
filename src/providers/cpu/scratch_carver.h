// Carves a kernel's run-time scratch (KernelContext::scratch) into pieces,
// each 64-byte aligned: add() each piece while sizing, ask for total(),
// then pointer() at each piece's offset.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "providers/kernel.h"

namespace sy::cpu {

class ScratchCarver {
 public:
  // Adds a piece of `count` T's; its offset is returned for pointer().
  template <typename T>
  size_t add(int64_t count) {
    const size_t at = total_;
    total_ += KernelContext::scratch_align(static_cast<size_t>(std::max<int64_t>(count, 0)) * sizeof(T));
    return at;
  }
  size_t total() const { return std::max<size_t>(total_, 64); }
  template <typename T>
  static T* pointer(void* base, size_t offset) {
    return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
  }

 private:
  size_t total_ = 0;
};

}  // namespace sy::cpu
