// The _switchyard extension: the session, the option objects and the module
// functions. The ONNX Runtime-shaped classes users see (InferenceSession,
// NodeArg, ModelMetadata) are thin Python in switchyard/session.py on top of
// _Session here; the options are C++ so that RunOptions.terminate can be a
// real atomic flag that run() watches.
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>
#include <utility>

#include "binding.h"
#include "switchyard/doctor.h"

namespace sy::python {

// ---- options ------------------------------------------------------------------

SessionOptions PySessionOptions::to_core() const {
  SessionOptions o = options;
  if (execution_mode == ExecutionMode::kSequential) {
    o.inter_op_threads = 1;
  } else {
    // ORT: 0 under ORT_PARALLEL means one thread per core.
    o.inter_op_threads = inter_op_num_threads > 0 ? inter_op_num_threads
                                                  : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  return o;
}

RunOptions PyRunOptions::to_core() const {
  RunOptions o;
  o.run_tag = run_tag;
  o.log_level = static_cast<LogLevel>(log_severity_level);
  o.terminate = &terminate;
  return o;
}

FallbackAction parse_fallback_action(const std::string& text) {
  if (text == "allow") return FallbackAction::kAllow;
  if (text == "warn") return FallbackAction::kWarn;
  if (text == "error" || text == "strict") return FallbackAction::kError;
  throw py::value_error("fallback policy must be 'allow', 'warn' or 'error', got '" + text + "'");
}

const char* fallback_action_name(FallbackAction action) {
  switch (action) {
    case FallbackAction::kAllow: return "allow";
    case FallbackAction::kWarn: return "warn";
    case FallbackAction::kError: return "error";
  }
  return "warn";
}

namespace {

// set_default_logger_severity(): the log level new SessionOptions start with.
int g_default_log_severity = static_cast<int>(LogLevel::kWarning);
int g_default_log_verbosity = 0;

int checked_log_level(int level) {
  if (level < 0 || level > 4)
    throw py::value_error("log severity level must be 0 (verbose) to 4 (fatal), got " + std::to_string(level));
  return level;
}

int checked_threads(int n, const char* what) {
  if (n < 0) throw py::value_error(std::string(what) + " must be >= 0, got " + std::to_string(n));
  return n;
}

// ---- the session ----------------------------------------------------------------

using ProviderList = std::vector<std::pair<std::string, std::map<std::string, std::string>>>;

// (name, "tensor(float)", [1, "batch", None]) for NodeArg.
py::tuple value_info_tuple(const ValueInfo& info) {
  py::list shape;
  if (info.has_shape) {
    for (const DimInfo& d : info.shape) {
      if (d.value >= 0)
        shape.append(py::int_(d.value));
      else if (!d.symbol.empty())
        shape.append(py::str(d.symbol));
      else
        shape.append(py::none());
    }
  }
  return py::make_tuple(info.name, info.type, shape);
}

py::list value_info_list(const std::vector<ValueInfo>& infos) {
  py::list out;
  for (const ValueInfo& i : infos) out.append(value_info_tuple(i));
  return out;
}

class PySession {
 public:
  PySession(const py::object& model, const PySessionOptions& py_options, const ProviderList& providers,
            const std::optional<std::string>& fallback) {
    SessionOptions options = py_options.to_core();
    for (const auto& [name, provider_options] : providers) options.providers.push_back({name, provider_options});
    if (fallback) {
      const FallbackAction action = parse_fallback_action(*fallback);
      options.fallback = {action, action};
    }
    Result<std::unique_ptr<Session>> created = Status(StatusCode::kFail, "not created");
    if (PyBytes_Check(model.ptr())) {
      char* data = nullptr;
      Py_ssize_t size = 0;
      if (PyBytes_AsStringAndSize(model.ptr(), &data, &size) != 0) throw py::error_already_set();
      // `model` keeps the bytes alive while the GIL is released.
      py::gil_scoped_release release;
      created = Session::create_from_bytes(data, static_cast<size_t>(size), options);
    } else {
      const std::string path = py::str(model);
      py::gil_scoped_release release;
      created = Session::create(path, options);
    }
    if (!created.ok()) raise_status(created.status());
    session_ = std::move(created).value();
  }

  Session& session() const { return *session_; }
  std::shared_ptr<Session> shared() const { return session_; }

  // Checks and converts the feeds; a missing required input is reported
  // before any conversion, as ONNX Runtime does.
  std::vector<std::pair<std::string, Tensor>> convert_feeds(const py::dict& feeds) const {
    std::vector<std::pair<std::string, Tensor>> inputs;
    inputs.reserve(feeds.size());
    for (const auto& [key, value] : feeds) {
      if (!PyUnicode_Check(key.ptr()))
        raise_invalid_argument("input feed keys must be input names (str), got a " +
                               std::string(py::str(py::type::handle_of(key).attr("__name__"))));
      inputs.emplace_back(key.cast<std::string>(), Tensor());
    }
    std::string missing;
    for (const ValueInfo& in : session_->inputs()) {
      bool fed = false;
      for (const auto& [name, tensor] : inputs) fed = fed || name == in.name;
      if (!fed) missing += (missing.empty() ? "'" : ", '") + in.name + "' (" + in.type + " " + shape_string(in) + ")";
    }
    if (!missing.empty()) {
      std::string given;
      for (const auto& [name, tensor] : inputs) given += (given.empty() ? "'" : ", '") + name + "'";
      const bool several = missing.find(", '") != std::string::npos;
      raise_missing_input(std::string(several ? "required inputs " : "required input ") + missing +
                          (several ? " are" : " is") + " missing from the input feed (given: " +
                          (given.empty() ? "none" : given) + ")");
    }
    size_t i = 0;
    for (const auto& [key, value] : feeds) {
      inputs[i].second = value_from_python(value, declared_input(*session_, inputs[i].first), inputs[i].first);
      ++i;
    }
    return inputs;
  }

  py::list run(const py::object& output_names, const py::dict& feeds, const PyRunOptions* run_options) const {
    std::vector<std::string> names;
    if (!output_names.is_none()) {
      if (py::isinstance<py::str>(output_names))
        raise_invalid_argument("output_names must be a list of names or None, got the str '" +
                               output_names.cast<std::string>() + "'");
      for (const py::handle& h : output_names) names.push_back(py::str(h));
    }
    std::vector<std::pair<std::string, Tensor>> inputs = convert_feeds(feeds);
    const RunOptions core_run_options = run_options != nullptr ? run_options->to_core() : RunOptions{};
    Result<std::vector<Tensor>> result = [&] {
      py::gil_scoped_release release;
      return session_->run(inputs, names, core_run_options);
    }();
    if (!result.ok()) raise_status(result.status());
    py::list out;
    const std::vector<ValueInfo>& outputs = session_->outputs();
    for (size_t k = 0; k < result->size(); ++k) {
      const std::string& name = names.empty() ? (k < outputs.size() ? outputs[k].name : std::string()) : names[k];
      out.append(tensor_to_numpy((*result)[k], name));
    }
    return out;
  }

  py::dict metadata() const {
    const ModelMetadata& m = session_->metadata();
    py::dict d;
    d["producer_name"] = m.producer_name;
    d["producer_version"] = m.producer_version;
    d["graph_name"] = m.graph_name;
    d["domain"] = m.domain;
    d["description"] = m.description;
    d["graph_description"] = m.graph_description;
    d["version"] = m.version;
    d["ir_version"] = m.ir_version;
    d["opset_imports"] = m.opsets;
    d["custom_metadata_map"] = m.custom_metadata;
    return d;
  }

  py::list assignment() const {
    py::list out;
    for (const NodeAssignment& a : session_->assignment()) {
      py::list declined;
      for (const ProviderDecline& d : a.declined) declined.append(py::make_tuple(d.provider, d.reason));
      py::dict row;
      row["node"] = a.node_name;
      row["op"] = a.op_type;
      row["provider"] = a.provider;
      row["declined"] = declined;
      out.append(row);
    }
    return out;
  }

  py::dict placement() const {
    const PlacementSummary& p = session_->placement();
    py::dict d;
    d["partitions"] = p.partitions;
    d["partition_providers"] = p.partition_providers;
    d["partition_sizes"] = p.partition_sizes;
    d["copies_per_run"] = p.copies_per_run;
    d["constant_copies"] = p.constant_copies;
    d["nodes_per_provider"] = p.nodes_per_provider;
    return d;
  }

  std::string end_profiling() {
    Result<std::string> path = session_->end_profiling();
    if (!path.ok()) raise_status(path.status());
    return *path;
  }

  // Mean microseconds per Session::run over `iterations`, timed in C++
  // with the feeds converted once: the baseline for the Python overhead.
  double bench_run(const py::dict& feeds, int iterations) const {
    std::vector<std::pair<std::string, Tensor>> inputs = convert_feeds(feeds);
    py::gil_scoped_release release;
    Result<std::vector<Tensor>> warm = session_->run(inputs);
    if (!warm.ok()) {
      py::gil_scoped_acquire acquire;
      raise_status(warm.status());
    }
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) {
      Result<std::vector<Tensor>> r = session_->run(inputs);
      if (!r.ok()) {
        py::gil_scoped_acquire acquire;
        raise_status(r.status());
      }
    }
    const auto elapsed = std::chrono::steady_clock::now() - start;
    return std::chrono::duration<double, std::micro>(elapsed).count() / std::max(1, iterations);
  }

 private:
  std::shared_ptr<Session> session_;
};

void bind_options(py::module_& m) {
  py::enum_<OptimizationLevel>(m, "GraphOptimizationLevel")
      .value("ORT_DISABLE_ALL", OptimizationLevel::kDisableAll)
      .value("ORT_ENABLE_BASIC", OptimizationLevel::kBasic)
      .value("ORT_ENABLE_EXTENDED", OptimizationLevel::kExtended)
      .value("ORT_ENABLE_ALL", OptimizationLevel::kAll);
  py::enum_<ExecutionMode>(m, "ExecutionMode")
      .value("ORT_SEQUENTIAL", ExecutionMode::kSequential)
      .value("ORT_PARALLEL", ExecutionMode::kParallel);

  using SO = PySessionOptions;
  py::class_<SO>(m, "SessionOptions", "Options for a session, as onnxruntime.SessionOptions.")
      .def(py::init([] {
        SO s;
        s.options.log_level = static_cast<LogLevel>(g_default_log_severity);
        return s;
      }))
      .def_property(
          "graph_optimization_level", [](const SO& s) { return s.options.optimization_level; },
          [](SO& s, OptimizationLevel v) { s.options.optimization_level = v; })
      .def_property(
          "intra_op_num_threads", [](const SO& s) { return s.options.intra_op_threads; },
          [](SO& s, int v) { s.options.intra_op_threads = checked_threads(v, "intra_op_num_threads"); })
      .def_property(
          "inter_op_num_threads", [](const SO& s) { return s.inter_op_num_threads; },
          [](SO& s, int v) { s.inter_op_num_threads = checked_threads(v, "inter_op_num_threads"); })
      .def_readwrite("execution_mode", &SO::execution_mode)
      .def_property(
          "optimized_model_filepath", [](const SO& s) { return s.options.optimized_model_path; },
          [](SO& s, const py::object& v) { s.options.optimized_model_path = py::str(v); })
      .def_property(
          "enable_profiling", [](const SO& s) { return s.options.enable_profiling; },
          [](SO& s, bool v) { s.options.enable_profiling = v; })
      .def_property(
          "profile_file_prefix", [](const SO& s) { return s.options.profile_file_prefix; },
          [](SO& s, const py::object& v) { s.options.profile_file_prefix = py::str(v); })
      .def_property(
          "log_severity_level", [](const SO& s) { return static_cast<int>(s.options.log_level); },
          [](SO& s, int v) { s.options.log_level = static_cast<LogLevel>(checked_log_level(v)); })
      .def_readwrite("log_verbosity_level", &SO::log_verbosity_level)
      .def_property(
          "logid", [](const SO& s) { return s.options.log_id; },
          [](SO& s, const std::string& v) { s.options.log_id = v; })
      .def_readwrite("enable_cpu_mem_arena", &SO::enable_cpu_mem_arena)
      .def_readwrite("enable_mem_pattern", &SO::enable_mem_pattern)
      .def_readwrite("enable_mem_reuse", &SO::enable_mem_reuse)
      .def_readwrite("use_deterministic_compute", &SO::use_deterministic_compute)
      .def_property(
          "require_full_placement", [](const SO& s) { return s.options.require_full_placement; },
          [](SO& s, bool v) { s.options.require_full_placement = v; },
          "Every node on the first provider listed; breaking it warns, or raises under fallback 'error'.")
      .def_property(
          "max_partitions", [](const SO& s) { return s.options.max_partitions; },
          [](SO& s, int v) { s.options.max_partitions = checked_threads(v, "max_partitions"); },
          "At most this many provider partitions (0: no limit).")
      .def_property(
          "min_partition_size", [](const SO& s) { return s.options.min_partition_size; },
          [](SO& s, int v) { s.options.min_partition_size = checked_threads(v, "min_partition_size"); },
          "Runs of fewer nodes than this stay on the next provider (0: no minimum).")
      .def_property(
          "max_copies", [](const SO& s) { return s.options.max_copies; },
          [](SO& s, int v) {
            if (v < -1) throw py::value_error("max_copies must be >= -1 (-1: no limit), got " + std::to_string(v));
            s.options.max_copies = v;
          },
          "At most this many device copies per run (-1: no limit).")
      .def_property(
          "fallback_policy",
          [](const SO& s) {
            const FallbackPolicy& f = s.options.fallback;
            if (f.unavailable_provider == f.node_fallthrough) return std::string(fallback_action_name(f.node_fallthrough));
            return std::string("unavailable_provider=") + fallback_action_name(f.unavailable_provider) +
                   ",node_fallthrough=" + fallback_action_name(f.node_fallthrough);
          },
          [](SO& s, const std::string& v) {
            const FallbackAction a = parse_fallback_action(v);
            s.options.fallback = {a, a};
          },
          "'allow', 'warn' (default) or 'error': what happens when a requested provider is unavailable "
          "or nodes fall through to a later provider. SWITCHYARD_STRICT=1 forces 'error'.")
      .def("add_session_config_entry",
           [](SO& s, const std::string& key, const std::string& value) { s.options.config[key] = value; })
      .def("get_session_config_entry",
           [](const SO& s, const std::string& key) {
             auto it = s.options.config.find(key);
             if (it == s.options.config.end())
               raise_status(fail("SessionOptions does not have a configuration entry with key: " + key));
             return it->second;
           })
      .def("_copy", [](const SO& s) { return SO(s); })
      .def("__copy__", [](const SO& s) { return SO(s); })
      .def("__deepcopy__", [](const SO& s, const py::object&) { return SO(s); });

  using RO = PyRunOptions;
  py::class_<RO>(m, "RunOptions", "Options for one run() call, as onnxruntime.RunOptions.")
      .def(py::init<>())
      .def_property(
          "log_severity_level", [](const RO& r) { return r.log_severity_level; },
          [](RO& r, int v) { r.log_severity_level = checked_log_level(v); })
      .def_readwrite("log_verbosity_level", &RO::log_verbosity_level)
      .def_readwrite("logid", &RO::run_tag)
      .def_readwrite("run_tag", &RO::run_tag)
      .def_readwrite("only_execute_path_to_fetches", &RO::only_execute_path_to_fetches)
      .def_property(
          "terminate", [](const RO& r) { return r.terminate.load(); },
          [](RO& r, bool v) { r.terminate.store(v); },
          "Set to True (from any thread) to stop the run() calls using these options before their next node; "
          "they raise Fail.")
      .def("add_run_config_entry", [](RO& r, const std::string& key, const std::string& value) { r.config[key] = value; })
      .def("get_run_config_entry", [](const RO& r, const std::string& key) {
        auto it = r.config.find(key);
        if (it == r.config.end()) raise_status(fail("RunOptions does not have a configuration entry with key: " + key));
        return it->second;
      });
}

void bind_session(py::module_& m) {
  py::class_<PySession>(m, "_Session")
      .def(py::init<const py::object&, const PySessionOptions&, const ProviderList&, const std::optional<std::string>&>(),
           py::arg("model"), py::arg("options"), py::arg("providers"), py::arg("fallback") = py::none())
      .def("inputs", [](const PySession& s) { return value_info_list(s.session().inputs()); })
      .def("outputs", [](const PySession& s) { return value_info_list(s.session().outputs()); })
      .def("overridable_initializers",
           [](const PySession& s) { return value_info_list(s.session().overridable_initializers()); })
      .def("metadata", &PySession::metadata)
      .def("providers", [](const PySession& s) { return s.session().providers(); })
      .def("requested_providers", [](const PySession& s) { return s.session().requested_providers(); })
      .def("assignment", &PySession::assignment)
      .def("assignment_report", [](const PySession& s) { return s.session().assignment_report(); })
      .def("placement", &PySession::placement)
      .def("run", &PySession::run, py::arg("output_names"), py::arg("input_feed"),
           py::arg("run_options") = static_cast<const PyRunOptions*>(nullptr))
      .def("end_profiling", &PySession::end_profiling)
      .def("_bench_run", &PySession::bench_run, py::arg("input_feed"), py::arg("iterations"));
}

}  // namespace
}  // namespace sy::python

