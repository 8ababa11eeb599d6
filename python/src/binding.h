// Shared pieces of the _switchyard extension: the exception classes, the
// numpy <-> Tensor conversions, and the option objects the Python side sees.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "switchyard/session.h"
#include "switchyard/status.h"
#include "switchyard/tensor.h"

namespace sy::python {

namespace py = pybind11;

// ---- errors -------------------------------------------------------------------

// Creates switchyard.Error and the ONNX Runtime-named classes under it.
void register_exceptions(py::module_& m);
// Raises the Python exception matching status.code(); never returns.
[[noreturn]] void raise_status(const Status& status);
// Raises InvalidArgument with `message`.
[[noreturn]] void raise_invalid_argument(const std::string& message);
// A required input was not fed: InvalidArgument that is also a ValueError,
// because ONNX Runtime raises ValueError there.
[[noreturn]] void raise_missing_input(const std::string& message);

// ---- tensors ------------------------------------------------------------------

// numpy array (or anything numpy can turn into one) -> Tensor. A C-contiguous
// array of a supported dtype in native byte order is wrapped, not copied:
// the Tensor keeps a reference to the array. Strings are always copied.
// `name` is used in error messages.
Tensor tensor_from_python(const py::handle& value, const std::string& name);
// A feed of the input `info` declares, as onnxruntime takes them: None for
// an empty optional, a list (or tuple) of arrays for a sequence, an array
// (or array-like) for a tensor. `info` is null for a name the model does not
// have (the run reports it); the value is then read as a tensor.
Tensor value_from_python(const py::handle& value, const ValueInfo* info, const std::string& name);
// The declared input or overridable initializer `name`; null when the model
// has neither.
const ValueInfo* declared_input(const Session& session, const std::string& name);
// Tensor -> numpy array that keeps the Tensor's buffer alive (strings are
// copied into an object array of str); a sequence -> a list of arrays, an
// empty optional -> None. `name` is used in error messages.
py::object tensor_to_numpy(const Tensor& tensor, const std::string& name);
// The numpy dtype a DataType maps to, or an error for types numpy lacks.
py::dtype numpy_dtype(DataType dtype, const std::string& what);

// ---- options ------------------------------------------------------------------

enum class ExecutionMode { kSequential = 0, kParallel = 1 };

// ONNX Runtime's SessionOptions; the fields without a Switchyard meaning are
// kept so that scripts setting them keep working.
struct PySessionOptions {
  SessionOptions options;
  ExecutionMode execution_mode = ExecutionMode::kSequential;
  int inter_op_num_threads = 0;
  int log_verbosity_level = 0;
  bool enable_cpu_mem_arena = true;
  bool enable_mem_pattern = true;
  bool enable_mem_reuse = true;
  bool use_deterministic_compute = false;

  // The options a Session is created with (providers are added by the caller).
  SessionOptions to_core() const;
};

// ONNX Runtime's RunOptions. `terminate` lives here so that another thread
// can set it while run() holds a pointer to it.
struct PyRunOptions {
  std::string run_tag;
  int log_severity_level = 2;
  int log_verbosity_level = 0;
  bool only_execute_path_to_fetches = false;
  std::atomic<bool> terminate{false};
  std::map<std::string, std::string> config;

  RunOptions to_core() const;
};

// "allow" / "warn" / "error" <-> FallbackAction.
FallbackAction parse_fallback_action(const std::string& text);
const char* fallback_action_name(FallbackAction action);

// OrtValue and the IOBinding behind InferenceSession.io_binding();
// `session_of` gives the core Session behind a Python _Session.
void bind_io_binding(py::module_& m, const std::function<std::shared_ptr<Session>(const py::object&)>& session_of);

}  // namespace sy::python
