// Shared pieces of the `switchyard` CLI commands: argument parsing, the
// provider list, random inputs and output summaries.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "switchyard/session.h"

namespace sy::cli {

// --runs above this is a typo or an attack, not a benchmark: ten million runs
// of even a 1 ms model take almost three hours.
constexpr int64_t kMaxRuns = 10'000'000;

// Parsed command line: positional arguments and --flags. A flag may repeat
// (--input a=x.npy --input b=y.npy); "--flag=value" and "--flag value" both work.
struct Args {
  std::vector<std::string> positional;
  std::multimap<std::string, std::string> flags;

  bool has(const std::string& flag) const { return flags.count(flag) > 0; }
  std::optional<std::string> get(const std::string& flag) const;
  std::vector<std::string> all(const std::string& flag) const;
};

// Whole-string numeric flag values. The value must be a base-10 integer (or,
// for parse_double, a finite decimal number) in [lo, hi] with nothing after
// it; otherwise InvalidArgument "FLAG must be an integer from LO to HI; got
// 'VALUE'". Every numeric flag goes through these, so that "abc", "-5", "",
// "1e999" and values past int64 get the same clear error instead of an
// exception from std::stoi or a silent wrap.
Result<int64_t> parse_int(const std::string& flag, const std::string& text, int64_t lo, int64_t hi);
Result<double> parse_double(const std::string& flag, const std::string& text, double lo, double hi);

// The flag's value parsed as above, or `fallback` where the flag is absent.
Result<int64_t> int_flag(const Args& args, const std::string& flag, int64_t fallback, int64_t lo, int64_t hi);
Result<double> double_flag(const Args& args, const std::string& flag, double fallback, double lo, double hi);

// `boolean_flags` take no value. Unknown flags are errors listing the known
// ones; a value flag given twice is an error unless it names something each
// time (--input, --dim, --provider-option).
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

// The inputs for a run: --input NAME=FILE.npy where given (for a sequence
// input NAME=A.npy,B.npy,...), random data (--seed) elsewhere, with
// symbolic dims from --dim SYMBOL=VALUE, and an unset symbolic first dim
// set to `batch`; an optional input not given is empty, and a sequence
// input must be given. InvalidArgument for bad flags,
// unknown input names or symbols no input has.
Result<Feeds> make_feeds(const Args& args, const Session& session, int64_t batch = 1);

// "float[1,1000] min -2.31 max 3.07 mean 0.0012 first [0.1, -0.3, ...]";
// a sequence: "seq(float) of N", then a line "  [k] ..." per element; an
// empty optional: "none".
std::string summarize(const Tensor& t);

// "cpu", "cuda" or "cuda:N" as a Device.
Result<Device> parse_device_name(const std::string& text);

// "2.31 ms"
std::string format_ms(double ms);

}  // namespace sy::cli
