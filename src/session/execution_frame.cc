#include "session/execution_frame.h"

namespace sy {

GrowableBuffer& GrowableBuffer::operator=(GrowableBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) allocator_->deallocate(data_);
    allocator_ = other.allocator_;
    data_ = other.data_;
    capacity_ = other.capacity_;
    other.data_ = nullptr;
    other.capacity_ = 0;
  }
  return *this;
}

GrowableBuffer::~GrowableBuffer() {
  if (data_ != nullptr) allocator_->deallocate(data_);
}

Result<void*> GrowableBuffer::reserve(size_t bytes) {
  if (bytes <= capacity_ && data_ != nullptr) return data_;
  if (data_ != nullptr) allocator_->deallocate(data_);
  data_ = nullptr;
  capacity_ = 0;
  // Round up so that small growth does not reallocate every time.
  const size_t rounded = (bytes + 255) / 256 * 256;
  data_ = allocator_->allocate(rounded == 0 ? 256 : rounded);
  if (data_ == nullptr) {
    const std::string why = allocator_->last_error();
    return Status(StatusCode::kOutOfMemory, "failed to allocate " + std::to_string(rounded) + " bytes on " +
                                                allocator_->device().to_string() + (why.empty() ? "" : ": " + why));
  }
  capacity_ = rounded == 0 ? 256 : rounded;
  return data_;
}

ExecutionFrame::ExecutionFrame(const ExecutionPlan& plan, std::span<Allocator* const> provider_allocators) {
  values.resize(plan.values.size());
  slots.reserve(plan.slots.size());
  for (const SlotPlan& s : plan.slots) slots.emplace_back(s.allocator);
  scratch.reserve(provider_allocators.size());
  for (Allocator* a : provider_allocators) scratch.emplace_back(a);
  input_ptrs.resize(plan.max_step_inputs);
  prepared.resize(plan.steps.size());
}

}  // namespace sy
