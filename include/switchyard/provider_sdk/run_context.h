// RunContext: a kernel's view of one run, over the host's ABI table
// (sy_host_api's ctx_* entries): its inputs as TensorViews, its outputs'
// memory and scratch memory. Part of the provider SDK (see axis.h).
//
// A context is made for every kernel call, so it must not allocate: the
// inputs are read once into fixed storage for kMaxKernelInputs of them, and
// the glue (plugin.h) declines nodes with more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "switchyard/provider_abi.h"
#include "switchyard/provider_sdk/kernel_state.h"
#include "switchyard/provider_sdk/status.h"
#include "switchyard/provider_sdk/tensor_view.h"

namespace sy::provider_sdk {

// The most inputs a kernel built on the SDK takes.
inline constexpr int kMaxKernelInputs = 64;

class RunContext {
 public:
  RunContext(const sy_host_api* host, sy_kernel_context* ctx) : host_(host), ctx_(ctx) {
    num_inputs_ = host_->ctx_num_inputs(ctx_);
    if (num_inputs_ > kMaxKernelInputs) num_inputs_ = kMaxKernelInputs;  // such nodes are never claimed
    for (int i = 0; i < num_inputs_; ++i) {
      inputs_[i].view = TensorView{};
      present_[i] = host_->ctx_input(ctx_, i, &inputs_[i].view.t) != 0;
    }
  }
  virtual ~RunContext() = default;
  RunContext(const RunContext&) = delete;
  RunContext& operator=(const RunContext&) = delete;

  int num_inputs() const { return num_inputs_; }
  // nullptr when input i is omitted.
  const TensorView* input(int i) const { return i >= 0 && i < num_inputs_ && present_[i] ? &inputs_[i].view : nullptr; }
  int num_outputs() const { return host_->ctx_num_outputs(ctx_); }
  // False for an omitted optional output (allocate_output still gives it
  // memory, which nothing reads).
  bool output_requested(int i) const { return host_->ctx_output_requested(ctx_, i) != 0; }
  // Memory for output i on the provider's device, with this type and shape.
  Status allocate_output(int i, int32_t dtype, int rank, const int64_t* dims, TensorView& out) {
    char error[512] = {};
    const int code = host_->ctx_allocate_output(ctx_, i, dtype, rank, dims, &out.t, error, sizeof error);
    if (code != SY_STATUS_OK) return Status(code, error);
    return ok_status();
  }
  // Device memory valid until the kernel returns; an error, never null
  // memory, when there is none.
  Status scratch(size_t bytes, void** memory) {
    *memory = host_->ctx_scratch(ctx_, bytes);
    if (*memory == nullptr && bytes > 0) return out_of_memory(scratch_failure(bytes));
    return ok_status();
  }

  const sy_host_api* host() const { return host_; }

  // What the kernel's prepare() made for these inputs' shapes, as the
  // kernel's own KernelState subclass S; nullptr when it made nothing or
  // the core gave no prepare phase.
  template <typename S>
  const S* state() const {
    if (host_->size < sizeof(sy_host_api) || host_->ctx_state == nullptr) return nullptr;
    return static_cast<const S*>(static_cast<const KernelState*>(host_->ctx_state(ctx_)));
  }

 protected:
  // The message when scratch memory runs out; a provider that knows why
  // (its allocator's last error) says so.
  virtual std::string scratch_failure(size_t bytes) const {
    return "no scratch memory of " + std::to_string(bytes) + " bytes left on the provider's device";
  }

 private:
  const sy_host_api* host_;
  sy_kernel_context* ctx_;
  int num_inputs_ = 0;
  // Left uninitialised beyond the node's own inputs: a context is made for
  // every kernel call.
  union Slot {
    Slot() {}
    TensorView view;
  };
  Slot inputs_[kMaxKernelInputs];
  bool present_[kMaxKernelInputs];
};

}  // namespace sy::provider_sdk
