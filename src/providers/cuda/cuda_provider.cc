#include "cuda_provider.h"

#include <cstdlib>
#include <cstring>

#include "device_check.h"

namespace sy::cuda {
namespace {

constexpr size_t kBlasWorkspaceBytes = size_t{32} << 20;
// Larger copies go straight from pageable memory: the staging buffer would
// pin that much host memory for the session's life.
constexpr size_t kMaxStagingBytes = size_t{64} << 20;

std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

struct BackingState {
  int device_id;
};

void* device_malloc(void* state, size_t bytes, std::string& error) {
  const int device = static_cast<BackingState*>(state)->device_id;
  cudaSetDevice(device);
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaSuccess) return p;
  cudaGetLastError();  // clear the sticky-free error so later calls are not blamed
  size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  error = std::string("cudaMalloc: ") + cudaGetErrorString(e) + "; the device has " + format_bytes(free_bytes) +
          " free of " + format_bytes(total_bytes);
  return nullptr;
}

void device_free(void* state, void* p) {
  cudaSetDevice(static_cast<BackingState*>(state)->device_id);
  cudaFree(p);
}

BackingState* backing_state(int device_id) {
  // One per device for the life of the process: arenas keep a pointer.
  static BackingState states[64];
  const int i = device_id < 64 ? device_id : 63;
  states[i].device_id = device_id;
  return &states[i];
}

}  // namespace

Status CudaProvider::create(const sy_host_api* host, const std::vector<std::pair<std::string, std::string>>& options,
                            std::unique_ptr<CudaProvider>& out) {
  CudaOptions parsed;
  SY_SDK_RETURN_IF_ERROR(parse_cuda_options(options, parsed));
  out.reset(new CudaProvider(host));
  out->options_ = parsed;
  out->initialize();
  return ok_status();
}

CudaProvider::CudaProvider(const sy_host_api* host)
    : BasicKernelTableProvider("CUDAExecutionProvider", host, cuda_kernel_table()) {}

void CudaProvider::set_unavailable(std::string reason, std::string fix) {
  available_ = false;
  reason_ = std::move(reason);
  fix_ = std::move(fix);
}

void CudaProvider::initialize() {
  cudaRuntimeGetVersion(&runtime_version_);
  cudaDriverGetVersion(&driver_version_);
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) cudaGetLastError();
  if (e == cudaErrorInsufficientDriver && driver_version_ == 0)
    return set_unavailable("the NVIDIA driver (libcuda.so.1) is not installed or could not be loaded",
                           "install the NVIDIA driver for this GPU (apt install nvidia-driver) and check `nvidia-smi`");
  if (e == cudaErrorInsufficientDriver)
    return set_unavailable("the NVIDIA driver supports CUDA " + cuda_version(driver_version_) +
                               " but this provider was built with CUDA " + cuda_version(runtime_version_),
                           "update the NVIDIA driver to one that supports CUDA " + cuda_version(runtime_version_) +
                               " or newer");
  if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0)) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    return set_unavailable(std::string("no CUDA device is visible") +
                               (visible ? std::string(" (CUDA_VISIBLE_DEVICES=\"") + visible + "\")" : ""),
                           "check `nvidia-smi`; in a container, start it with the GPU passed through "
                           "(docker run --gpus all)");
  }
  if (e != cudaSuccess)
    return set_unavailable(std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(e) + ": " +
                               cudaGetErrorString(e),
                           "check `nvidia-smi` and the kernel log (dmesg) for driver errors");
  if (options_.device_id >= count)
    return set_unavailable("device_id " + std::to_string(options_.device_id) + " is out of range: this machine has " +
                               std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") + " (0.." +
                               std::to_string(count - 1) + ")",
                           "pass a device_id below " + std::to_string(count));
  Status st = cuda_status(cudaSetDevice(options_.device_id), "cudaSetDevice");
  if (st.ok()) st = cuda_status(cudaGetDeviceProperties(&properties_, options_.device_id), "cudaGetDeviceProperties");
  if (!st.ok()) return set_unavailable(st.message(), "check `nvidia-smi`");
  st = check_kernel_image();
  if (!st.ok())
    return set_unavailable(std::string(properties_.name) + " (compute capability " + std::to_string(properties_.major) +
                               "." + std::to_string(properties_.minor) + "): " + st.message(),
                           "use a GPU of compute capability 8.0 or newer, or rebuild with CMAKE_CUDA_ARCHITECTURES "
                           "set to include " + std::to_string(properties_.major * 10 + properties_.minor));

  libs_ = &load_cuda_libraries();
  if (!libs_->ok()) return set_unavailable(libs_->reason(), libs_->fix());

  ArenaBacking backing{device_malloc, device_free, backing_state(options_.device_id)};
  arena_ = std::make_unique<DeviceArena>(backing, options_.gpu_mem_limit, options_.arena_extend_strategy, device_name());
  conv_cache_.configure(default_cache_folder(),
                        std::string(properties_.name) + "-sm" + std::to_string(properties_.major * 10 + properties_.minor) +
                            "-cudnn" + std::to_string(libs_->cudnn_load.version) + "-cuda" +
                            std::to_string(runtime_version_) + (options_.use_tf32 ? "-tf32" : "-fp32") + "-" +
                            conv_algo_search_name(options_.cudnn_conv_algo_search));
  if (options_.enable_cuda_graph)
    host()->log(SY_LOG_WARNING,
                "CUDAExecutionProvider: enable_cuda_graph=1 is accepted but CUDA graph capture is not implemented yet; "
                "runs launch their kernels one by one");
  available_ = true;
}

