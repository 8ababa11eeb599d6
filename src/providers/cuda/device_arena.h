// DeviceArena: the CUDA provider's memory. cudaMalloc and cudaFree are slow
// and synchronise the device, so the arena takes large regions from the
// backing allocator and hands out pieces of them: best fit, split on
// allocation, merged with free neighbours on release. Regions grow by the
// arena_extend_strategy option and their total never exceeds
// gpu_mem_limit; a request that would pass it fails with a message naming
// the bytes asked for, the limit and what is held and in use.
//
// Plain host code: the backing allocator is a pair of functions, so the
// tests drive it with malloc on any machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "cuda_options.h"

namespace sy::cuda {

struct ArenaBacking {
  // Returns nullptr on failure and may write why into `error`.
  void* (*allocate)(void* state, size_t bytes, std::string& error) = nullptr;
  void (*deallocate)(void* state, void* pointer) = nullptr;
  void* state = nullptr;
};

struct ArenaStats {
  size_t reserved = 0;     // bytes taken from the backing allocator
  size_t in_use = 0;       // bytes handed out
  size_t peak_in_use = 0;
  size_t regions = 0;
  size_t allocations = 0;  // pieces handed out, in total
};

class DeviceArena {
 public:
  static constexpr size_t kAlignment = 256;
  static constexpr size_t kMinRegion = size_t{2} << 20;  // 2 MiB

  DeviceArena(ArenaBacking backing, size_t limit, ArenaExtendStrategy strategy, std::string device_name);
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // nullptr on failure; last_error() then says why.
  void* allocate(size_t bytes);
  void deallocate(void* pointer);
  // The message for this thread's last failed allocate.
  static const std::string& last_error();

  ArenaStats stats() const;

 private:
  struct Block {
    size_t size = 0;
    bool free = true;
    uintptr_t region = 0;  // start of the region it belongs to
  };
  bool extend(size_t bytes, std::string& error);  // mutex held
  void release_free_regions();                    // mutex held
  void insert_free(uintptr_t address, size_t size);
  void erase_free(uintptr_t address, size_t size);

  ArenaBacking backing_;
  size_t limit_;
  ArenaExtendStrategy strategy_;
  std::string device_name_;
  mutable std::mutex mutex_;
  std::map<uintptr_t, Block> blocks_;                 // every block by address
  std::multimap<size_t, uintptr_t> free_by_size_;     // free blocks, for best fit
  std::map<uintptr_t, size_t> regions_;               // region start -> size
  size_t last_region_ = 0;
  ArenaStats stats_;
};

// "1.5 GiB (1610612736 bytes)"
std::string format_bytes(size_t bytes);

}  // namespace sy::cuda
