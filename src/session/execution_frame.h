// ExecutionFrame: the per-run state of a session — value tensors, the
// planned slot buffers and scratch memory. A session keeps a pool of
// frames; each run takes one, so concurrent runs never share memory, and a
// frame's buffers are reused by the next run that takes it.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "session/execution_plan.h"

namespace sy {

// A growable buffer on one device.
class GrowableBuffer {
 public:
  GrowableBuffer() = default;
  explicit GrowableBuffer(Allocator* allocator) : allocator_(allocator) {}
  GrowableBuffer(GrowableBuffer&& other) noexcept { *this = std::move(other); }
  GrowableBuffer& operator=(GrowableBuffer&& other) noexcept;
  GrowableBuffer(const GrowableBuffer&) = delete;
  GrowableBuffer& operator=(const GrowableBuffer&) = delete;
  ~GrowableBuffer();

  // At least `bytes` of memory; reallocates (dropping the contents) only
  // when the current buffer is too small.
  Result<void*> reserve(size_t bytes);
  size_t capacity() const { return capacity_; }
  Allocator* allocator() const { return allocator_; }

 private:
  Allocator* allocator_ = nullptr;
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

// A step's prepared state in one frame: what its kernel's prepare() made,
// and the input shapes it made it for.
struct PreparedStep {
  // Per input: its rank (-1 when omitted), then its dims.
  std::vector<int64_t> shapes;
  std::unique_ptr<KernelState> state;
  bool prepared = false;
};

class ExecutionFrame {
 public:
  ExecutionFrame(const ExecutionPlan& plan, std::span<Allocator* const> provider_allocators);

  std::vector<Tensor> values;             // per ValueId (constants are read from the plan)
  std::vector<GrowableBuffer> slots;      // per planned slot
  std::vector<GrowableBuffer> scratch;    // per provider
  std::vector<const Tensor*> input_ptrs;  // reused for each step's inputs
  std::vector<PreparedStep> prepared;     // per step; used by the steps whose kernel prepares
};

}  // namespace sy