Status CudaProvider::ensure_runtime() {
  std::call_once(runtime_once_, [this] {
    cudaSetDevice(options_.device_id);
    runtime_status_ = create_runtime();
  });
  return runtime_status_;
}

Status CudaProvider::create_runtime() {
  // A blocking stream orders itself after copies queued on the legacy
  // default stream, which is what do_copy_in_default_stream asks for.
  const unsigned flags = options_.do_copy_in_default_stream ? cudaStreamDefault : cudaStreamNonBlocking;
  Status st = cuda_status(cudaStreamCreateWithFlags(&stream_, flags), "cudaStreamCreate");
  if (st.ok()) st = cuda_status(cudaMalloc(&blas_workspace_, kBlasWorkspaceBytes), "cudaMalloc (cuBLAS workspace)");
  if (!st.ok()) return Status(st.code(), st.message() + "; free GPU memory used by other processes (see nvidia-smi)");
  blas_workspace_size_ = kBlasWorkspaceBytes;
  const CublasApi& blas = libs_->cublas;
  st = cublas_status(blas.Create(&cublas_), "cublasCreate");
  if (st.ok()) st = cublas_status(blas.SetStream(cublas_, stream_), "cublasSetStream");
  if (st.ok()) st = cublas_status(blas.SetWorkspace(cublas_, blas_workspace_, blas_workspace_size_), "cublasSetWorkspace");
  // TF32 only when allowed: with use_tf32=0 float32 products keep full precision.
  if (st.ok())
    st = cublas_status(blas.SetMathMode(cublas_, options_.use_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
                       "cublasSetMathMode");
  if (st.ok()) st = cudnn_status(libs_->cudnn.Create(&cudnn_), "cudnnCreate");
  if (st.ok()) st = cudnn_status(libs_->cudnn.SetStream(cudnn_, stream_), "cudnnSetStream");
  if (!st.ok())
    return Status(st.code(), st.message() + "; check the CUDA, cuBLAS and cuDNN installation (switchyard doctor)");
  return ok_status();
}

CudaProvider::~CudaProvider() {
  if (stream_) cudaStreamSynchronize(stream_);
  arena_.reset();
  if (libs_) {
    if (cudnn_) libs_->cudnn.Destroy(cudnn_);
    if (cublas_) libs_->cublas.Destroy(cublas_);
  }
  if (blas_workspace_) cudaFree(blas_workspace_);
  if (staging_) cudaFreeHost(staging_);
  if (staging_done_) cudaEventDestroy(staging_done_);
  if (stream_) cudaStreamDestroy(stream_);
}

Status CudaProvider::cudnn_status(cudnnStatus_t s, const std::string& what) const {
  if (s == CUDNN_STATUS_SUCCESS) return ok_status();
  const std::string message = what + ": " + (libs_ && libs_->cudnn.GetErrorString ? libs_->cudnn.GetErrorString(s) : "cuDNN error") +
                              " (" + std::to_string(static_cast<int>(s)) + ")";
  return s == CUDNN_STATUS_ALLOC_FAILED ? out_of_memory(message) : runtime_error(message);
}

Status CudaProvider::cublas_status(cublasStatus_t s, const std::string& what) const {
  if (s == CUBLAS_STATUS_SUCCESS) return ok_status();
  const std::string message = what + ": cuBLAS status " + std::to_string(static_cast<int>(s));
  return s == CUBLAS_STATUS_ALLOC_FAILED ? out_of_memory(message) : runtime_error(message);
}

void* CudaProvider::allocate(size_t bytes) { return arena_ ? arena_->allocate(bytes) : nullptr; }

void CudaProvider::deallocate(void* p) {
  if (arena_) arena_->deallocate(p);
}

const std::string& CudaProvider::last_error() const {
  static const std::string unavailable = "the CUDA provider is not available";
  return arena_ ? DeviceArena::last_error() : unavailable;
}

void* CudaProvider::staging(size_t bytes) {
  if (bytes > kMaxStagingBytes) return nullptr;
  if (staging_done_ == nullptr && cudaEventCreateWithFlags(&staging_done_, cudaEventDisableTiming) != cudaSuccess) {
    cudaGetLastError();
    staging_done_ = nullptr;
    return nullptr;
  }
  // The previous upload from the buffer must be finished before reuse.
  cudaEventSynchronize(staging_done_);
  if (bytes <= staging_size_) return staging_;
  if (staging_) cudaFreeHost(staging_);
  staging_ = nullptr;
  staging_size_ = 0;
  size_t size = size_t{1} << 20;
  while (size < bytes) size <<= 1;
  if (cudaHostAlloc(&staging_, size, cudaHostAllocDefault) != cudaSuccess) {
    cudaGetLastError();  // no pinned memory to be had: copy from pageable memory instead
    staging_ = nullptr;
    return nullptr;
  }
  staging_size_ = size;
  return staging_;
}

Status CudaProvider::begin_copy(const sy_tensor& src, size_t& bytes) {
  bytes = TensorRef{src}.byte_size();
  if (bytes == 0) return ok_status();
  SY_SDK_RETURN_IF_ERROR(ensure_runtime());
  cudaSetDevice(options_.device_id);
  return ok_status();
}

Status CudaProvider::copy_to_host(const sy_tensor& src, sy_tensor& dst) {
  size_t bytes = 0;
  SY_SDK_RETURN_IF_ERROR(begin_copy(src, bytes));
  if (bytes == 0) return ok_status();
  std::lock_guard<std::mutex> lock(staging_mutex_);
  void* pinned = staging(bytes);
  void* target = pinned != nullptr ? pinned : dst.data;
  SY_SDK_RETURN_IF_ERROR(cuda_status(cudaMemcpyAsync(target, src.data, bytes, cudaMemcpyDeviceToHost, stream_),
                                      "copy to host"));
  SY_SDK_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(stream_), "copy to host (waiting for the GPU)"));
  if (pinned != nullptr) std::memcpy(dst.data, pinned, bytes);
  return ok_status();
}

