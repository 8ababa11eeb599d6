#include "cuda_options.h"

#include <array>
#include <cerrno>
#include <iterator>
#include <cstdlib>

namespace sy::cuda {
namespace {

struct OptionRule {
  const char* key;
  const char* accepted;
  // Parses value into options; false when it is not acceptable.
  bool (*apply)(const std::string& value, CudaOptions& options);
};

bool parse_uint(const std::string& v, uint64_t& out) {
  if (v.empty() || v.size() > 20) return false;
  for (char c : v)
    if (c < '0' || c > '9') return false;
  errno = 0;
  const unsigned long long x = std::strtoull(v.c_str(), nullptr, 10);
  if (errno == ERANGE) return false;
  out = x;
  return true;
}

bool parse_flag(const std::string& v, bool& out) {
  if (v == "1" || v == "true" || v == "True") {
    out = true;
    return true;
  }
  if (v == "0" || v == "false" || v == "False") {
    out = false;
    return true;
  }
  return false;
}

const OptionRule kRules[] = {
    {"device_id", "an integer >= 0",
     [](const std::string& v, CudaOptions& o) {
       uint64_t x = 0;
       if (!parse_uint(v, x) || x > 1024) return false;
       o.device_id = static_cast<int>(x);
       return true;
     }},
    {"gpu_mem_limit", "a byte count > 0",
     [](const std::string& v, CudaOptions& o) {
       uint64_t x = 0;
       if (!parse_uint(v, x) || x == 0) return false;
       o.gpu_mem_limit = static_cast<size_t>(x);
       return true;
     }},
    {"arena_extend_strategy", "kNextPowerOfTwo or kSameAsRequested",
     [](const std::string& v, CudaOptions& o) {
       if (v == "kNextPowerOfTwo" || v == "0") o.arena_extend_strategy = ArenaExtendStrategy::kNextPowerOfTwo;
       else if (v == "kSameAsRequested" || v == "1") o.arena_extend_strategy = ArenaExtendStrategy::kSameAsRequested;
       else return false;
       return true;
     }},
    {"cudnn_conv_algo_search", "EXHAUSTIVE, HEURISTIC or DEFAULT",
     [](const std::string& v, CudaOptions& o) {
       if (v == "EXHAUSTIVE") o.cudnn_conv_algo_search = ConvAlgoSearch::kExhaustive;
       else if (v == "HEURISTIC") o.cudnn_conv_algo_search = ConvAlgoSearch::kHeuristic;
       else if (v == "DEFAULT") o.cudnn_conv_algo_search = ConvAlgoSearch::kDefault;
       else return false;
       return true;
     }},
    {"do_copy_in_default_stream", "0 or 1", [](const std::string& v, CudaOptions& o) { return parse_flag(v, o.do_copy_in_default_stream); }},
    {"use_tf32", "0 or 1", [](const std::string& v, CudaOptions& o) { return parse_flag(v, o.use_tf32); }},
    {"enable_cuda_graph", "0 or 1", [](const std::string& v, CudaOptions& o) { return parse_flag(v, o.enable_cuda_graph); }},
};

}  // namespace

const sy_option_spec* cuda_option_specs() {
  static const auto specs = [] {
    std::array<sy_option_spec, std::size(kRules) + 1> s{};
    for (size_t i = 0; i < std::size(kRules); ++i) s[i] = {kRules[i].key, kRules[i].accepted};
    return s;  // the last entry stays {nullptr, nullptr}
  }();
  return specs.data();
}

std::string accepted_cuda_options() {
  std::string s;
  for (const OptionRule& r : kRules) s += std::string(s.empty() ? "" : ", ") + r.key + " (" + r.accepted + ")";
  return s;
}

Status parse_cuda_options(const std::vector<std::pair<std::string, std::string>>& pairs, CudaOptions& options) {
  for (const auto& [key, value] : pairs) {
    const OptionRule* rule = nullptr;
    for (const OptionRule& r : kRules)
      if (key == r.key) rule = &r;
    if (rule == nullptr)
      return invalid_argument("CUDAExecutionProvider: unknown option '" + key + "'; accepted: " + accepted_cuda_options());
    if (!rule->apply(value, options))
      return invalid_argument("CUDAExecutionProvider: option " + key + "='" + value + "' is invalid; expected " +
                              rule->accepted);
  }
  return ok_status();
}

const char* conv_algo_search_name(ConvAlgoSearch s) {
  switch (s) {
    case ConvAlgoSearch::kExhaustive: return "EXHAUSTIVE";
    case ConvAlgoSearch::kHeuristic: return "HEURISTIC";
    case ConvAlgoSearch::kDefault: return "DEFAULT";
  }
  return "?";
}

}  // namespace sy::cuda
