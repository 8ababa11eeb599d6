// doctor(): the diagnosis behind `switchyard doctor`. For each provider:
// built here?, can it load here?, is its device present? — and if not,
// exactly why and what to do.
#include "switchyard/doctor.h"

#include <cstdlib>
#include <string>
#include <thread>

#include "core/cpu_features.h"
#include "core/environment.h"
#include "providers/probe/cuda_probe.h"
#include "providers/plugin_loader.h"
#include "providers/probe/library_probe.h"
#include "providers/provider_factory.h"

namespace sy {
namespace {

// ROCm's device probe is not written yet, so its device shows as absent.
// The CUDA provider is built for CUDA 13 with sm_80 and sm_90 code and
// compute_90 PTX.
constexpr int kCudaBuiltFor = 13000;

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

DoctorCheck library_check(const std::vector<std::string>& sonames) {
  const LibraryProbe p = probe_first_library(sonames);
  DoctorCheck c;
  c.what = join(sonames, " or ");
  if (p.found && p.loads) {
    c.ok = true;
    c.detail = p.path;
  } else if (p.found) {
    c.detail = p.path + " found but does not load: " + p.error;
  } else {
    c.detail = "not found; searched: " + join(p.searched, ", ");
  }
  return c;
}

void add_disable_env(ProviderDiagnosis& d) {
  const std::string setting = provider_disabled_by(d.name, d.short_name);
  if (!setting.empty()) d.environment.push_back(setting + " (turns " + d.name + " off)");
}

ProviderDiagnosis diagnose_cpu() {
  ProviderDiagnosis d;
  d.name = "CPUExecutionProvider";
  d.short_name = "cpu";
  d.built = d.loadable = d.device_present = d.usable = true;
  const std::string cap = cpu_isa_cap_setting();
  const std::string isa = cpu_isa_name(best_cpu_isa()) + (cap.empty() ? "" : " (capped by " + cap + ")");
  d.devices.push_back("host CPU: " + std::to_string(std::thread::hardware_concurrency()) +
                      " hardware threads, fastest kernels: " + isa);
  return d;
}

ProviderDiagnosis diagnose_cuda() {
  ProviderDiagnosis d;
  d.name = "CUDAExecutionProvider";
  d.short_name = "cuda";
  const std::string library = find_provider_library(kCudaProviderLibrary);
  d.built = !library.empty();
  DoctorCheck lib;
  lib.what = std::string("provider library ") + kCudaProviderLibrary;
  lib.ok = d.built;
  lib.detail = d.built ? library : "not found; searched: " + join(provider_search_path(), ", ");
  d.checks.push_back(lib);
  // The NVIDIA libraries it needs and its options come from the provider
  // library itself (below), which also reports what it found, through its
  // own search, the one sessions use: the core keeps no copy of either.
  const CudaDriverProbe drv = probe_cuda_driver();
  DoctorCheck driver;
  driver.what = "NVIDIA driver (libcuda.so.1)";
  if (drv.driver_found) {
    driver.ok = drv.error.empty() && drv.driver_version >= kCudaBuiltFor;
    driver.detail = drv.driver_path + ", supports CUDA up to " + cuda_version_string(drv.driver_version) +
                    "; the provider is built for CUDA " + cuda_version_string(kCudaBuiltFor) +
                    (drv.error.empty() ? "" : "; " + drv.error);
  } else {
    driver.detail = drv.error;
  }
  d.checks.push_back(driver);
  for (const GpuInfo& g : drv.gpus) {
    const int cc = g.cc_major * 10 + g.cc_minor;
    const bool runnable = cc >= 80;  // sm_80 cubins run on 8.x; compute_90 PTX JITs on 9.0 and newer
    const std::string how = g.cc_major == 8 ? "sm_80 code" : (g.cc_major == 9 ? "sm_90 code" : "compute_90 PTX, compiled at load");
    d.devices.push_back("GPU " + std::to_string(g.index) + ": " + g.name + ", compute capability " +
                        std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor) + ", " +
                        std::to_string(g.memory_bytes >> 20) + " MiB, " +
                        (runnable ? "runnable (" + how + ")" : "NOT runnable: no kernel image for compute capability below 8.0"));
  }
  d.device_present = !drv.gpus.empty();
  if (const std::string visible = env_value("CUDA_VISIBLE_DEVICES"); !visible.empty())
    d.environment.push_back("CUDA_VISIBLE_DEVICES=" + visible);
  add_disable_env(d);

  if (!d.built) {
    d.reason = "not built into this installation (" + lib.detail + ")";
    d.fix = "build Switchyard on a machine with the CUDA toolkit (nvcc) so that " + std::string(kCudaProviderLibrary) +
            " is built, or set SWITCHYARD_PROVIDER_PATH to its folder";
    d.loadable = false;
    return d;
  }
  // The provider's own verdict is the one sessions act on.
  auto provider = load_provider_plugin({d.name, d.short_name, true}, library, {});
  if (!provider.ok()) {
    d.reason = provider.status().message();
    return d;
  }
  const Availability a = (*provider)->availability();
  d.options = (*provider)->option_specs();
  d.libraries = (*provider)->required_libraries();
  const std::string facts = (*provider)->describe();
  // Loadable: its libraries were found (describe() marks a missing one).
  d.loadable = facts.find("MISSING") == std::string::npos;
  d.usable = a.available;
  if (!a.available) {
    d.reason = a.reason;
    d.fix = a.fix;
  }
  size_t start = 0;
  while (start < facts.size()) {
    size_t end = facts.find('\n', start);
    if (end == std::string::npos) end = facts.size();
    if (end > start) d.devices.push_back(facts.substr(start, end - start));
    start = end + 1;
  }
  return d;
}

ProviderDiagnosis diagnose_library_provider(const std::string& name, const std::string& short_name,
                                            const std::vector<std::string>& sonames, const std::string& package_hint,
                                            bool device_present) {
  ProviderDiagnosis d;
  d.name = name;
  d.short_name = short_name;
  d.checks.push_back(library_check(sonames));
  d.loadable = false;
  d.device_present = device_present;
  d.reason = "not built into this installation";
  d.fix = "a Switchyard build with the " + short_name + " provider is needed" +
          (package_hint.empty() ? std::string() : "; its runtime comes from " + package_hint);
  add_disable_env(d);
  return d;
}

ProviderDiagnosis diagnose_platform_provider(const std::string& name, const std::string& short_name,
                                             const std::string& platform) {
  ProviderDiagnosis d;
  d.name = name;
  d.short_name = short_name;
  d.reason = "not built into this installation; it runs only on " + platform;
  d.fix = "use it from a Switchyard build on " + platform;
  add_disable_env(d);
  return d;
}

}  // namespace

