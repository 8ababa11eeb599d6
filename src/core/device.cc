#include "switchyard/device.h"

namespace sy {

std::string Device::to_string() const {
  switch (type) {
    case DeviceType::kCpu: return "cpu";
    case DeviceType::kCuda: return "cuda:" + std::to_string(id);
    case DeviceType::kRocm: return "rocm:" + std::to_string(id);
    case DeviceType::kSimulated: return "sim:" + std::to_string(id);
  }
  return "device?" + std::to_string(static_cast<int>(type));
}

}  // namespace sy
