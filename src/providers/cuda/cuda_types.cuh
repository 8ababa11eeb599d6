// Element types on the device: float, __half and __nv_bfloat16 kernels load
// through to_float and store through from_float, so one templated kernel
// body serves all three and accumulates in float.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda_common.h"

namespace sy::cuda {

template <typename T>
__host__ __device__ inline float to_float(T v) {
  return static_cast<float>(v);
}
template <>
__host__ __device__ inline float to_float<__half>(__half v) {
  return __half2float(v);
}
template <>
__host__ __device__ inline float to_float<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T>
__host__ __device__ inline T from_float(float v) {
  return static_cast<T>(v);
}
template <>
__host__ __device__ inline __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__host__ __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// Calls f.template operator()<T>() with T the device type of `dtype`, for
// the three float types; returns false for others.
template <typename F>
bool dispatch_float_type(int32_t dtype, F&& f) {
  switch (static_cast<DataType>(dtype)) {
    case DataType::kFloat: f.template operator()<float>(); return true;
    case DataType::kFloat16: f.template operator()<__half>(); return true;
    case DataType::kBfloat16: f.template operator()<__nv_bfloat16>(); return true;
    default: return false;
  }
}

// A one-dimensional grid-stride loop, in 64-bit indices:
//   for (int64_t i = thread_index(); i < n; i += grid_stride())
__device__ __forceinline__ int64_t thread_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// Shapes passed to kernels by value (fits in a launch's parameter space).
struct DeviceShape {
  int rank = 0;
  int64_t dims[SY_MAX_RANK] = {};
  int64_t strides[SY_MAX_RANK] = {};  // elements; 0 along a broadcast dimension
};

}  // namespace sy::cuda
