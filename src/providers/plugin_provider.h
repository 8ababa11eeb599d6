// PluginProvider: an ExecutionProvider whose work is done by a provider
// library through the C ABI of switchyard/provider_abi.h. It turns the
// core's Graph, Node, Tensor and KernelContext into the ABI's opaque
// handles and plain structs, and the plugin's int statuses and message
// buffers back into Status.
#pragma once

#include <memory>
#include <string>

#include "providers/provider.h"
#include "switchyard/provider_abi.h"

namespace sy {

// The table the core hands to every plugin.
const sy_host_api* host_api();

// Creates a provider from a plugin's table. Fails for bad options (the
// plugin's message); an unusable provider is still returned and says why
// through availability().
Result<std::unique_ptr<ExecutionProvider>> make_plugin_provider(const sy_provider_api* api, const std::string& library,
                                                                const std::vector<std::pair<std::string, std::string>>& options);

}  // namespace sy
