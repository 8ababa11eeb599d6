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

size_t dtype_size(int32_t dtype) {
  switch (static_cast<DataType>(dtype)) {
    case DataType::kFloat: case DataType::kInt32: case DataType::kUint32: return 4;
    case DataType::kFloat16: case DataType::kBfloat16: case DataType::kInt16: case DataType::kUint16: return 2;
    case DataType::kDouble: case DataType::kInt64: case DataType::kUint64: return 8;
    case DataType::kInt8: case DataType::kUint8: case DataType::kBool: return 1;
    default: return 0;
  }
}

const char* dtype_name(int32_t dtype) {
  switch (static_cast<DataType>(dtype)) {
    case DataType::kFloat: return "float";
    case DataType::kFloat16: return "float16";
    case DataType::kBfloat16: return "bfloat16";
    case DataType::kDouble: return "double";
    case DataType::kInt8: return "int8";
    case DataType::kUint8: return "uint8";
    case DataType::kInt16: return "int16";
    case DataType::kUint16: return "uint16";
    case DataType::kInt32: return "int32";
    case DataType::kUint32: return "uint32";
    case DataType::kInt64: return "int64";
    case DataType::kUint64: return "uint64";
    case DataType::kBool: return "bool";
    case DataType::kString: return "string";
    default: return "other";
  }
}

std::string ints_string(const int64_t* v, int64_t n) {
  std::string s = "[";
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) s += ',';
    s += std::to_string(v[i]);
  }
  return s + "]";
}

std::string TensorRef::describe() const {
  std::string s = std::string(dtype_name(t.dtype)) + "[";
  for (int i = 0; i < t.rank; ++i) s += (i ? "," : "") + (t.dims[i] < 0 ? std::string("?") : std::to_string(t.dims[i]));
  return s + "]";
}

}  // namespace sy::cuda
