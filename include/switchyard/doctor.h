// doctor(): why each execution provider can or cannot run here. Three
// states are kept apart everywhere: built into this installation, loadable
// here (its libraries and driver load), and device present.
#pragma once

#include <string>
#include <vector>

namespace sy {

// One thing doctor looked at: a library, the driver, a setting.
struct DoctorCheck {
  std::string what;    // "libcudnn.so.9"
  bool ok = false;
  std::string detail;  // "/usr/local/cuda/lib64/libcudnn.so.9" or "not found; searched: ..."
};

struct ProviderDiagnosis {
  std::string name;        // "CUDAExecutionProvider"
  std::string short_name;  // "cuda"
  bool built = false;      // part of this installation
  bool loadable = false;   // its libraries/driver load here
  bool device_present = false;
  bool usable = false;     // built && loadable && device_present && not disabled
  std::string reason;      // why not usable
  std::string fix;         // what to do about it
  std::vector<DoctorCheck> checks;
  std::vector<std::string> devices;      // one line per device
  std::vector<std::string> environment;  // overrides in force ("CUDA_VISIBLE_DEVICES=1")
  // As the provider library states them (its ABI table); empty when it is
  // not built or says nothing.
  std::vector<std::string> options;    // "device_id (an integer >= 0)"
  std::vector<std::string> libraries;  // "libcudnn.so.9 or libcudnn.so.8"
};

// Every provider Switchyard knows, in default priority order.
std::vector<ProviderDiagnosis> doctor();

// The diagnosis of one provider by long name (as in doctor()).
ProviderDiagnosis diagnose_provider(const std::string& name);

// The text `switchyard doctor` prints.
std::string format_doctor(const std::vector<ProviderDiagnosis>& report);

}  // namespace sy
