#include "providers/provider_factory.h"

#include <algorithm>
#include <cctype>
#include <mutex>

#include "providers/cpu/cpu_provider.h"
#include "providers/plugin_loader.h"
#include "switchyard/doctor.h"

namespace sy {
namespace {

struct Registered {
  ProviderInfo info;
  ProviderFactory factory;
};

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::vector<Registered>& extra_providers() {
  static std::vector<Registered> v;
  return v;
}

// The providers ONNX Runtime users know, in the order people list them.
// CPU is always built in; CUDA is when its library (libswitchyard_cuda.so)
// sits in the provider search path; the others resolve by name so that
// asking for them gives a clear "not built" reason.
const ProviderInfo kBuiltin[] = {
    {"TensorrtExecutionProvider", "tensorrt", false},
    {"CUDAExecutionProvider", "cuda", false},
    {"ROCMExecutionProvider", "rocm", false},
    {"OpenVINOExecutionProvider", "openvino", false},
    {"DnnlExecutionProvider", "dnnl", false},
    {"CoreMLExecutionProvider", "coreml", false},
    {"NnapiExecutionProvider", "nnapi", false},
    {"XnnpackExecutionProvider", "xnnpack", false},
    {"CPUExecutionProvider", "cpu", true},
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

class UnavailableProvider final : public ExecutionProvider {
 public:
  UnavailableProvider(std::string name, std::string short_name, Availability why)
      : name_(std::move(name)), short_name_(std::move(short_name)), why_(std::move(why)) {}
  std::string name() const override { return name_; }
  std::string short_name() const override { return short_name_; }
  Availability availability() const override { return why_; }
  Device device() const override { return kCpuDevice; }
  Allocator* allocator() override { return cpu_allocator(); }
  std::vector<NodeSupport> capability(const Graph&, std::span<const NodeId> candidates) override {
    std::vector<NodeSupport> answers;
    for (NodeId id : candidates) answers.push_back({id, false, "provider unavailable: " + why_.reason});
    return answers;
  }
  Result<CreatedKernel> create_kernel(const Graph&, NodeId, const CompiledSubgraphMap&) override {
    return Status(StatusCode::kUnavailable, name_ + " is unavailable: " + why_.reason);
  }

 private:
  std::string name_, short_name_;
  Availability why_;
};

// The options a provider built into the core accepts: the CPU takes none.
// A plugin's are its own to check (its create() lists what it accepts).
struct OptionSpec {
  const char* key;
  const char* accepted;  // human-readable range
  bool (*valid)(const std::string&);
};

Status validate_options(const std::string& provider, std::span<const OptionSpec> specs, const ProviderOptions& options) {
  for (const auto& [key, value] : options) {
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs)
      if (key == s.key) spec = &s;
    if (spec == nullptr) {
      std::string accepted;
      for (const OptionSpec& s : specs) accepted += std::string(accepted.empty() ? "" : ", ") + s.key + " (" + s.accepted + ")";
      return invalid_argument(provider + ": unknown option '" + key + "'; accepted: " +
                              (accepted.empty() ? std::string("none") : accepted));
    }
    if (!spec->valid(value))
      return invalid_argument(provider + ": option " + key + "='" + value + "' is invalid; expected " + spec->accepted);
  }
  return ok_status();
}

}  // namespace

std::unique_ptr<ExecutionProvider> make_unavailable_provider(const std::string& name, const std::string& short_name,
                                                             Availability why) {
  return std::make_unique<UnavailableProvider>(name, short_name, std::move(why));
}

std::vector<ProviderInfo> known_providers() {
  std::vector<ProviderInfo> all(std::begin(kBuiltin), std::end(kBuiltin));
  for (ProviderInfo& p : all)
    if (p.name == "CUDAExecutionProvider") p.built = !find_provider_library(kCudaProviderLibrary).empty();
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const Registered& r : extra_providers()) {
    auto it = std::find_if(all.begin(), all.end(), [&](const ProviderInfo& p) { return p.name == r.info.name; });
    if (it != all.end()) {
      *it = r.info;
    } else {
      all.insert(all.end() - 1, r.info);  // before CPU, the last resort
    }
  }
  return all;
}

