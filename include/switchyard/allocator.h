// Allocator: raw memory on one device. The CPU allocator aligns to 64 bytes
// so that vector kernels may use aligned loads on buffers they allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "switchyard/device.h"

namespace sy {

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns nullptr on failure; callers turn that into a kOutOfMemory Status.
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* p) = 0;
  virtual Device device() const = 0;
  // Why the last allocate on this thread failed, when the allocator knows
  // more than "out of memory" (a device arena's limit and usage).
  virtual std::string last_error() const { return {}; }
};

inline constexpr size_t kCpuAlignment = 64;

// Process-wide host allocator; thread safe.
Allocator* cpu_allocator();

// How many allocations the host allocator has made since the process
// started; lets tests check that run() is allocation-free in steady state.
uint64_t cpu_allocation_count();

}  // namespace sy
