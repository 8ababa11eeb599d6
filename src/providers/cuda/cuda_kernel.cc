#include "cuda_kernel.h"

#include "cuda_provider.h"

namespace sy::cuda {

KernelRunContext::KernelRunContext(const sy_host_api* host, sy_kernel_context* ctx, CudaProvider* provider)
    : host_(host), ctx_(ctx), provider_(provider) {
  num_inputs_ = host_->ctx_num_inputs(ctx_);
  if (num_inputs_ > kMaxInputs) num_inputs_ = kMaxInputs;  // create_kernel declines nodes with more
  for (int i = 0; i < num_inputs_; ++i) {
    inputs_[i].ref = TensorRef{};
    present_[i] = host_->ctx_input(ctx_, i, &inputs_[i].ref.t) != 0;
  }
}

Status KernelRunContext::allocate_output(int i, int32_t dtype, int rank, const int64_t* dims, TensorRef& out) {
  char error[512] = {};
  const int code = host_->ctx_allocate_output(ctx_, i, dtype, rank, dims, &out.t, error, sizeof error);
  if (code != SY_STATUS_OK) return Status(code, error);
  return ok_status();
}

Status KernelRunContext::scratch(size_t bytes, void** memory) {
  *memory = host_->ctx_scratch(ctx_, bytes);
  if (*memory == nullptr && bytes > 0)
    return out_of_memory("scratch of " + format_bytes(bytes) + " on " + provider_->device_name() + ": " +
                         provider_->last_error());
  return ok_status();
}

cudaStream_t KernelRunContext::stream() const { return provider_->stream(); }

const std::vector<CudaKernelDef>& cuda_kernel_table() {
  static const std::vector<CudaKernelDef> table = [] {
    std::vector<CudaKernelDef> all;
    for (CudaKernelTableFunction family : cuda_kernel_families()) {
      const std::span<const CudaKernelDef> rows = family();
      all.insert(all.end(), rows.begin(), rows.end());
    }
    return all;
  }();
  return table;
}

}  // namespace sy::cuda
