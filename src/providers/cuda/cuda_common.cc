#include "cuda_common.h"

namespace sy::cuda {

Status cuda_status(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return ok_status();
  std::string message = std::string(what) + ": " + cudaGetErrorName(error) + ": " + cudaGetErrorString(error);
  if (error == cudaErrorNoKernelImageForDevice || error == cudaErrorUnsupportedPtxVersion)
    message += " (this provider was built for sm_80 and sm_90 with sm_90 PTX; rebuild with CMAKE_CUDA_ARCHITECTURES "
               "naming this GPU, or update the driver so it can compile the PTX)";
  if (error == cudaErrorMemoryAllocation) return out_of_memory(message);
  return runtime_error(message);
}

std::string ints_string(const int64_t* v, int64_t n) {
  std::string s = "[";
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) s += ',';
    s += std::to_string(v[i]);
  }
  return s + "]";
}

}  // namespace sy::cuda
