#pragma once

#include "cuda_common.h"

namespace sy::cuda {

// Fails with cudaErrorNoKernelImageForDevice (and how to fix it) when the
// current device cannot run this library's compiled code.
Status check_kernel_image();

}  // namespace sy::cuda
