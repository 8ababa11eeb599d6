#include "switchyard/allocator.h"

#include <atomic>
#include <cstdlib>

namespace sy {
namespace {

std::atomic<uint64_t> g_allocations{0};

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override {
    // aligned_alloc needs a size that is a multiple of the alignment.
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    const size_t rounded = (bytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
    return std::aligned_alloc(kCpuAlignment, rounded == 0 ? kCpuAlignment : rounded);
  }
  void deallocate(void* p) override { std::free(p); }
  Device device() const override { return kCpuDevice; }
};

}  // namespace

uint64_t cpu_allocation_count() { return g_allocations.load(std::memory_order_relaxed); }

Allocator* cpu_allocator() {
  static CpuAllocator allocator;
  return &allocator;
}

}  // namespace sy