Result<std::string> canonical_provider_name(const std::string& user_name) {
  const std::string wanted = lower(user_name);
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const ProviderInfo& p : known_providers()) {
    if (wanted == lower(p.name) || wanted == p.short_name) return p.name;
    for (const std::string& candidate : {lower(p.name), p.short_name}) {
      const size_t d = edit_distance(wanted, candidate);
      if (d < best_distance) {
        best_distance = d;
        best = p.name + " (\"" + p.short_name + "\")";
      }
    }
  }
  std::string known;
  for (const ProviderInfo& p : known_providers()) known += (known.empty() ? "" : ", ") + p.short_name;
  return invalid_argument("unknown execution provider '" + user_name + "'; did you mean " + best +
                          "? Known providers: " + known);
}

void register_provider(const ProviderInfo& info, ProviderFactory factory) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (Registered& r : extra_providers()) {
    if (r.info.name == info.name) {
      r = {info, std::move(factory)};
      return;
    }
  }
  extra_providers().push_back({info, std::move(factory)});
}

Result<std::unique_ptr<ExecutionProvider>> create_provider(const std::string& long_name, const ProviderOptions& options) {
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    for (const Registered& r : extra_providers())
      if (r.info.name == long_name) return r.factory(options);
  }
  if (long_name == "CPUExecutionProvider") {
    SY_RETURN_IF_ERROR(validate_options(long_name, {}, options));
    return std::unique_ptr<ExecutionProvider>(std::make_unique<cpu::CpuProvider>());
  }
  if (long_name == "CUDAExecutionProvider") {
    // The library checks its options; where it is absent, CUDA is
    // unavailable whatever they say (the warning says why).
    const std::string library = find_provider_library(kCudaProviderLibrary);
    if (!library.empty()) return load_provider_plugin({"CUDAExecutionProvider", "cuda", true}, library, options);
  }
  for (const ProviderInfo& p : kBuiltin) {
    if (p.name != long_name) continue;
    // What doctor would say, so the warning a user sees carries the same
    // facts: what else is missing here besides the build.
    const ProviderDiagnosis d = diagnose_provider(p.name);
    Availability why;
    why.available = false;
    why.reason = p.name + " is " + d.reason;
    for (const DoctorCheck& c : d.checks)
      if (!c.ok && c.what.rfind("provider library", 0) != 0) why.reason += "; also " + c.what + ": " + c.detail;
    why.fix = d.fix;
    return make_unavailable_provider(p.name, p.short_name, why);
  }
  return invalid_argument("unknown execution provider '" + long_name + "'");
}

Status apply_provider_option(const std::string& text, std::span<ProviderRequest> requests) {
  const size_t colon = text.find(':');
  const size_t eq = text.find('=', colon == std::string::npos ? 0 : colon);
  if (colon == std::string::npos || colon == 0 || eq == std::string::npos || eq == colon + 1)
    return invalid_argument("--provider-option takes PROVIDER:KEY=VALUE (e.g. cuda:use_tf32=0), got '" + text + "'");
  const std::string provider = text.substr(0, colon);
  SY_ASSIGN_OR_RETURN(const std::string wanted, canonical_provider_name(provider));
  for (ProviderRequest& r : requests) {
    const Result<std::string> name = canonical_provider_name(r.name);
    if (!name.ok() || *name != wanted) continue;
    r.options[text.substr(colon + 1, eq - colon - 1)] = text.substr(eq + 1);
    return ok_status();
  }
  return invalid_argument("--provider-option " + text + ": " + provider + " is not in --providers");
}

}  // namespace sy
