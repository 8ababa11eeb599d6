// What the NVIDIA driver says about this machine, read through libcuda.so.1
// with dlopen: no CUDA headers or libraries are needed to build this, so
// doctor can explain a missing or old driver on any machine.
#pragma once

#include <string>
#include <vector>

namespace sy {

struct GpuInfo {
  int index = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  size_t memory_bytes = 0;
};

struct CudaDriverProbe {
  bool driver_found = false;  // libcuda.so.1 loads
  std::string driver_path;
  std::string error;          // why not, or cuInit's error
  int driver_version = 0;     // e.g. 13000 for CUDA 13.0 support
  std::vector<GpuInfo> gpus;
};

CudaDriverProbe probe_cuda_driver();

// "13.0" for 13000.
std::string cuda_version_string(int version);

}  // namespace sy
