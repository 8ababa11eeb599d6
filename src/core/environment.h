// Reading the environment variables Switchyard honours, in one place, so
// that the session, doctor and the loaders agree on what a setting means.
#pragma once

#include <string>
#include <vector>

namespace sy {

// The variable's value; empty when unset.
std::string env_value(const char* name);
// Set, non-empty and not "0".
bool env_flag(const char* name);
// "a:b::c" -> {"a", "b", "c"} (empty entries dropped).
std::vector<std::string> split_path_list(const std::string& list);

// "SWITCHYARD_DISABLE_CUDA=1" (or "ORT_CUDA_UNAVAILABLE=1" for CUDA) when
// the environment turns the provider off; empty otherwise.
std::string provider_disabled_by(const std::string& name, const std::string& short_name);

}  // namespace sy
