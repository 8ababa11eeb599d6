// CudaProvider: one session's CUDA provider inside the plugin library. It
// owns the session's device arena, its stream, and the cuBLAS, cuBLASLt and
// cuDNN handles bound to that stream; kernels reach them through
// KernelRunContext::provider(). Claiming nodes and creating and running
// kernels is the provider SDK's BasicKernelTableProvider over the CUDA
// kernel table (switchyard/provider_sdk/plugin.h), which is also the ABI's
// sy_provider.
//
// The stream and handles are made on first use (ensure_runtime), not at
// creation, which only decides availability.
//
// Creating one never fails for lack of a GPU: availability() then carries
// the reason (no driver, driver too old, no device, device_id out of range,
// no kernel image for this GPU, a library missing) and the fix.
#pragma once

#include <cublas_v2.h>
#include <cudnn.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "conv_algo_cache.h"
#include "cuda_common.h"
#include "cuda_kernel.h"
#include "cuda_libraries.h"
#include "cuda_options.h"
#include "device_arena.h"
#include "switchyard/provider_sdk/plugin.h"

namespace sy::cuda {

class CudaProvider final : public provider_sdk::BasicKernelTableProvider<KernelCreateInfo, KernelRunContext> {
 public:
  // Fails only for bad options.
  static Status create(const sy_host_api* host, const std::vector<std::pair<std::string, std::string>>& options,
                       std::unique_ptr<CudaProvider>& out);
  ~CudaProvider() override;

  bool available() const { return available_; }
  const std::string& reason() const { return reason_; }
  const std::string& fix() const { return fix_; }
  sy_device device() const { return {SY_DEVICE_CUDA, options_.device_id}; }
  std::string device_name() const { return "cuda:" + std::to_string(options_.device_id); }

  void* allocate(size_t bytes);
  void deallocate(void* p);
  const std::string& last_error() const;

  Status copy_to_host(const sy_tensor& src, sy_tensor& dst);
  Status copy_from_host(const sy_tensor& src, sy_tensor& dst);
  Status copy_on_device(const sy_tensor& src, sy_tensor& dst);
  Status synchronize();
  // Makes this provider's device current (several sessions may drive
  // several GPUs from one thread), then runs the kernel.
  Status run_kernel(const CudaKernel& kernel, sy_kernel_context* ctx) override;
  Status prepare_kernel(const CudaKernel& kernel, sy_kernel_context* ctx,
                        std::unique_ptr<provider_sdk::KernelState>& state) override;
  // Device, memory, driver and library facts, one per line.
  std::string describe() const;

  // ---- for kernels ----
  const CudaOptions& options() const { return options_; }
  const cudaDeviceProp& properties() const { return properties_; }
  cudaStream_t stream() const { return stream_; }
  const CudaLibraries& libs() const { return *libs_; }
  cublasHandle_t cublas() const { return cublas_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  // A workspace for cuBLASLt, fixed at creation.
  void* blas_workspace() const { return blas_workspace_; }
  size_t blas_workspace_size() const { return blas_workspace_size_; }
  ConvAlgoCache& conv_algo_cache() { return conv_cache_; }
  DeviceArena& arena() { return *arena_; }
  Status cudnn_status(cudnnStatus_t s, const std::string& what) const;
  Status cublas_status(cublasStatus_t s, const std::string& what) const;

 protected:
  KernelCreateInfo node_info(const sy_node* node) override { return KernelCreateInfo(host(), node, this); }
  // The stream and handles, made on the first node claimed.
  Status check_node(const KernelCreateInfo&) override { return ensure_runtime(); }

 private:
  explicit CudaProvider(const sy_host_api* host);
  // Sets available_/reason_/fix_: checks the driver, the device, its code
  // and the libraries, and nothing heavier, so that doctor and
  // get_available_providers() stay cheap.
  void initialize();
  // The stream, the cuBLAS/cuDNN handles and the cuBLAS workspace, made
  // once on first real use (claiming a node, a copy).
  Status ensure_runtime();
  Status create_runtime();
  void set_unavailable(std::string reason, std::string fix);
  // The pinned staging buffer, at least `bytes` large; nullptr when the
  // copy should go straight from pageable memory. staging_mutex_ held.
  void* staging(size_t bytes);
  // The copies' common start: src's size in bytes and, unless it is 0, the
  // runtime loaded and this provider's device current.
  Status begin_copy(const sy_tensor& src, size_t& bytes);

  CudaOptions options_;
  bool available_ = false;
  std::string reason_, fix_;
  const CudaLibraries* libs_ = nullptr;
  cudaDeviceProp properties_{};
  int driver_version_ = 0, runtime_version_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  void* blas_workspace_ = nullptr;
  size_t blas_workspace_size_ = 0;
  std::unique_ptr<DeviceArena> arena_;
  ConvAlgoCache conv_cache_;
  // Copies go through pinned (page-locked) host memory, which the GPU can
  // reach by DMA at full speed and asynchronously; staging_done_ marks when
  // the last upload from it has finished, before it is overwritten.
  std::once_flag runtime_once_;
  Status runtime_status_;
  std::mutex staging_mutex_;
  void* staging_ = nullptr;
  size_t staging_size_ = 0;
  cudaEvent_t staging_done_ = nullptr;
};

}  // namespace sy::cuda
