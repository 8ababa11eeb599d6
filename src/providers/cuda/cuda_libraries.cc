#include "cuda_libraries.h"

#include <cublasLt.h>

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>

namespace sy::cuda {
namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The python lib folders of NVIDIA's wheels (nvidia-cudnn-cu12 puts
// libcudnn.so.9 in site-packages/nvidia/cudnn/lib, and so on).
void add_wheel_folders(const fs::path& prefix, std::vector<std::string>& out) {
  std::error_code ec;
  const fs::path lib = prefix / "lib";
  if (!fs::is_directory(lib, ec)) return;
  for (const auto& py : fs::directory_iterator(lib, ec)) {
    const std::string name = py.path().filename().string();
    if (name.rfind("python3", 0) != 0) continue;
    for (const char* packages : {"site-packages", "dist-packages"}) {
      for (const char* pkg : {"cudnn", "cublas", "cuda_runtime"}) {
        const fs::path dir = py.path() / packages / "nvidia" / pkg / "lib";
        if (fs::is_directory(dir, ec)) out.push_back(dir.string());
      }
    }
  }
}

std::string loaded_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0')
    return map->l_name;
  return fallback;
}

// What the provider opens, each with the sonames it accepts, newest first:
// the list the ABI states (sy_provider_api.libraries) and the one
// open_library() walks. cuBLASLt first: cuBLAS needs it.
constexpr const char* kCublasLt = "libcublasLt.so.13|libcublasLt.so.12";
constexpr const char* kCublas = "libcublas.so.13|libcublas.so.12";
constexpr const char* kCudnn = "libcudnn.so.9|libcudnn.so.8";
constexpr const char* kRequired[] = {kCublasLt, kCublas, kCudnn, nullptr};

std::vector<std::string> sonames_of(const char* entry) {
  std::vector<std::string> names;
  std::string rest = entry;
  for (size_t bar; (bar = rest.find('|')) != std::string::npos; rest = rest.substr(bar + 1))
    names.push_back(rest.substr(0, bar));
  names.push_back(rest);
  return names;
}