std::vector<ProviderDiagnosis> doctor() {
  std::vector<ProviderDiagnosis> out;
  for (const ProviderInfo& p : known_providers()) out.push_back(diagnose_provider(p.name));
  return out;
}

ProviderDiagnosis diagnose_provider(const std::string& name) {
  std::vector<ProviderDiagnosis> out;
  for (const ProviderInfo& p : known_providers()) {
    if (p.name != name) continue;
    if (p.name == "CPUExecutionProvider") {
      out.push_back(diagnose_cpu());
    } else if (p.name == "CUDAExecutionProvider") {
      out.push_back(diagnose_cuda());
    } else if (p.name == "TensorrtExecutionProvider") {
      out.push_back(diagnose_library_provider(p.name, p.short_name, {"libnvinfer.so.10", "libnvinfer.so.8"},
                                              "NVIDIA TensorRT", !probe_cuda_driver().gpus.empty()));
    } else if (p.name == "ROCMExecutionProvider") {
      out.push_back(diagnose_library_provider(p.name, p.short_name, {"libamdhip64.so.6", "libamdhip64.so.5"}, "AMD ROCm",
                                              false));
    } else if (p.name == "OpenVINOExecutionProvider") {
      out.push_back(diagnose_library_provider(p.name, p.short_name, {"libopenvino.so"}, "Intel OpenVINO", true));
    } else if (p.name == "DnnlExecutionProvider") {
      out.push_back(diagnose_library_provider(p.name, p.short_name, {"libdnnl.so.3", "libdnnl.so.2"},
                                              "Debian's libdnnl-dev", true));
    } else if (p.name == "CoreMLExecutionProvider") {
      out.push_back(diagnose_platform_provider(p.name, p.short_name, "Apple platforms (macOS, iOS)"));
    } else if (p.name == "NnapiExecutionProvider") {
      out.push_back(diagnose_platform_provider(p.name, p.short_name, "Android"));
    } else if (p.name == "XnnpackExecutionProvider") {
      out.push_back(diagnose_library_provider(p.name, p.short_name, {"libXNNPACK.so"}, "", true));
    } else {
      // A provider registered at run time (a plugin, or the tests' own).
      ProviderDiagnosis d;
      d.name = p.name;
      d.short_name = p.short_name;
      d.built = p.built;
      auto provider = create_provider(p.name, {});
      if (provider.ok()) {
        const Availability a = (*provider)->availability();
        d.loadable = d.device_present = d.usable = a.available;
        d.reason = a.reason;
        d.fix = a.fix;
        d.devices.push_back((*provider)->device().to_string());
        d.options = (*provider)->option_specs();
        d.libraries = (*provider)->required_libraries();
      } else {
        d.reason = provider.status().message();
      }
      add_disable_env(d);
      out.push_back(std::move(d));
    }
  }
  if (out.empty()) {
    ProviderDiagnosis unknown;
    unknown.name = name;
    unknown.reason = "not a known provider";
    return unknown;
  }
  ProviderDiagnosis& d = out.front();
  // One rule for every provider, the same the session applies.
  if (const std::string setting = provider_disabled_by(d.name, d.short_name); d.usable && !setting.empty()) {
    d.usable = false;
    d.reason = "disabled by the environment variable " + setting;
    d.fix = "unset it";
  }
  return d;
}

std::string format_doctor(const std::vector<ProviderDiagnosis>& report) {
  std::string s;
  auto yes = [](bool b) { return b ? std::string("yes") : std::string("no"); };
  for (const ProviderDiagnosis& d : report) {
    s += d.name + " (" + d.short_name + "): " + (d.usable ? "READY" : "UNAVAILABLE") + "\n";
    s += "  built into this installation: " + yes(d.built) + "; loadable here: " + yes(d.loadable) +
         "; device present: " + yes(d.device_present) + "\n";
    for (const DoctorCheck& c : d.checks) s += "  [" + std::string(c.ok ? "ok" : "--") + "] " + c.what + ": " + c.detail + "\n";
    for (const std::string& dev : d.devices) s += "  " + dev + "\n";
    for (const std::string& e : d.environment) s += "  environment: " + e + "\n";
    for (const std::string& l : d.libraries) s += "  needs: " + l + "\n";
    if (!d.options.empty()) {
      std::string options;
      for (const std::string& o : d.options) options += (options.empty() ? "" : ", ") + o;
      s += "  options: " + options + "\n";
    }
    if (!d.usable) {
      s += "  why: " + d.reason + "\n";
      if (!d.fix.empty()) s += "  fix: " + d.fix + "\n";
    }
  }
  return s;
}

}  // namespace sy
