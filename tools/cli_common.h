// Shared pieces of the `switchyard` CLI commands: argument parsing, the
// provider list, random inputs and output summaries.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "switchyard/session.h"

namespace sy::cli {

// Parsed command line: positional arguments and --flags. A flag may repeat
// (--input a=x.npy --input b=y.npy); "--flag=value" and "--flag value" both work.
struct Args {
  std::vector<std::string> positional;
  std::multimap<std::string, std::string> flags;

  bool has(const std::string& flag) const { return flags.count(flag) > 0; }
  std::optional<std::string> get(const std::string& flag) const;
  std::vector<std::string> all(const std::string& flag) const;
};

// `boolean_flags` take no value. Unknown flags are errors listing the known ones.
Result<Args> parse_args(int argc, char** argv, int first, const std::vector<std::string>& value_flags,
                        const std::vector<std::string>& boolean_flags);

// Builds SessionOptions from --providers, --strict, --fallback, --threads,
// --opt-level.
Result<SessionOptions> session_options_from(const Args& args);

// Random data for an input, with symbolic dims taken from `dims` (name ->
// value, default 1). Floats uniform in [-1, 1), ints 0 or 1
// (inputs named *mask* all 1), bools 0/1.
Result<Tensor> random_input(const ValueInfo& info, const std::map<std::string, int64_t>& dims, uint32_t seed);

struct Feeds {
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::vector<std::string> sources;  // per feed: "from FILE" or "(random)"
};

// The inputs for a run: --input NAME=FILE.npy where given, random data
// (--seed) elsewhere, with symbolic dims from --dim SYMBOL=VALUE, and an
// unset symbolic first dim set to `batch`. InvalidArgument for bad flags or
// unknown input names.
Result<Feeds> make_feeds(const Args& args, const Session& session, int64_t batch = 1);

// "float[1,1000] min -2.31 max 3.07 mean 0.0012 first [0.1, -0.3, ...]"
std::string summarize(const Tensor& t);

// "cpu", "cuda" or "cuda:N" as a Device.
Result<Device> parse_device_name(const std::string& text);

// "2.31 ms"
std::string format_ms(double ms);

}  // namespace sy::cli
