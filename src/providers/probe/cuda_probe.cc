#include "providers/probe/cuda_probe.h"

#include <dlfcn.h>

#include "providers/probe/library_probe.h"

namespace sy {
namespace {

// The few driver API entry points doctor needs, by their C signatures
// (CUresult is an int enum, CUdevice an int).
using CuInit = int (*)(unsigned int);
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetName = int (*)(char*, int, int);
using CuDeviceGetAttribute = int (*)(int*, int, int);
using CuDeviceTotalMem = int (*)(size_t*, int);
using CuGetErrorString = int (*)(int, const char**);

constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kComputeCapabilityMinor = 76;

}  // namespace

std::string cuda_version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

CudaDriverProbe probe_cuda_driver() {
  CudaDriverProbe out;
  const LibraryProbe lib = probe_library("libcuda.so.1");
  if (!lib.loads) {
    out.error = lib.found ? "libcuda.so.1 at " + lib.path + " does not load: " + lib.error
                          : "the NVIDIA driver library libcuda.so.1 was not found";
    return out;
  }
  void* h = dlopen(lib.path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (h == nullptr) {
    out.error = "libcuda.so.1 does not load";
    return out;
  }
  out.driver_found = true;
  out.driver_path = lib.path;
  auto sym = [h](const char* name) { return dlsym(h, name); };
  auto init = reinterpret_cast<CuInit>(sym("cuInit"));
  auto get_version = reinterpret_cast<CuDriverGetVersion>(sym("cuDriverGetVersion"));
  auto get_count = reinterpret_cast<CuDeviceGetCount>(sym("cuDeviceGetCount"));
  auto get_device = reinterpret_cast<CuDeviceGet>(sym("cuDeviceGet"));
  auto get_name = reinterpret_cast<CuDeviceGetName>(sym("cuDeviceGetName"));
  auto get_attr = reinterpret_cast<CuDeviceGetAttribute>(sym("cuDeviceGetAttribute"));
  auto total_mem = reinterpret_cast<CuDeviceTotalMem>(sym("cuDeviceTotalMem_v2"));
  auto error_string = reinterpret_cast<CuGetErrorString>(sym("cuGetErrorString"));
  if (!init || !get_version || !get_count || !get_device || !get_name || !get_attr || !total_mem) {
    out.error = "libcuda.so.1 lacks driver API entry points; the driver is too old or broken";
    dlclose(h);
    return out;
  }
  get_version(&out.driver_version);
  const int rc = init(0);
  if (rc != 0) {
    const char* text = nullptr;
    if (error_string) error_string(rc, &text);
    out.error = "cuInit failed with error " + std::to_string(rc) + (text ? std::string(" (") + text + ")" : "");
    dlclose(h);
    return out;
  }
  int count = 0;
  get_count(&count);
  for (int i = 0; i < count; ++i) {
    int dev = 0;
    if (get_device(&dev, i) != 0) continue;
    GpuInfo g;
    g.index = i;
    char name[256] = {};
    get_name(name, sizeof name, dev);
    g.name = name;
    get_attr(&g.cc_major, kComputeCapabilityMajor, dev);
    get_attr(&g.cc_minor, kComputeCapabilityMinor, dev);
    total_mem(&g.memory_bytes, dev);
    out.gpus.push_back(g);
  }
  // The driver stays loaded: unloading libcuda after cuInit is not safe.
  return out;
}

}  // namespace sy
