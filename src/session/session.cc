// The public Session API: thin glue over Session::Impl (session_impl.h
// lists the files that hold its parts), each body run inside
// at_api_boundary so that no exception leaves it; and the library-wide
// functions of switchyard/session.h.
#include "switchyard/session.h"

#include <algorithm>

#include "model/loader.h"
#include "partition/assignment_report.h"
#include "providers/provider_factory.h"
#include "session/api_boundary.h"
#include "session/session_impl.h"

namespace sy {
namespace {

// The most threads one setting may ask for. Threads beyond the hardware's
// only add switching, and each costs a stack (8 MiB of address space by
// default) and a process table entry: 100000 of them exhaust the machine.
// Four times the hardware threads leaves room for deliberate
// oversubscription; the floor keeps small machines and containers usable
// for tests that want a fixed count; the cap bounds big ones.
int max_threads_per_option() { return std::clamp(4 * ThreadPool::hardware_threads(), 64, 1024); }

Status check_thread_option(const char* option, int value) {
  if (value < 0)
    return invalid_argument(std::string("SessionOptions.") + option + " is " + std::to_string(value) +
                            "; it must be >= 0 (0: one thread per core)");
  const int limit = max_threads_per_option();
  if (value > limit)
    return invalid_argument(std::string("SessionOptions.") + option + " is " + std::to_string(value) +
                            ", more than the limit of " + std::to_string(limit) + " (4 x the " +
                            std::to_string(ThreadPool::hardware_threads()) +
                            " hardware threads, at least 64, at most 1024); more threads than that only slow a run "
                            "and can exhaust the system's threads");
  return ok_status();
}

// Options checked before anything is loaded or started; the external data
// mode they give is what the loader needs.
Result<ExternalDataMode> check_session_options(const SessionOptions& options) {
  SY_RETURN_IF_ERROR(check_thread_option("intra_op_threads", options.intra_op_threads));
  SY_RETURN_IF_ERROR(check_thread_option("inter_op_threads", options.inter_op_threads));
  return external_data_mode_from_config(options.config);
}

}  // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::create(const std::string& model_path, const SessionOptions& options) {
  return at_api_boundary([&] { return "creating a session for " + model_path; }, [&]() -> Result<std::unique_ptr<Session>> {
    SY_ASSIGN_OR_RETURN(const ExternalDataMode mode, check_session_options(options));
    SY_ASSIGN_OR_RETURN(Model model, load_model(model_path, mode));
    SY_ASSIGN_OR_RETURN(auto impl, Impl::create(std::move(model), options));
    return std::unique_ptr<Session>(new Session(std::move(impl)));
  });
}

Result<std::unique_ptr<Session>> Session::create_from_bytes(const void* data, size_t size,
                                                            const SessionOptions& options) {
  return at_api_boundary([] { return "creating a session from model bytes"; }, [&]() -> Result<std::unique_ptr<Session>> {
    // Bytes carry no external data, but a bad mode is still an error.
    SY_RETURN_IF_ERROR(check_session_options(options).status());
    SY_ASSIGN_OR_RETURN(Model model, load_model_from_bytes(data, size));
    SY_ASSIGN_OR_RETURN(auto impl, Impl::create(std::move(model), options));
    return std::unique_ptr<Session>(new Session(std::move(impl)));
  });
}

const std::vector<ValueInfo>& Session::inputs() const { return impl_->input_infos; }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->output_infos; }
const std::vector<ValueInfo>& Session::overridable_initializers() const { return impl_->overridable_infos; }
const ModelMetadata& Session::metadata() const { return impl_->metadata; }
const std::vector<NodeAssignment>& Session::assignment() const { return impl_->assignment; }
const PlacementSummary& Session::placement() const { return impl_->placement; }
std::vector<std::string> Session::requested_providers() const { return impl_->requested; }

std::vector<std::string> Session::providers() const {
  std::vector<std::string> used;
  for (size_t p = 0; p < impl_->chain.size(); ++p) {
    bool runs_something = false;
    for (int np : impl_->partition.node_provider)
      if (np == static_cast<int>(p)) runs_something = true;
    if (runs_something) used.push_back(impl_->chain[p]->name());
  }
  if (used.empty()) used.push_back("CPUExecutionProvider");  // a model with no nodes
  return used;
}

std::string Session::assignment_report() const { return format_assignment_report(impl_->assignment); }

Result<std::vector<Tensor>> Session::run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                         const std::vector<std::string>& output_names,
                                         const RunOptions& run_options) const {
  return at_api_boundary([] { return "running the session"; }, [&] { return impl_->run(feeds, output_names, run_options); });
}

Result<Tensor> Session::allocate_tensor(DataType dtype, const Shape& shape, Device device) const {
  return at_api_boundary([] { return "allocating a tensor"; }, [&] { return impl_->allocate_on(device, dtype, shape); });
}

Status Session::copy_tensor(const Tensor& src, Tensor& dst) const {
  return at_api_boundary([] { return "copying a tensor"; }, [&] { return impl_->copy_between(src, dst); });
}

Result<std::string> Session::end_profiling() {
  return at_api_boundary([] { return "writing the profile"; }, [&] { return write_profile(); });
}

Result<std::string> Session::write_profile() {
  if (!impl_->options.enable_profiling) return std::string();
  return impl_->profiler.write_trace(impl_->options.profile_file_prefix, impl_->chain);
}

std::vector<Session::ProfileRecord> Session::profile_records() const { return impl_->profiler.records(impl_->chain); }

size_t Session::profile_record_count() const { return impl_->profiler.count(); }

std::vector<std::string> available_providers() {
  std::vector<std::string> out;
  for (const ProviderInfo& p : known_providers()) {
    if (!p.built) continue;
    auto provider = create_provider(p.name, {});
    if (provider.ok() && (*provider)->availability().available) out.push_back(p.name);
  }
  return out;
}

std::vector<std::string> all_providers() {
  std::vector<std::string> out;
  for (const ProviderInfo& p : known_providers()) out.push_back(p.name);
  return out;
}

const char* version_string() { return SWITCHYARD_VERSION; }

std::string shape_string(const ValueInfo& info) {
  if (!info.has_shape) return "[?]";
  std::string s = "[";
  for (size_t i = 0; i < info.shape.size(); ++i) {
    if (i) s += ",";
    const DimInfo& d = info.shape[i];
    s += d.value >= 0 ? std::to_string(d.value) : (d.symbol.empty() ? "?" : d.symbol);
  }
  return s + "]";
}

void set_log_function(LogFunction function) {
  if (!function) {
    set_log_callback(nullptr);
    return;
  }
  set_log_callback([function = std::move(function)](LogSeverity severity, std::string_view log_id,
                                                    std::string_view message) {
    function(static_cast<LogLevel>(severity), std::string(log_id), std::string(message));
  });
}

}  // namespace sy
