#include "cli_common.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <system_error>

#include "providers/provider_factory.h"  // canonical_provider_name
#include "switchyard/npy.h"

namespace sy::cli {

std::optional<std::string> Args::get(const std::string& flag) const {
  auto it = flags.find(flag);
  if (it == flags.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Args::all(const std::string& flag) const {
  std::vector<std::string> out;
  auto [b, e] = flags.equal_range(flag);
  for (auto it = b; it != e; ++it) out.push_back(it->second);
  return out;
}

namespace {

// The flags that may be given more than once, each time for another name.
const std::vector<std::string> kRepeatableFlags = {"--input", "--dim", "--provider-option"};

}  // namespace

Result<int64_t> parse_int(const std::string& flag, const std::string& text, int64_t lo, int64_t hi) {
  // from_chars takes no whitespace, no '+' and no locale, and reports
  // overflow instead of saturating as strtoll does.
  int64_t value = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [end, error] = std::from_chars(first, last, value, 10);
  if (text.empty() || error != std::errc() || end != last || value < lo || value > hi)
    return invalid_argument(flag + " must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                            "; got '" + text + "'");
  return value;
}

Result<double> parse_double(const std::string& flag, const std::string& text, double lo, double hi) {
  double value = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [end, error] = std::from_chars(first, last, value, std::chars_format::general);
  // The comparisons are false for NaN, so it fails the range test as well.
  if (text.empty() || error != std::errc() || end != last || !std::isfinite(value) || !(value >= lo && value <= hi)) {
    char range[96];
    std::snprintf(range, sizeof range, " must be a number from %g to %g; got '", lo, hi);
    return invalid_argument(flag + range + text + "'");
  }
  return value;
}

Result<int64_t> int_flag(const Args& args, const std::string& flag, int64_t fallback, int64_t lo, int64_t hi) {
  const std::optional<std::string> text = args.get(flag);
  return text ? parse_int(flag, *text, lo, hi) : Result<int64_t>(fallback);
}

Result<double> double_flag(const Args& args, const std::string& flag, double fallback, double lo, double hi) {
  const std::optional<std::string> text = args.get(flag);
  return text ? parse_double(flag, *text, lo, hi) : Result<double>(fallback);
}

Result<Args> parse_args(int argc, char** argv, int first, const std::vector<std::string>& value_flags,
                        const std::vector<std::string>& boolean_flags) {
  Args args;
  auto known = [&](const std::string& f, const std::vector<std::string>& list) {
    return std::find(list.begin(), list.end(), f) != list.end();
  };
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) {
      args.positional.push_back(a);
      continue;
    }
    std::string name = a;
    std::optional<std::string> value;
    const size_t eq = a.find('=');
    if (eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
    }
    if (known(name, boolean_flags)) {
      // "--strict=0" would otherwise turn strict mode on.
      if (value) return invalid_argument(name + " takes no value; got '" + a + "'");
      args.flags.emplace(name, "1");
    } else if (known(name, value_flags)) {
      if (!value) {
        if (i + 1 >= argc) return invalid_argument(name + " needs a value");
        value = argv[++i];
      }
      // Only the first of "--runs 5 --runs 7" would count, in silence.
      if (auto earlier = args.get(name); earlier && !known(name, kRepeatableFlags))
        return invalid_argument(name + " is given twice ('" + *earlier + "' and '" + *value + "'); it takes one value");
      args.flags.emplace(name, *value);
    } else {
      std::string list;
      for (const auto& f : value_flags) list += " " + f;
      for (const auto& f : boolean_flags) list += " " + f;
      return invalid_argument("unknown option " + name + "; accepted:" + list);
    }
  }
  return args;
}

Result<SessionOptions> session_options_from(const Args& args) {
  SessionOptions options;
  if (auto p = args.get("--providers")) {
    // An empty list or item is a typo (a shell variable that was not set,
    // "cpu,,cuda"); skipping it would run on providers the user did not ask for.
    size_t start = 0;
    while (start <= p->size()) {
      size_t comma = p->find(',', start);
      if (comma == std::string::npos) comma = p->size();
      const std::string name = p->substr(start, comma - start);
      if (name.empty())
        return invalid_argument("--providers takes a comma-separated list of provider names with no empty item; got '" +
                                *p + "'");
      options.providers.push_back({name, {}});
      start = comma + 1;
    }
  }
  // --provider-option PROVIDER:KEY=VALUE, e.g. cuda:use_tf32=0.
  for (const std::string& item : args.all("--provider-option"))
    SY_RETURN_IF_ERROR(apply_provider_option(item, options.providers));
  if (auto f = args.get("--fallback")) {
    FallbackAction a;
    if (*f == "allow") {
      a = FallbackAction::kAllow;
    } else if (*f == "warn") {
      a = FallbackAction::kWarn;
    } else if (*f == "error") {
      a = FallbackAction::kError;
    } else {
      return invalid_argument("--fallback must be allow, warn or error; got '" + *f + "'");
    }
    options.fallback = {a, a};
  }
  if (args.has("--strict")) options.fallback = FallbackPolicy::strict();
  // Each int-typed option keeps its default where the flag is absent.
  auto read_int = [&](const char* flag, int& target, int64_t lo, int64_t hi) -> Status {
    SY_ASSIGN_OR_RETURN(const int64_t n, int_flag(args, flag, target, lo, hi));
    target = static_cast<int>(n);
    return ok_status();
  };
  SY_RETURN_IF_ERROR(read_int("--threads", options.intra_op_threads, 0, 1024));
  SY_RETURN_IF_ERROR(read_int("--max-partitions", options.max_partitions, 0, 1000000));
  SY_RETURN_IF_ERROR(read_int("--min-partition-size", options.min_partition_size, 0, 1000000));
  SY_RETURN_IF_ERROR(read_int("--max-copies", options.max_copies, -1, 1000000));
  if (args.has("--full-placement")) options.require_full_placement = true;
  if (auto o = args.get("--opt-level")) {
    if (*o == "disable" || *o == "0") {
      options.optimization_level = OptimizationLevel::kDisableAll;
    } else if (*o == "basic" || *o == "1") {
      options.optimization_level = OptimizationLevel::kBasic;
    } else if (*o == "extended" || *o == "2") {
      options.optimization_level = OptimizationLevel::kExtended;
    } else if (*o == "all" || *o == "99") {
      options.optimization_level = OptimizationLevel::kAll;
    } else {
      return invalid_argument("--opt-level must be disable, basic, extended or all; got '" + *o + "'");
    }
  }
  if (auto path = args.get("--save-optimized")) options.optimized_model_path = *path;
  return options;
}

namespace {

template <typename T, typename Gen>
void fill_random(Tensor& t, Gen&& gen) {
  T* d = t.data<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) d[i] = gen();
}

template <typename T>
void accumulate(const Tensor& t, double& mn, double& mx, double& sum, std::string& first) {
  const T* d = t.data<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const auto v = static_cast<double>(d[i]);
    mn = std::min(mn, v);
    mx = std::max(mx, v);
    sum += v;
    if (i < 5) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", v);
      first += buf;
    }
  }
}

}  // namespace

