#include "core/environment.h"

#include <cctype>
#include <cstdlib>

namespace sy {

std::string env_value(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

bool env_flag(const char* name) {
  const std::string v = env_value(name);
  return !v.empty() && v != "0";
}

std::vector<std::string> split_path_list(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t colon = list.find(':', start);
    if (colon == std::string::npos) colon = list.size();
    if (colon > start) out.push_back(list.substr(start, colon - start));
    start = colon + 1;
  }
  return out;
}

std::string provider_disabled_by(const std::string& name, const std::string& short_name) {
  std::string var = "SWITCHYARD_DISABLE_";
  for (char c : short_name) var += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (env_flag(var.c_str())) return var + "=" + env_value(var.c_str());
  if (name == "CUDAExecutionProvider" && env_flag("ORT_CUDA_UNAVAILABLE"))
    return "ORT_CUDA_UNAVAILABLE=" + env_value("ORT_CUDA_UNAVAILABLE");
  return {};
}

}  // namespace sy
