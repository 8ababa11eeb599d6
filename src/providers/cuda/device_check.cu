// Whether this library holds code the current GPU can run. A GPU older
// than every compiled architecture (or newer than the PTX and the driver
// can JIT) fails here with "no kernel image", and the provider reports it
// as unavailable instead of failing on the first kernel of a run.
#include "device_check.h"

namespace sy::cuda {
namespace {

__global__ void probe_kernel(int* out) {
  if (out != nullptr) *out = 1;
}

}  // namespace

Status check_kernel_image() {
  cudaFuncAttributes attributes{};
  return cuda_status(cudaFuncGetAttributes(&attributes, probe_kernel), "loading this library's GPU code");
}

}  // namespace sy::cuda
