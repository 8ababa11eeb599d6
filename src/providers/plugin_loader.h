// Provider plugins: every provider but CPU lives in its own shared library,
// loaded by name only when a session asks for it (DESIGN.md). When loading
// fails — the library is missing, one of its dependencies is, it was built
// for another ABI — the loader's message becomes the provider's
// "unavailable" reason, which the fallback policy and doctor report.
//
// The entry points a plugin exports (C linkage):
//   int sy_provider_abi_version(void);   must return kProviderAbiVersion
//   sy::ExecutionProvider* sy_provider_create(const char* const* keys,
//       const char* const* values, size_t count, char* error, size_t error_size);
//     returns nullptr and writes a message to `error` on failure.
// This interim ABI passes a C++ object, so a plugin must be built with the
// same compiler and Switchyard headers as the core (the version number
// guards that); the stable C function table of DESIGN.md replaces it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "providers/provider.h"
#include "providers/provider_factory.h"

namespace sy {

inline constexpr int kProviderAbiVersion = 1;

// Folders searched for provider libraries, in order: SWITCHYARD_PROVIDER_PATH
// (colon-separated), then the folder of the running executable and its
// ../lib; then the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache)
// when SWITCHYARD_PROVIDER_PATH is not set.
std::vector<std::string> provider_search_path();

// Loads `library` (a file name such as "libswitchyard_cuda.so") and creates
// the provider. Never fails for a load problem: it returns an unavailable
// provider carrying the reason and the fix. Fails only for bad options.
Result<std::unique_ptr<ExecutionProvider>> load_provider_plugin(const ProviderInfo& info, const std::string& library,
                                                                const ProviderOptions& options);

// Makes a plugin provider known by name; sessions load it on demand.
void register_plugin_provider(const ProviderInfo& info, const std::string& library);

}  // namespace sy
