#include "switchyard/allocator.h"

#include <cstdlib>

namespace sy {
namespace {

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override {
    // aligned_alloc needs a size that is a multiple of the alignment.
    const size_t rounded = (bytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
    return std::aligned_alloc(kCpuAlignment, rounded == 0 ? kCpuAlignment : rounded);
  }
  void deallocate(void* p) override { std::free(p); }
  Device device() const override { return kCpuDevice; }
};

}  // namespace

Allocator* cpu_allocator() {
  static CpuAllocator allocator;
  return &allocator;
}

}  // namespace sy
