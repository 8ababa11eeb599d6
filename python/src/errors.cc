// The exception classes. Their names are those of
// onnxruntime.capi.onnxruntime_pybind11_state, so `except InvalidArgument`
// in an ONNX Runtime script catches the same failures here. All derive from
// switchyard.Error, itself a RuntimeError.
#include <Python.h>

#include "binding.h"

namespace sy::python {
namespace {

struct ErrorClass {
  const char* name;
  const char* ort_code_name;  // ONNX Runtime's spelling in its messages
  int ort_code;
  const char* doc;
  PyObject* type = nullptr;
};

// Index = position; the code numbers are ONNX Runtime's OrtErrorCode values.
ErrorClass g_errors[] = {
    {"Fail", "FAIL", 1, "A generic failure (also: run() stopped by RunOptions.terminate)."},
    {"InvalidArgument", "INVALID_ARGUMENT", 2, "Bad input from the caller: feeds, output names, options."},
    {"NoSuchFile", "NO_SUCHFILE", 3, "A file that does not exist or cannot be opened."},
    {"NoModel", "NO_MODEL", 4, "No model was loaded."},
    {"EngineError", "ENGINE_ERROR", 5, "An internal engine failure."},
    {"RuntimeException", "RUNTIME_EXCEPTION", 6, "A kernel failed while running."},
    {"InvalidProtobuf", "INVALID_PROTOBUF", 7, "Bytes that are not a valid ONNX model."},
    {"ModelLoaded", "MODEL_LOADED", 8, "A model was already loaded."},
    {"NotImplemented", "NOT_IMPLEMENTED", 9, "Valid ONNX that this build cannot run."},
    {"InvalidGraph", "INVALID_GRAPH", 10, "A model that parses but is not a valid graph."},
    {"EPFail", "EP_FAIL", 11, "An execution provider failed or is not available (strict fallback policy)."},
};

enum ErrorIndex { kFailIdx, kInvalidArgumentIdx, kNoSuchFileIdx, kNoModelIdx, kEngineErrorIdx,
                  kRuntimeExceptionIdx, kInvalidProtobufIdx, kModelLoadedIdx, kNotImplementedIdx,
                  kInvalidGraphIdx, kEpFailIdx };

PyObject* g_base_error = nullptr;
PyObject* g_missing_input = nullptr;

ErrorIndex index_for(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument: return kInvalidArgumentIdx;
    case StatusCode::kNoSuchFile: return kNoSuchFileIdx;
    case StatusCode::kInvalidProtobuf: return kInvalidProtobufIdx;
    case StatusCode::kInvalidGraph: return kInvalidGraphIdx;
    case StatusCode::kNotImplemented: return kNotImplementedIdx;
    case StatusCode::kRuntimeError: return kRuntimeExceptionIdx;
    case StatusCode::kUnavailable: return kEpFailIdx;
    // ONNX Runtime has no out-of-memory code; its allocation failures are
    // reported as exceptions thrown while running.
    case StatusCode::kOutOfMemory: return kRuntimeExceptionIdx;
    case StatusCode::kResourceExhausted: return kRuntimeExceptionIdx;
    case StatusCode::kInternal: return kEngineErrorIdx;
    case StatusCode::kOk:
    case StatusCode::kFail: break;
  }
  return kFailIdx;
}

// ONNX Runtime's message layout, "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : ...",
// with our name in front: scripts that look for the code name still match.
std::string format_message(const ErrorClass& e, const std::string& message) {
  return "[Switchyard] : " + std::to_string(e.ort_code) + " : " + e.ort_code_name + " : " + message;
}

[[noreturn]] void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

}  // namespace

void register_exceptions(py::module_& m) {
  g_base_error = PyErr_NewExceptionWithDoc("switchyard.Error",
                                           "Base class of every error Switchyard raises (a RuntimeError).",
                                           PyExc_RuntimeError, nullptr);
  if (g_base_error == nullptr) throw py::error_already_set();
  m.add_object("Error", py::handle(g_base_error));
  for (ErrorClass& e : g_errors) {
    const std::string qualified = std::string("switchyard.") + e.name;
    e.type = PyErr_NewExceptionWithDoc(qualified.c_str(), e.doc, g_base_error, nullptr);
    if (e.type == nullptr) throw py::error_already_set();
    m.add_object(e.name, py::handle(e.type));
  }
  py::tuple bases = py::make_tuple(py::handle(g_errors[kInvalidArgumentIdx].type), py::handle(PyExc_ValueError));
  g_missing_input = PyErr_NewExceptionWithDoc(
      "switchyard.MissingInput", "A required input was not fed (InvalidArgument, and ValueError as in ONNX Runtime).",
      bases.ptr(), nullptr);
  if (g_missing_input == nullptr) throw py::error_already_set();
  m.add_object("MissingInput", py::handle(g_missing_input));
}

void raise_status(const Status& status) {
  const ErrorClass& e = g_errors[index_for(status.code())];
  raise(e.type, format_message(e, status.message()));
}

void raise_invalid_argument(const std::string& message) {
  const ErrorClass& e = g_errors[kInvalidArgumentIdx];
  raise(e.type, format_message(e, message));
}

void raise_missing_input(const std::string& message) {
  raise(g_missing_input, format_message(g_errors[kInvalidArgumentIdx], message));
}

}  // namespace sy::python
