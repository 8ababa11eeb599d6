// Provider plugins: every provider but CPU lives in its own shared library,
// loaded by name only when a session asks for it (DESIGN.md). When loading
// fails — the library is missing, one of its dependencies is, it was built
// for another ABI — the loader's message becomes the provider's
// "unavailable" reason, which the fallback policy and doctor report.
//
// A plugin exports sy_provider_get_api, which returns its table of C
// function pointers (switchyard/provider_abi.h); the core checks the ABI
// version and wraps the table in a PluginProvider.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "providers/provider.h"
#include "providers/provider_factory.h"

namespace sy {

// Folders searched for provider libraries, in order: SWITCHYARD_PROVIDER_PATH
// (colon-separated) alone when it is set; otherwise the folder of the
// running executable and of the shared object holding the core (the Python
// module), each with its parent and ../lib, then the dynamic loader's own
// search (LD_LIBRARY_PATH, ld.so.cache).
std::vector<std::string> provider_search_path();

// The full path of `library` in the search path, or "" when it is not
// there (the loader's own search is not consulted).
std::string find_provider_library(const std::string& library);

// The CUDA provider's library file.
inline constexpr const char* kCudaProviderLibrary = "libswitchyard_cuda.so";

// Loads `library` (a file name such as "libswitchyard_cuda.so") and creates
// the provider. Never fails for a load problem: it returns an unavailable
// provider carrying the reason and the fix. Fails only for bad options.
Result<std::unique_ptr<ExecutionProvider>> load_provider_plugin(const ProviderInfo& info, const std::string& library,
                                                                const ProviderOptions& options);

// Makes a plugin provider known by name; sessions load it on demand.
void register_plugin_provider(const ProviderInfo& info, const std::string& library);

}  // namespace sy
