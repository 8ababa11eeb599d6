// Provider names and creation. Users type long ORT names
// ("CUDAExecutionProvider") or short aliases ("cuda"); both resolve here. A
// misspelling is an error that suggests the closest known name.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "providers/provider.h"
#include "switchyard/session.h"  // ProviderRequest
#include "switchyard/status.h"

namespace sy {

struct ProviderInfo {
  std::string name;        // "CUDAExecutionProvider"
  std::string short_name;  // "cuda"
  bool built = false;      // part of this installation
};

using ProviderOptions = std::map<std::string, std::string>;
using ProviderFactory = std::function<Result<std::unique_ptr<ExecutionProvider>>(const ProviderOptions&)>;

// Every provider Switchyard knows, built or not, in its default priority.
std::vector<ProviderInfo> known_providers();

// The long name for a long name or alias (case-insensitive); an error
// suggesting the closest known name otherwise.
Result<std::string> canonical_provider_name(const std::string& user_name);

// Sets one provider option written PROVIDER:KEY=VALUE ("cuda:use_tf32=0",
// the command lines' --provider-option) on the request of `requests` that
// names that provider (by any of its names); an error naming the text when
// it is malformed or names no listed provider.
Status apply_provider_option(const std::string& text, std::span<ProviderRequest> requests);

// Creates a provider by long name. Providers that are known but not built
// here, or that cannot load, come back as an object whose availability()
// says why, so the fallback policy can report it.
Result<std::unique_ptr<ExecutionProvider>> create_provider(const std::string& long_name, const ProviderOptions& options);

// Registers an extra provider (plugins, and the test-only provider). The
// name becomes known and built.
void register_provider(const ProviderInfo& info, ProviderFactory factory);

// A provider that cannot run anything; it carries the reason.
std::unique_ptr<ExecutionProvider> make_unavailable_provider(const std::string& name, const std::string& short_name,
                                                             Availability why);

}  // namespace sy
