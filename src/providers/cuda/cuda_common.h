// Shared basics of the CUDA provider library. The library is built apart
// from the core and talks to it only through switchyard/provider_abi.h, so
// it uses the provider SDK's Status, type names and tensor view, not the
// core's.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/data_type.h"
#include "switchyard/provider_abi.h"
#include "switchyard/provider_sdk/dtype.h"
#include "switchyard/provider_sdk/status.h"
#include "switchyard/provider_sdk/tensor_view.h"

namespace sy::cuda {

// The provider SDK's Status (switchyard/provider_sdk/status.h).
using provider_sdk::Status;
using provider_sdk::ok_status;
using provider_sdk::runtime_error;
using provider_sdk::not_implemented;
using provider_sdk::invalid_argument;
using provider_sdk::invalid_graph;
using provider_sdk::out_of_memory;

// A CUDA runtime error as a Status naming what was being done.
Status cuda_status(cudaError_t error, const char* what);

// Checks the launch just queued (bad configuration, no kernel image for
// this GPU) without waiting for it to finish.
inline Status check_launch(const char* kernel_name) { return cuda_status(cudaGetLastError(), kernel_name); }

// Bytes per element and names of the ABI's dtype numbers
// (switchyard/provider_sdk/dtype.h).
using provider_sdk::dtype_name;
using provider_sdk::dtype_size;

// "[1,2,3]", for messages about shape and attribute lists.
std::string ints_string(const int64_t* v, int64_t n);
inline std::string ints_string(const std::vector<int64_t>& v) {
  return ints_string(v.data(), static_cast<int64_t>(v.size()));
}

// A tensor as a kernel sees it (switchyard/provider_sdk/tensor_view.h).
using TensorRef = provider_sdk::TensorView;

// Largest number of elements one launch of a simple grid-stride kernel
// covers per thread block.
inline constexpr int kThreadsPerBlock = 256;
inline unsigned grid_size(int64_t n, int threads = kThreadsPerBlock) {
  const int64_t blocks = (n + threads - 1) / threads;
  // Grid-stride loops cover the rest; 65535*8 blocks keep every SM busy.
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 524280 ? 524280 : blocks));
}

}  // namespace sy::cuda
