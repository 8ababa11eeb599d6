#include "providers/plugin_loader.h"

#include "core/environment.h"
#include "providers/plugin_provider.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace sy {
namespace {

std::string executable_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

// The folder of the shared object this code is linked into: the Python
// module's folder when Switchyard runs inside Python, where the
// executable is the interpreter.
std::string module_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&executable_dir), &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  const auto path = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::string() : path.parent_path().string();
}

// The full path of `library` in the first of `dirs` that holds it, or "".
std::string find_in(const std::vector<std::string>& dirs, const std::string& library) {
  std::error_code ec;
  for (const std::string& d : dirs) {
    const auto candidate = std::filesystem::path(d) / library;
    if (!std::filesystem::exists(candidate, ec)) continue;
    const auto canonical = std::filesystem::weakly_canonical(candidate, ec);
    return ec ? candidate.string() : canonical.string();
  }
  return {};
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
  const std::string module = module_dir();
  for (const std::string& d : {executable_dir(), module}) {
    if (d.empty()) continue;
    // The Python module sits in <build>/python/switchyard: two levels down.
    const std::string up2 = d == module ? d + "/../.." : d + "/..";
    for (const std::string& candidate : {d, d + "/..", d + "/../lib", up2})
      if (std::find(dirs.begin(), dirs.end(), candidate) == dirs.end()) dirs.push_back(candidate);
  }
  return dirs;
}

std::string find_provider_library(const std::string& library) { return find_in(provider_search_path(), library); }

Result<std::unique_ptr<ExecutionProvider>> load_provider_plugin(const ProviderInfo& info, const std::string& library,
                                                                const ProviderOptions& options) {
  const std::vector<std::string> dirs = provider_search_path();
  const std::string path = find_in(dirs, library);
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
  const std::string where = path.empty() ? library : path;
  auto get_api = reinterpret_cast<sy_provider_get_api_fn>(dlsym(handle, SY_PROVIDER_GET_API_SYMBOL));
  if (get_api == nullptr)
    return unavailable(info, where + " is not a Switchyard provider library (it has no " SY_PROVIDER_GET_API_SYMBOL ")",
                       "check that " + library + " is the right file");
  const sy_provider_api* api = get_api(SY_PROVIDER_ABI_VERSION);
  if (api == nullptr || api->abi_version != SY_PROVIDER_ABI_VERSION || api->size < sizeof(sy_provider_api))
    return unavailable(info, where + " does not serve provider ABI " + std::to_string(SY_PROVIDER_ABI_VERSION) +
                                 (api ? " (it was built for ABI " + std::to_string(api->abi_version) + ")" : ""),
                       "use the provider library that came with this Switchyard");
  if (api->kernel_prepare != nullptr && api->kernel_state_destroy == nullptr)
    return unavailable(info, where + " has kernel_prepare but no kernel_state_destroy to free what it makes",
                       "fix the provider library: a prepare phase needs both entries");
  // The library stays loaded for the life of the process: its code backs
  // the provider object and any kernels it creates.
  return make_plugin_provider(api, where, std::vector<std::pair<std::string, std::string>>(options.begin(), options.end()));
}

void register_plugin_provider(const ProviderInfo& info, const std::string& library) {
  register_provider(info, [info, library](const ProviderOptions& options) {
    return load_provider_plugin(info, library, options);
  });
}

}  // namespace sy
