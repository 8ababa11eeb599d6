// The library's one export, sy_provider_get_api: the ABI table
// (switchyard/provider_abi.h) whose entries forward to CudaProvider. The
// kernel entries are the provider SDK's (KernelEntries, plugin.h); the
// others catch every C++ exception and report it (guarded), as those do.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda_libraries.h"
#include "cuda_options.h"
#include "cuda_provider.h"

namespace sy::cuda {
namespace {

using provider_sdk::report;
using provider_sdk::write_message;
using Entries = provider_sdk::KernelEntries<CudaProvider>;

constexpr const char* kName = "CUDAExecutionProvider";

// The ABI's sy_provider is the SDK's base of CudaProvider.
CudaProvider& cuda(sy_provider* p) { return *static_cast<CudaProvider*>(p); }

template <typename F>
int guarded(char* error, size_t error_size, F&& f) {
  return provider_sdk::guarded(kName, error, error_size, std::forward<F>(f));
}

sy_provider* api_create(const sy_host_api* host, const char* const* keys, const char* const* values, size_t count,
                        char* error, size_t error_size) {
  sy_provider* result = nullptr;
  guarded(error, error_size, [&] {
    std::vector<std::pair<std::string, std::string>> options;
    for (size_t i = 0; i < count; ++i) options.emplace_back(keys[i], values[i]);
    std::unique_ptr<CudaProvider> p;
    Status st = CudaProvider::create(host, options, p);
    if (!st.ok()) return report(st, error, error_size);
    result = p.release();
    return 0;
  });
  return result;
}

void api_destroy(sy_provider* p) { delete p; }

int api_availability(sy_provider* p, char* reason, size_t reason_size, char* fix, size_t fix_size) {
  if (cuda(p).available()) return 1;
  write_message(reason, reason_size, cuda(p).reason());
  write_message(fix, fix_size, cuda(p).fix());
  return 0;
}

sy_device api_device(sy_provider* p) { return cuda(p).device(); }

void* api_allocate(sy_provider* p, size_t bytes) {
  try {
    return cuda(p).allocate(bytes);
  } catch (...) {
    return nullptr;
  }
}

void api_deallocate(sy_provider* p, void* pointer) { cuda(p).deallocate(pointer); }

const char* api_last_error(sy_provider* p) { return cuda(p).last_error().c_str(); }

int api_copy_to_host(sy_provider* p, const sy_tensor* src, sy_tensor* dst, char* error, size_t error_size) {
  return guarded(error, error_size, [&] { return report(cuda(p).copy_to_host(*src, *dst), error, error_size); });
}

int api_copy_from_host(sy_provider* p, const sy_tensor* src, sy_tensor* dst, char* error, size_t error_size) {
  return guarded(error, error_size, [&] { return report(cuda(p).copy_from_host(*src, *dst), error, error_size); });
}

int api_copy_on_device(sy_provider* p, const sy_tensor* src, sy_tensor* dst, char* error, size_t error_size) {
  return guarded(error, error_size, [&] { return report(cuda(p).copy_on_device(*src, *dst), error, error_size); });
}

// The core's rewrites whose op the CUDA kernels run: FusedConv with a
// residual and an activation (NCHW; conv.cu). The CPU-only ones
// (blocked layout, FusedMatMul, FusedAttention) are not asked for.
constexpr const char* kRewrites[] = {"conv_residual", "conv_activation", nullptr};

int api_synchronize(sy_provider* p, char* error, size_t error_size) {
  return guarded(error, error_size, [&] { return report(cuda(p).synchronize(), error, error_size); });
}

int api_describe(sy_provider* p, char* text, size_t text_size) {
  return guarded(text, text_size, [&] {
    write_message(text, text_size, cuda(p).describe());
    return 0;
  });
}

const sy_provider_api kApi = {
    SY_PROVIDER_ABI_VERSION,
    sizeof(sy_provider_api),
    kName,
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
    Entries::create_kernel,
    Entries::kernel_run,
    Entries::kernel_destroy,
    api_synchronize,
    api_describe,
    Entries::supports,
    kRewrites,
    SWITCHYARD_VERSION,
    nullptr,  // compile: kernels per node
    nullptr,  // options and libraries: api_table() fills them in
    nullptr,
    Entries::kernel_prepare,
    Entries::kernel_state_destroy,
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
