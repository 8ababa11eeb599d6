#include "switchyard/allocator.h"

#include <atomic>
#include <cstdlib>

#include <sys/mman.h>

namespace sy {
namespace {

std::atomic<uint64_t> g_allocations{0};

// Blocks of a megabyte or more (a session's activation arena, large
// weights) start on a 2 MB boundary and ask the kernel (madvise) for huge
// pages: the kernels stream through them, and the hardware prefetcher
// stops at every 4 KB page boundary, the TLB misses on every few. Only a
// hint; where transparent huge pages are off nothing changes.
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugePageFrom = size_t{1} << 20;

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override {
    // aligned_alloc needs a size that is a multiple of the alignment.
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (bytes >= kHugePageFrom) {
      const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
      void* p = std::aligned_alloc(kHugePage, rounded);
      if (p != nullptr) madvise(p, rounded, MADV_HUGEPAGE);
      return p;
    }
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
