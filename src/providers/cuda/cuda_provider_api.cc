// The library's one export, sy_provider_get_api: the ABI table
// (switchyard/provider_abi.h) whose entries forward to CudaProvider. No
// C++ exception crosses into the core: each entry catches and reports.
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>

#include "cuda_libraries.h"
#include "cuda_options.h"
#include "cuda_provider.h"

struct sy_provider {
  std::unique_ptr<sy::cuda::CudaProvider> impl;
};
struct sy_kernel {
  std::unique_ptr<sy::cuda::CudaKernel> impl;
};

namespace sy::cuda {
namespace {

void write(char* buffer, size_t size, const std::string& text) {
  if (buffer == nullptr || size == 0) return;
  std::snprintf(buffer, size, "%s", text.c_str());
}

int report(const Status& st, char* error, size_t error_size) {
  if (!st.ok()) write(error, error_size, st.message());
  return st.code();
}

// Runs f, turning an escaping exception into a status.
template <typename F>
int guarded(char* error, size_t error_size, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    write(error, error_size, "CUDAExecutionProvider: out of host memory");
    return SY_STATUS_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    write(error, error_size, std::string("CUDAExecutionProvider: ") + e.what());
    return SY_STATUS_FAIL;
  }
}

sy_provider* api_create(const sy_host_api* host, const char* const* keys, const char* const* values, size_t count,
                        char* error, size_t error_size) {
  sy_provider* result = nullptr;
  guarded(error, error_size, [&] {
    std::vector<std::pair<std::string, std::string>> options;
    for (size_t i = 0; i < count; ++i) options.emplace_back(keys[i], values[i]);
    auto p = std::make_unique<sy_provider>();
    Status st = CudaProvider::create(host, options, p->impl);
    if (!st.ok()) return report(st, error, error_size);
    result = p.release();
    return 0;
  });
  return result;
}

void api_destroy(sy_provider* p) { delete p; }

int api_availability(sy_provider* p, char* reason, size_t reason_size, char* fix, size_t fix_size) {
  if (p->impl->available()) return 1;
  write(reason, reason_size, p->impl->reason());
  write(fix, fix_size, p->impl->fix());
  return 0;
}

sy_device api_device(sy_provider* p) { return p->impl->device(); }

void* api_allocate(sy_provider* p, size_t bytes) {
  try {
    return p->impl->allocate(bytes);
  } catch (...) {
    return nullptr;
  }
}

void api_deallocate(sy_provider* p, void* pointer) { p->impl->deallocate(pointer); }

const char* api_last_error(sy_provider* p) { return p->impl->last_error().c_str(); }

int api_copy_to_host(sy_provider* p, const sy_tensor* src, sy_tensor* dst, char* error, size_t error_size) {
  return guarded(error, error_size, [&] { return report(p->impl->copy_to_host(*src, *dst), error, error_size); });
}

int api_copy_from_host(sy_provider* p, const sy_tensor* src, sy_tensor* dst, char* error, size_t error_size) {
  return guarded(error, error_size, [&] { return report(p->impl->copy_from_host(*src, *dst), error, error_size); });
}

int api_copy_on_device(sy_provider* p, const sy_tensor* src, sy_tensor* dst, char* error, size_t error_size) {
  return guarded(error, error_size, [&] { return report(p->impl->copy_on_device(*src, *dst), error, error_size); });
}

int api_create_kernel(sy_provider* p, const sy_node* node, sy_kernel** kernel, uint64_t* host_inputs, char* reason,
                      size_t reason_size) {
  *kernel = nullptr;
  *host_inputs = 0;
  int claimed = 0;
  guarded(reason, reason_size, [&] {
    std::unique_ptr<CudaKernel> k;
    uint64_t mask = 0;
    Status st = p->impl->create_kernel(node, k, mask);
    if (!st.ok()) return report(st, reason, reason_size);
    *kernel = new sy_kernel{std::move(k)};
    *host_inputs = mask;
    claimed = 1;
    return 0;
  });
  return claimed;
}

int api_supports(sy_provider* p, const sy_node* node, char* reason, size_t reason_size) {
  int supported = 0;
  guarded(reason, reason_size, [&] {
    const CudaKernelDef* found = nullptr;
    Status st = p->impl->find_kernel(node, found);
    if (!st.ok()) return report(st, reason, reason_size);
    supported = 1;
    return 0;
  });
  return supported;
}

// The core's rewrites whose op the CUDA kernels run: FusedConv with a
// residual and an activation (NCHW; conv.cu). The CPU-only ones
// (blocked layout, FusedMatMul, FusedAttention) are not asked for.
constexpr const char* kRewrites[] = {"conv_residual", "conv_activation", nullptr};

int api_kernel_run(sy_provider* p, sy_kernel* kernel, sy_kernel_context* ctx, char* error, size_t error_size) {
  return guarded(error, error_size, [&] {
    // Several sessions may drive several GPUs from one thread.
    cudaSetDevice(p->impl->device().id);
    KernelRunContext run_ctx(p->impl->host(), ctx, p->impl.get());
    return report(kernel->impl->run(run_ctx), error, error_size);
  });
}

void api_kernel_destroy(sy_provider*, sy_kernel* kernel) { delete kernel; }

int api_synchronize(sy_provider* p, char* error, size_t error_size) {
  return guarded(error, error_size, [&] { return report(p->impl->synchronize(), error, error_size); });
}

int api_describe(sy_provider* p, char* text, size_t text_size) {
  return guarded(text, text_size, [&] {
    write(text, text_size, p->impl->describe());
    return 0;
  });
}

const sy_provider_api kApi = {
    SY_PROVIDER_ABI_VERSION,
    sizeof(sy_provider_api),
    "CUDAExecutionProvider",
    "cuda",
    api_create,
    api_destroy,
    api_availability,
    api_device,
    api_allocate,
    api_deallocate,
    api_last_error,
    api_copy_to_host,
    api_copy_from_host,
    api_copy_on_device,
    api_create_kernel,
    api_kernel_run,
    api_kernel_destroy,
    api_synchronize,
    api_describe,
    api_supports,
    kRewrites,
    SWITCHYARD_VERSION,
    nullptr,  // compile: kernels per node
    nullptr,  // options and libraries: api_table() fills them in
    nullptr,
};

// kApi with the option and library lists, which live beside the code that
// uses them (cuda_options.cc, cuda_libraries.cc).
const sy_provider_api* api_table() {
  static const sy_provider_api api = [] {
    sy_provider_api a = kApi;
    a.options = cuda_option_specs();
    a.libraries = cuda_required_libraries();
    return a;
  }();
  return &api;
}

}  // namespace
}  // namespace sy::cuda

extern "C" __attribute__((visibility("default"))) const sy_provider_api* sy_provider_get_api(uint32_t host_abi_version) {
  return host_abi_version == SY_PROVIDER_ABI_VERSION ? sy::cuda::api_table() : nullptr;
}