PYBIND11_MODULE(_switchyard, m) {
  namespace py = pybind11;
  using namespace sy;
  using namespace sy::python;
  m.doc() = "Switchyard's compiled core; use the `switchyard` package.";
  register_exceptions(m);
  bind_options(m);
  bind_session(m);
  bind_io_binding(m, [](const py::object& session) { return session.cast<const PySession&>().shared(); });

  m.def("get_available_providers", &available_providers,
        "Long names of the execution providers that can run on this machine.");
  m.def("get_all_providers", &all_providers, "Long names of every execution provider Switchyard knows.");
  m.def("get_version_string", [] { return std::string(version_string()); });
  m.def("get_device", [] { return std::string("CPU"); });
  m.def("_doctor", [] {
    std::vector<ProviderDiagnosis> report;
    {
      py::gil_scoped_release release;  // it loads libraries and probes drivers
      report = doctor();
    }
    py::list providers;
    for (const ProviderDiagnosis& d : report) {
      py::list checks;
      for (const DoctorCheck& c : d.checks) checks.append(py::make_tuple(c.what, c.ok, c.detail));
      py::dict row;
      row["name"] = d.name;
      row["short_name"] = d.short_name;
      row["built"] = d.built;
      row["loadable"] = d.loadable;
      row["device_present"] = d.device_present;
      row["usable"] = d.usable;
      row["reason"] = d.reason;
      row["fix"] = d.fix;
      row["checks"] = checks;
      row["devices"] = d.devices;
      row["environment"] = d.environment;
      row["options"] = d.options;
      row["libraries"] = d.libraries;
      providers.append(row);
    }
    return py::make_tuple(providers, format_doctor(report));
  });
  m.def(
      "set_default_logger_severity", [](int level) { g_default_log_severity = checked_log_level(level); },
      py::arg("severity"),
      "Log level (0 verbose .. 4 fatal) of the SessionOptions created from now on, and so of sessions "
      "created without options.");
  m.def(
      "set_default_logger_verbosity", [](int level) { g_default_log_verbosity = level; }, py::arg("verbosity"),
      "Accepted for onnxruntime compatibility; Switchyard has no verbose sub-levels.");
  m.attr("__version__") = version_string();

  // Test hook: whether an array is fed to run() without a copy.
  m.def("_input_is_zero_copy", [](const py::object& value) {
    const Tensor t = tensor_from_python(value, "value");
    if (!py::isinstance<py::array>(value)) return false;
    return t.raw_data() == py::reinterpret_borrow<py::array>(value).data();
  });
}
