// The NVIDIA libraries the CUDA provider uses besides the CUDA runtime
// (which is linked statically): cuBLAS and cuDNN, and cuBLASLt, which
// cuBLAS itself needs (it is opened first, so that a cuBLAS found in the
// same folder resolves it; none of its functions is called). They are opened
// with dlopen, not linked, so that
//   - a missing or wrong-version library becomes the provider's
//     "unavailable" reason, naming every folder searched, instead of the
//     provider library failing to load with a bare loader message;
//   - they are found where people actually have them: LD_LIBRARY_PATH and
//     the loader cache, /usr/local/cuda, $CUDA_HOME/$CUDA_PATH, and the lib
//     folders of NVIDIA's Python wheels (nvidia/cudnn/lib, ...);
//   - cuDNN 9 is preferred and cuDNN 8 still works: the provider calls only
//     functions both versions export with the same signatures.
#pragma once

#include <cublas_v2.h>
#include <cudnn.h>

#include <string>
#include <vector>

namespace sy::cuda {

// One function pointer per entry point used, named like the function.
struct CublasApi {
  decltype(&cublasCreate_v2) Create = nullptr;
  decltype(&cublasDestroy_v2) Destroy = nullptr;
  decltype(&cublasSetStream_v2) SetStream = nullptr;
  decltype(&cublasSetMathMode) SetMathMode = nullptr;
  decltype(&cublasSetWorkspace_v2) SetWorkspace = nullptr;
  decltype(&cublasGetProperty) GetProperty = nullptr;
  // Spelled out: C++ overloads these names (cublasComputeType_t vs the
  // older cudaDataType compute argument), so decltype cannot pick one.
  cublasStatus_t (*GemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                           const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                           cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  cublasStatus_t (*GemmStridedBatchedEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                         const void*, const void*, cudaDataType, int, long long, const void*,
                                         cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                         long long, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
};


struct CudnnApi {
  decltype(&cudnnGetVersion) GetVersion = nullptr;
  decltype(&cudnnGetErrorString) GetErrorString = nullptr;
  decltype(&cudnnCreate) Create = nullptr;
  decltype(&cudnnDestroy) Destroy = nullptr;
  decltype(&cudnnSetStream) SetStream = nullptr;
  decltype(&cudnnCreateTensorDescriptor) CreateTensorDescriptor = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) DestroyTensorDescriptor = nullptr;
  decltype(&cudnnSetTensorNdDescriptor) SetTensorNdDescriptor = nullptr;
  decltype(&cudnnCreateFilterDescriptor) CreateFilterDescriptor = nullptr;
  decltype(&cudnnDestroyFilterDescriptor) DestroyFilterDescriptor = nullptr;
  decltype(&cudnnSetFilterNdDescriptor) SetFilterNdDescriptor = nullptr;
  decltype(&cudnnCreateConvolutionDescriptor) CreateConvolutionDescriptor = nullptr;
  decltype(&cudnnDestroyConvolutionDescriptor) DestroyConvolutionDescriptor = nullptr;
  decltype(&cudnnSetConvolutionNdDescriptor) SetConvolutionNdDescriptor = nullptr;
  decltype(&cudnnSetConvolutionGroupCount) SetConvolutionGroupCount = nullptr;
  decltype(&cudnnSetConvolutionMathType) SetConvolutionMathType = nullptr;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) GetConvolutionForwardAlgorithm_v7 = nullptr;
  decltype(&cudnnFindConvolutionForwardAlgorithmEx) FindConvolutionForwardAlgorithmEx = nullptr;
  decltype(&cudnnGetConvolutionForwardWorkspaceSize) GetConvolutionForwardWorkspaceSize = nullptr;
  decltype(&cudnnConvolutionForward) ConvolutionForward = nullptr;
  decltype(&cudnnConvolutionBiasActivationForward) ConvolutionBiasActivationForward = nullptr;
  decltype(&cudnnCreateActivationDescriptor) CreateActivationDescriptor = nullptr;
  decltype(&cudnnDestroyActivationDescriptor) DestroyActivationDescriptor = nullptr;
  decltype(&cudnnSetActivationDescriptor) SetActivationDescriptor = nullptr;
  decltype(&cudnnCreatePoolingDescriptor) CreatePoolingDescriptor = nullptr;
  decltype(&cudnnDestroyPoolingDescriptor) DestroyPoolingDescriptor = nullptr;
  decltype(&cudnnSetPoolingNdDescriptor) SetPoolingNdDescriptor = nullptr;
  decltype(&cudnnPoolingForward) PoolingForward = nullptr;
};

// Which file was loaded for one library, or why none was.
struct LibraryLoad {
  std::string name;     // "cuDNN"
  std::string path;     // what loaded, empty if none
  std::string error;    // when none loaded: every attempt and its error
  int version = 0;      // as the library reports it, 0 if unknown
  bool ok() const { return !path.empty() && error.empty(); }
};

struct CudaLibraries {
  CublasApi cublas;
  CudnnApi cudnn;
  LibraryLoad cublas_load, cublaslt_load, cudnn_load;
  bool ok() const { return cublas_load.ok() && cublaslt_load.ok() && cudnn_load.ok(); }
  // The first failure as a sentence, and what to do about it.
  std::string reason() const;
  std::string fix() const;
};

// The folders searched after the loader's own path, in order.
std::vector<std::string> cuda_library_folders();
// The libraries it opens, as the ABI states them (sy_provider_api.
// libraries): "libcudnn.so.9|libcudnn.so.8", ..., then nullptr.
const char* const* cuda_required_libraries();

// Loads the three libraries once per process; later calls return the same
// object. Never fails: what could not load is recorded in the result.
const CudaLibraries& load_cuda_libraries();

// "9.1.0" for cuDNN's 90100, "8.9.7" for 8907.
std::string cudnn_version_string(int version);

}  // namespace sy::cuda
