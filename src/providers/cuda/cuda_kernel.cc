#include "cuda_kernel.h"

#include "cuda_provider.h"

namespace sy::cuda {

cudaStream_t KernelRunContext::stream() const { return provider_->stream(); }

std::string KernelRunContext::scratch_failure(size_t bytes) const {
  return "scratch of " + format_bytes(bytes) + " on " + provider_->device_name() + ": " + provider_->last_error();
}

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
