// Device: where a tensor's bytes live. Providers own devices; the core only
// compares them to decide where copies are needed.
#pragma once

#include <cstdint>
#include <string>

namespace sy {

enum class DeviceType : int32_t {
  kCpu = 0,
  kCuda = 1,
  kRocm = 2,
  // A second "device" whose memory is host memory, used by the test-only
  // provider so that copy insertion can be tested without a GPU.
  kSimulated = 99,
};

struct Device {
  DeviceType type = DeviceType::kCpu;
  int32_t id = 0;

  bool is_cpu() const { return type == DeviceType::kCpu; }
  // "cpu", "cuda:0", "sim:1"
  std::string to_string() const;
  friend bool operator==(const Device& a, const Device& b) { return a.type == b.type && a.id == b.id; }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }
};

inline constexpr Device kCpuDevice{};

}  // namespace sy