Result<Tensor> random_input(const ValueInfo& info, const std::map<std::string, int64_t>& dims, uint32_t seed) {
  Shape shape;
  for (const DimInfo& d : info.shape) {
    if (d.value >= 0) {
      shape.push_back(d.value);
    } else {
      auto it = dims.find(d.symbol);
      shape.push_back(it == dims.end() ? 1 : it->second);
    }
  }
  SY_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(info.dtype, shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  // Integer inputs are usually token ids, type ids or masks: 0 and 1 are
  // valid for every one of them (an embedding has at least two rows).
  std::uniform_int_distribution<int> small(0, 1);
  const bool is_mask = info.name.find("mask") != std::string::npos;
  if (is_mask) small = std::uniform_int_distribution<int>(1, 1);
  switch (info.dtype) {
    case DataType::kFloat: fill_random<float>(t, [&] { return real(rng); }); break;
    case DataType::kDouble: fill_random<double>(t, [&] { return static_cast<double>(real(rng)); }); break;
    case DataType::kFloat16: fill_random<uint16_t>(t, [&] { return float_to_float16(real(rng)); }); break;
    case DataType::kInt64: fill_random<int64_t>(t, [&] { return static_cast<int64_t>(small(rng)); }); break;
    case DataType::kInt32: fill_random<int32_t>(t, [&] { return static_cast<int32_t>(small(rng)); }); break;
    case DataType::kInt8: fill_random<int8_t>(t, [&] { return static_cast<int8_t>(small(rng)); }); break;
    case DataType::kUint8: fill_random<uint8_t>(t, [&] { return static_cast<uint8_t>(small(rng)); }); break;
    case DataType::kBool: fill_random<bool>(t, [&] { return small(rng) % 2 == 1; }); break;
    default:
      return not_implemented("cannot make random data for input '" + info.name + "' of type " + info.type +
                             "; give it with --input " + info.name + "=FILE.npy");
  }
  return t;
}

namespace {

// "NAME=VALUE" -> (NAME, VALUE); an error naming the flag otherwise.
Result<std::pair<std::string, std::string>> split_assignment(const std::string& flag, const std::string& text,
                                                             const char* form) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return invalid_argument(flag + " takes " + form + ", got '" + text + "'");
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

// Far past any real dimension. The product of several is checked for
// overflow and memory when the random input is allocated.
constexpr int64_t kMaxDim = int64_t{1} << 31;

// A sequence input's --input value: .npy files separated by commas, one
// per element; empty for an empty sequence.
Result<Tensor> load_sequence(const ValueInfo& info, const std::string& files) {
  std::vector<Tensor> items;
  size_t start = 0;
  while (start < files.size()) {
    size_t comma = files.find(',', start);
    if (comma == std::string::npos) comma = files.size();
    const std::string file = files.substr(start, comma - start);
    auto t = load_npy(file);
    if (!t.ok()) return t.status().with_context("element " + std::to_string(items.size()));
    items.push_back(std::move(t).value());
    start = comma + 1;
  }
  // The session checks the elements' type against the declared one.
  return Tensor::sequence(info.element_dtype, std::move(items));
}

}  // namespace

Result<Feeds> make_feeds(const Args& args, const Session& session, int64_t batch) {
  std::set<std::string> symbols;
  for (const ValueInfo& info : session.inputs())
    for (const DimInfo& d : info.shape)
      if (d.value < 0 && !d.symbol.empty()) symbols.insert(d.symbol);
  std::map<std::string, int64_t> dims;
  for (const std::string& d : args.all("--dim")) {
    SY_ASSIGN_OR_RETURN(auto kv, split_assignment("--dim", d, "SYMBOL=VALUE"));
    SY_ASSIGN_OR_RETURN(const int64_t value, parse_int("--dim " + kv.first, kv.second, 0, kMaxDim));
    // As for a repeated flag: only one of the two values would count.
    if (!dims.emplace(kv.first, value).second) return invalid_argument("--dim " + kv.first + " is given twice");
    // A misspelt symbol would leave the real one at its default of 1.
    if (!symbols.count(kv.first)) {
      std::string names;
      for (const std::string& name : symbols) names += " " + name;
      return invalid_argument("--dim " + kv.first + ": no input of the model has a symbolic dimension of that name; " +
                              (names.empty() ? std::string("it has none") : "its symbols are:" + names));
    }
  }
  std::map<std::string, std::string> files;
  for (const std::string& in : args.all("--input")) {
    SY_ASSIGN_OR_RETURN(auto kv, split_assignment("--input", in, "NAME=FILE.npy"));
    bool known = false;
    for (const ValueInfo& info : session.inputs()) known |= info.name == kv.first;
    if (!known) {
      std::string names;
      for (const ValueInfo& info : session.inputs()) names += " " + info.name;
      return invalid_argument("--input " + kv.first + ": the model has no input of that name; its inputs are:" + names);
    }
    if (!files.emplace(kv.first, kv.second).second) return invalid_argument("--input " + kv.first + " is given twice");
  }
  SY_ASSIGN_OR_RETURN(const int64_t first_seed, int_flag(args, "--seed", 0, 0, UINT32_MAX));
  auto seed = static_cast<uint32_t>(first_seed);
  Feeds feeds;
  for (const ValueInfo& info : session.inputs()) {
    auto f = files.find(info.name);
    if (f != files.end()) {
      auto t = info.sequence ? load_sequence(info, f->second) : load_npy(f->second);
      if (!t.ok()) return t.status().with_context("input '" + info.name + "'");
      feeds.tensors.emplace_back(info.name, std::move(t).value());
      feeds.sources.push_back(f->second.empty() ? "(empty)" : "from " + f->second);
      continue;
    }
    // No data to make up for a container: an optional is left empty, and a
    // sequence's length and element shapes are the user's to choose.
    if (info.optional) {
      feeds.tensors.emplace_back(info.name, Tensor::none(info.element_dtype));
      feeds.sources.push_back("(not given)");
      continue;
    }
    if (info.sequence)
      return invalid_argument("input '" + info.name + "' is " + info.type + "; give its elements with --input " +
                              info.name + "=A.npy,B.npy,... (nothing after '=' for an empty sequence)");
    std::map<std::string, int64_t> d = dims;
    if (!info.shape.empty() && info.shape[0].value < 0 && !d.count(info.shape[0].symbol)) d[info.shape[0].symbol] = batch;
    SY_ASSIGN_OR_RETURN(Tensor t, random_input(info, d, seed++));
    feeds.tensors.emplace_back(info.name, std::move(t));
    feeds.sources.push_back("(random)");
  }
  return feeds;
}

std::string summarize(const Tensor& t) {
  if (t.kind() == ValueKind::kNone) return "none";
  if (t.kind() == ValueKind::kSequence) {
    // One line per element, under the sequence's own; a long sequence is cut
    // short so that the summary stays a summary.
    constexpr size_t kMaxItems = 20;
    const std::vector<Tensor>& items = t.items();
    std::string s = t.describe();
    for (size_t k = 0; k < items.size() && k < kMaxItems; ++k)
      s += "\n  [" + std::to_string(k) + "] " + summarize(items[k]);
    if (items.size() > kMaxItems) s += "\n  ... " + std::to_string(items.size() - kMaxItems) + " more";
    return s;
  }
  std::string s = t.describe();
  if (t.num_elements() == 0) return s + " (empty)";
  double mn = INFINITY, mx = -INFINITY, sum = 0;
  std::string first;
  switch (t.dtype()) {
    case DataType::kFloat: accumulate<float>(t, mn, mx, sum, first); break;
    case DataType::kDouble: accumulate<double>(t, mn, mx, sum, first); break;
    case DataType::kInt64: accumulate<int64_t>(t, mn, mx, sum, first); break;
    case DataType::kInt32: accumulate<int32_t>(t, mn, mx, sum, first); break;
    case DataType::kInt8: accumulate<int8_t>(t, mn, mx, sum, first); break;
    case DataType::kUint8: accumulate<uint8_t>(t, mn, mx, sum, first); break;
    case DataType::kBool: accumulate<bool>(t, mn, mx, sum, first); break;
    default: return s;
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, " min %.6g max %.6g mean %.6g first [", mn, mx,
                sum / static_cast<double>(t.num_elements()));
  return s + buf + first + (t.num_elements() > 5 ? ", ...]" : "]");
}

Result<Device> parse_device_name(const std::string& text) {
  if (text == "cpu") return kCpuDevice;
  const std::string prefix = "cuda";
  if (text.rfind(prefix, 0) != 0) return invalid_argument("expected cpu, cuda or cuda:N; got '" + text + "'");
  if (text.size() == prefix.size()) return Device{DeviceType::kCuda, 0};
  const Result<int64_t> id = parse_int("the device id", text.substr(prefix.size() + 1), 0, 1023);
  if (text[prefix.size()] != ':' || !id.ok())
    return invalid_argument("expected cpu, cuda or cuda:N with N from 0 to 1023; got '" + text + "'");
  return Device{DeviceType::kCuda, static_cast<int32_t>(*id)};
}

std::string format_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  return buf;
}

}  // namespace sy::cli