// Tries each soname through the loader's own search, then in each folder.
void* open_library(const char* entry, const std::vector<std::string>& folders, LibraryLoad& load) {
  const std::vector<std::string> sonames = sonames_of(entry);
  std::string failures;  // files that exist but would not load: the useful part of the message
  for (const std::string& soname : sonames) {
    if (void* h = dlopen(soname.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      load.path = loaded_path(h, soname);
      return h;
    }
    for (const std::string& folder : folders) {
      const fs::path candidate = fs::path(folder) / soname;
      std::error_code ec;
      if (!fs::exists(candidate, ec)) continue;
      if (void* h = dlopen(candidate.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
        load.path = candidate.string();
        return h;
      }
      const char* e = dlerror();
      failures += "; " + candidate.string() + " exists but failed to load: " + (e ? e : "unknown error");
    }
  }
  std::string names, searched = "the loader's path (LD_LIBRARY_PATH, ld.so.cache)";
  for (const std::string& s : sonames) names += (names.empty() ? "" : " or ") + s;
  for (const std::string& f : folders) searched += ", " + f;
  load.error = names + " not found; searched: " + searched + failures;
  return nullptr;
}

// Looks up every entry point; a missing one means a library too old.
template <typename F>
void bind(void* handle, const char* symbol, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(handle, symbol));
  if (fn == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(symbol);
}

void finish(LibraryLoad& load, const std::string& missing) {
  if (!missing.empty()) load.error = load.path + " lacks " + missing + " (too old a version?)";
}

void load_cublaslt(CudaLibraries& libs, const std::vector<std::string>& folders) {
  LibraryLoad& load = libs.cublaslt_load;
  load.name = "cuBLASLt";
  void* h = open_library(kCublasLt, folders, load);
  if (h == nullptr) return;
  // Only its version: cuBLAS needs the library, the provider none of its functions.
  decltype(&cublasLtGetVersion) get_version = nullptr;
  std::string missing;
  bind(h, "cublasLtGetVersion", get_version, missing);
  finish(load, missing);
  if (get_version) load.version = static_cast<int>(get_version());
}

void load_cublas(CudaLibraries& libs, const std::vector<std::string>& folders) {
  LibraryLoad& load = libs.cublas_load;
  load.name = "cuBLAS";
  void* h = open_library(kCublas, folders, load);
  if (h == nullptr) return;
  CublasApi& a = libs.cublas;
  std::string missing;
  bind(h, "cublasCreate_v2", a.Create, missing);
  bind(h, "cublasDestroy_v2", a.Destroy, missing);
  bind(h, "cublasSetStream_v2", a.SetStream, missing);
  bind(h, "cublasSetMathMode", a.SetMathMode, missing);
  bind(h, "cublasSetWorkspace_v2", a.SetWorkspace, missing);
  bind(h, "cublasGetProperty", a.GetProperty, missing);
  bind(h, "cublasGemmEx", a.GemmEx, missing);
  bind(h, "cublasGemmStridedBatchedEx", a.GemmStridedBatchedEx, missing);
  finish(load, missing);
  int major = 0, minor = 0, patch = 0;
  if (a.GetProperty && a.GetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      a.GetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      a.GetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    load.version = major * 10000 + minor * 100 + patch;
}

void load_cudnn(CudaLibraries& libs, const std::vector<std::string>& folders) {
  LibraryLoad& load = libs.cudnn_load;
  load.name = "cuDNN";
  void* h = open_library(kCudnn, folders, load);
  if (h == nullptr) return;
  CudnnApi& a = libs.cudnn;
  std::string missing;
  bind(h, "cudnnGetVersion", a.GetVersion, missing);
  bind(h, "cudnnGetErrorString", a.GetErrorString, missing);
  bind(h, "cudnnCreate", a.Create, missing);
  bind(h, "cudnnDestroy", a.Destroy, missing);
  bind(h, "cudnnSetStream", a.SetStream, missing);
  bind(h, "cudnnCreateTensorDescriptor", a.CreateTensorDescriptor, missing);
  bind(h, "cudnnDestroyTensorDescriptor", a.DestroyTensorDescriptor, missing);
  bind(h, "cudnnSetTensorNdDescriptor", a.SetTensorNdDescriptor, missing);
  bind(h, "cudnnCreateFilterDescriptor", a.CreateFilterDescriptor, missing);
  bind(h, "cudnnDestroyFilterDescriptor", a.DestroyFilterDescriptor, missing);
  bind(h, "cudnnSetFilterNdDescriptor", a.SetFilterNdDescriptor, missing);
  bind(h, "cudnnCreateConvolutionDescriptor", a.CreateConvolutionDescriptor, missing);
  bind(h, "cudnnDestroyConvolutionDescriptor", a.DestroyConvolutionDescriptor, missing);
  bind(h, "cudnnSetConvolutionNdDescriptor", a.SetConvolutionNdDescriptor, missing);
  bind(h, "cudnnSetConvolutionGroupCount", a.SetConvolutionGroupCount, missing);
  bind(h, "cudnnSetConvolutionMathType", a.SetConvolutionMathType, missing);
  bind(h, "cudnnGetConvolutionForwardAlgorithm_v7", a.GetConvolutionForwardAlgorithm_v7, missing);
  bind(h, "cudnnFindConvolutionForwardAlgorithmEx", a.FindConvolutionForwardAlgorithmEx, missing);
  bind(h, "cudnnGetConvolutionForwardWorkspaceSize", a.GetConvolutionForwardWorkspaceSize, missing);
  bind(h, "cudnnConvolutionForward", a.ConvolutionForward, missing);
  bind(h, "cudnnConvolutionBiasActivationForward", a.ConvolutionBiasActivationForward, missing);
  bind(h, "cudnnCreateActivationDescriptor", a.CreateActivationDescriptor, missing);
  bind(h, "cudnnDestroyActivationDescriptor", a.DestroyActivationDescriptor, missing);
  bind(h, "cudnnSetActivationDescriptor", a.SetActivationDescriptor, missing);
  bind(h, "cudnnCreatePoolingDescriptor", a.CreatePoolingDescriptor, missing);
  bind(h, "cudnnDestroyPoolingDescriptor", a.DestroyPoolingDescriptor, missing);
  bind(h, "cudnnSetPoolingNdDescriptor", a.SetPoolingNdDescriptor, missing);
  bind(h, "cudnnPoolingForward", a.PoolingForward, missing);
  finish(load, missing);
  if (a.GetVersion) load.version = static_cast<int>(a.GetVersion());
}

}  // namespace

const char* const* cuda_required_libraries() { return kRequired; }

std::vector<std::string> cuda_library_folders() {
  std::vector<std::string> folders;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const std::string root = env(var);
    if (!root.empty()) folders.push_back(root + "/lib64");
  }
  folders.push_back("/usr/local/cuda/lib64");
  folders.push_back("/usr/local/cuda/targets/x86_64-linux/lib");
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    const std::string root = env(var);
    if (!root.empty()) add_wheel_folders(root, folders);
  }
  const std::string home = env("HOME");
  if (!home.empty()) add_wheel_folders(fs::path(home) / ".local", folders);
  add_wheel_folders("/usr/local", folders);
  add_wheel_folders("/usr", folders);
  // Debian's python keeps packages in /usr/lib/python3/dist-packages.
  std::error_code ec;
  for (const char* pkg : {"cudnn", "cublas", "cuda_runtime"}) {
    const fs::path dir = fs::path("/usr/lib/python3/dist-packages/nvidia") / pkg / "lib";
    if (fs::is_directory(dir, ec)) folders.push_back(dir.string());
  }
  std::vector<std::string> unique;
  for (const std::string& f : folders)
    if (std::find(unique.begin(), unique.end(), f) == unique.end()) unique.push_back(f);
  return unique;
}

const CudaLibraries& load_cuda_libraries() {
  static std::once_flag once;
  static CudaLibraries libs;
  std::call_once(once, [] {
    const std::vector<std::string> folders = cuda_library_folders();
    load_cublaslt(libs, folders);  // first: libcublas needs it
    load_cublas(libs, folders);
    load_cudnn(libs, folders);
  });
  return libs;
}

std::string CudaLibraries::reason() const {
  for (const LibraryLoad* l : {&cublas_load, &cublaslt_load, &cudnn_load})
    if (!l->ok()) return l->name + ": " + l->error;
  return {};
}

std::string CudaLibraries::fix() const {
  if (!cudnn_load.ok())
    return "install cuDNN 9 (apt install libcudnn9-cuda-13, or pip install nvidia-cudnn-cu13) or add the folder "
           "holding libcudnn.so.9 to LD_LIBRARY_PATH";
  if (!cublas_load.ok() || !cublaslt_load.ok())
    return "install cuBLAS from the CUDA toolkit (or pip install nvidia-cublas) or add the folder holding "
           "libcublas.so.13 to LD_LIBRARY_PATH";
  return {};
}

std::string cudnn_version_string(int v) {
  // cuDNN 9 encodes major*10000 + minor*100 + patch; cuDNN 8 major*1000 + minor*100 + patch.
  const int major = v >= 10000 ? v / 10000 : v / 1000;
  const int rest = v >= 10000 ? v % 10000 : v % 1000;
  return std::to_string(major) + "." + std::to_string(rest / 100) + "." + std::to_string(rest % 100);
}

}  // namespace sy::cuda
