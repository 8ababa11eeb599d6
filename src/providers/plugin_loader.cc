#include "providers/plugin_loader.h"

#include "core/environment.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace sy {
namespace {

using AbiVersionFn = int (*)();
using CreateFn = ExecutionProvider* (*)(const char* const*, const char* const*, size_t, char*, size_t);

std::string executable_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

std::unique_ptr<ExecutionProvider> unavailable(const ProviderInfo& info, std::string reason, std::string fix) {
  Availability a;
  a.available = false;
  a.reason = std::move(reason);
  a.fix = std::move(fix);
  return make_unavailable_provider(info.name, info.short_name, a);
}

}  // namespace

std::vector<std::string> provider_search_path() {
  std::vector<std::string> dirs;
  if (std::getenv("SWITCHYARD_PROVIDER_PATH") != nullptr)
    return split_path_list(env_value("SWITCHYARD_PROVIDER_PATH"));  // an explicit path replaces the defaults
  const std::string exe = executable_dir();
  if (!exe.empty()) {
    dirs.push_back(exe);
    dirs.push_back(exe + "/../lib");
  }
  return dirs;
}

Result<std::unique_ptr<ExecutionProvider>> load_provider_plugin(const ProviderInfo& info, const std::string& library,
                                                                const ProviderOptions& options) {
  const std::vector<std::string> dirs = provider_search_path();
  std::string path;
  std::error_code ec;
  for (const std::string& d : dirs) {
    const auto candidate = std::filesystem::path(d) / library;
    if (std::filesystem::exists(candidate, ec)) {
      path = candidate.string();
      break;
    }
  }
  std::string searched;
  for (const std::string& d : dirs) searched += (searched.empty() ? "" : ", ") + d;
  if (path.empty() && std::getenv("SWITCHYARD_PROVIDER_PATH") != nullptr)
    return unavailable(info, library + " not found; searched: " + (searched.empty() ? "(nothing)" : searched),
                       "put " + library + " in one of those folders or add its folder to SWITCHYARD_PROVIDER_PATH");
  // Without an explicit path, the dynamic loader's own search is the last resort.
  void* handle = dlopen(path.empty() ? library.c_str() : path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    const std::string err = e ? e : "dlopen failed";
    if (path.empty())
      return unavailable(info, library + " not found (searched: " + searched + ", then the loader's path): " + err,
                         "install the " + info.short_name + " provider library, or set SWITCHYARD_PROVIDER_PATH to its folder");
    return unavailable(info, path + " failed to load: " + err,
                       "install the library it names, or add the folder holding it to LD_LIBRARY_PATH");
  }
  auto version = reinterpret_cast<AbiVersionFn>(dlsym(handle, "sy_provider_abi_version"));
  auto create = reinterpret_cast<CreateFn>(dlsym(handle, "sy_provider_create"));
  const std::string where = path.empty() ? library : path;
  if (version == nullptr || create == nullptr)
    return unavailable(info, where + " is not a Switchyard provider library (no sy_provider_create)",
                       "check that " + library + " is the right file");
  if (version() != kProviderAbiVersion)
    return unavailable(info, where + " was built for provider ABI " + std::to_string(version()) + ", this runtime needs " +
                                 std::to_string(kProviderAbiVersion),
                       "use the provider library that came with this Switchyard");
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : options) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  char error[1024] = {};
  ExecutionProvider* p = create(keys.data(), values.data(), keys.size(), error, sizeof error);
  // The library stays loaded for the life of the process: its code backs
  // the provider object and any kernels it creates.
  if (p == nullptr) return invalid_argument(info.name + ": " + (error[0] ? error : "provider creation failed"));
  return std::unique_ptr<ExecutionProvider>(p);
}

void register_plugin_provider(const ProviderInfo& info, const std::string& library) {
  register_provider(info, [info, library](const ProviderOptions& options) {
    return load_provider_plugin(info, library, options);
  });
}

}  // namespace sy