Status CudaProvider::copy_from_host(const sy_tensor& src, sy_tensor& dst) {
  size_t bytes = 0;
  SY_SDK_RETURN_IF_ERROR(begin_copy(src, bytes));
  if (bytes == 0) return ok_status();
  std::lock_guard<std::mutex> lock(staging_mutex_);
  void* pinned = staging(bytes);
  if (pinned == nullptr) {
    // From pageable memory the driver stages the bytes before returning, so
    // the caller may reuse its buffer as soon as this returns.
    return cuda_status(cudaMemcpyAsync(dst.data, src.data, bytes, cudaMemcpyHostToDevice, stream_), "copy to the GPU");
  }
  // The caller's bytes are in the pinned buffer now; the upload runs
  // asynchronously on the stream, ahead of the kernels that read it.
  std::memcpy(pinned, src.data, bytes);
  SY_SDK_RETURN_IF_ERROR(
      cuda_status(cudaMemcpyAsync(dst.data, pinned, bytes, cudaMemcpyHostToDevice, stream_), "copy to the GPU"));
  return cuda_status(cudaEventRecord(staging_done_, stream_), "copy to the GPU (recording its end)");
}

Status CudaProvider::copy_on_device(const sy_tensor& src, sy_tensor& dst) {
  size_t bytes = 0;
  SY_SDK_RETURN_IF_ERROR(begin_copy(src, bytes));
  if (bytes == 0) return ok_status();
  return cuda_status(cudaMemcpyAsync(dst.data, src.data, bytes, cudaMemcpyDeviceToDevice, stream_), "copy on the GPU");
}

Status CudaProvider::synchronize() {
  if (!stream_) return ok_status();
  return cuda_status(cudaStreamSynchronize(stream_), "waiting for the GPU");
}

Status CudaProvider::run_kernel(const CudaKernel& kernel, sy_kernel_context* ctx) {
  cudaSetDevice(options_.device_id);
  KernelRunContext run_ctx(host(), ctx, this);
  return kernel.run(run_ctx);
}

Status CudaProvider::prepare_kernel(const CudaKernel& kernel, sy_kernel_context* ctx,
                                    std::unique_ptr<provider_sdk::KernelState>& state) {
  cudaSetDevice(options_.device_id);
  KernelRunContext run_ctx(host(), ctx, this);
  return kernel.prepare(run_ctx, state);
}

std::string CudaProvider::describe() const {
  std::string s = "CUDA runtime " + cuda_version(runtime_version_) + " (linked statically); driver supports CUDA " +
                  (driver_version_ ? cuda_version(driver_version_) : std::string("none")) + "\n";
  if (properties_.major > 0) {
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    s += device_name() + ": " + properties_.name + ", compute capability " + std::to_string(properties_.major) + "." +
         std::to_string(properties_.minor) + ", " + std::to_string(properties_.multiProcessorCount) + " SMs, " +
         format_bytes(free_bytes) + " free of " + format_bytes(total_bytes) + "\n";
  }
  const CudaLibraries& libs = load_cuda_libraries();
  for (const LibraryLoad* l : {&libs.cublas_load, &libs.cublaslt_load, &libs.cudnn_load}) {
    s += l->name + ": ";
    if (l->ok())
      s += l->path + " (version " + (l == &libs.cudnn_load ? cudnn_version_string(l->version) : std::to_string(l->version)) + ")";
    else
      s += "MISSING: " + l->error;
    s += "\n";
  }
  const std::string cache = default_cache_folder();
  s += "compiled for sm_80, sm_90 and compute_90 PTX; conv algorithm cache: " +
       (cache.empty() ? std::string("off (no cache folder: set SWITCHYARD_CACHE_DIR)") : cache) + "\n";
  return s;
}

}  // namespace sy::cuda
