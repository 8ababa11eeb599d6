// OrtValue and IOBinding as onnxruntime has them: tensors that may live in
// a device's memory, and a session's inputs and outputs bound ahead of a
// run so they can stay on the GPU between runs.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <cctype>
#include <functional>
#include <limits>
#include <map>

#include "binding.h"

namespace sy::python {
namespace {

// "cpu" -> host, "cuda" -> CUDA; onnxruntime's device_type strings.
Device parse_device(const std::string& device_type, int device_id) {
  std::string t;
  for (char c : device_type) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "cpu") return kCpuDevice;
  if (t == "cuda" || t == "gpu") return Device{DeviceType::kCuda, device_id};
  raise_invalid_argument("unknown device_type '" + device_type + "'; accepted: cpu, cuda");
}

std::string device_name(Device d) { return d.is_cpu() ? "cpu" : (d.type == DeviceType::kCuda ? "cuda" : d.to_string()); }

DataType element_type_of(const py::object& element_type) {
  const py::dtype dt = py::dtype::from_args(element_type);
  const std::pair<py::dtype, DataType> known[] = {
      {py::dtype::of<float>(), DataType::kFloat},    {py::dtype::of<double>(), DataType::kDouble},
      {py::dtype("float16"), DataType::kFloat16},    {py::dtype::of<int8_t>(), DataType::kInt8},
      {py::dtype::of<uint8_t>(), DataType::kUint8},  {py::dtype::of<int16_t>(), DataType::kInt16},
      {py::dtype::of<uint16_t>(), DataType::kUint16}, {py::dtype::of<int32_t>(), DataType::kInt32},
      {py::dtype::of<uint32_t>(), DataType::kUint32}, {py::dtype::of<int64_t>(), DataType::kInt64},
      {py::dtype::of<uint64_t>(), DataType::kUint64}, {py::dtype::of<bool>(), DataType::kBool}};
  for (const auto& [d, t] : known)
    if (dt.is(d) || dt.equal(d)) return t;
  raise_invalid_argument("element_type " + std::string(py::str(element_type)) + " has no tensor type");
}

struct PyOrtValue {
  Tensor tensor;

  static PyOrtValue from_numpy(const py::object& array, const std::string& device_type, int device_id) {
    const Device d = parse_device(device_type, device_id);
    Tensor host = tensor_from_python(array, "OrtValue");
    if (d.is_cpu()) {
      Result<Tensor> copy = host.clone();  // the value must not alias the caller's array
      if (!copy.ok()) raise_status(copy.status());
      return {std::move(copy).value()};
    }
    Result<Tensor> dev = allocate_device_tensor(host.dtype(), host.shape(), d);
    if (!dev.ok()) raise_status(dev.status());
    Status st = copy_tensor(host, *dev);
    if (!st.ok()) raise_status(st);
    return {std::move(dev).value()};
  }

  static PyOrtValue from_shape_and_type(const std::vector<int64_t>& shape, const py::object& element_type,
                                        const std::string& device_type, int device_id) {
    Result<Tensor> t = allocate_device_tensor(element_type_of(element_type), Shape(shape), parse_device(device_type, device_id));
    if (!t.ok()) raise_status(t.status());
    return {std::move(t).value()};
  }

  py::object numpy() const {
    if (tensor.device().is_cpu()) return tensor_to_numpy(tensor, "OrtValue");
    Result<Tensor> host = Tensor::allocate_uninitialized(tensor.dtype(), tensor.shape());
    if (!host.ok()) raise_status(host.status());
    Status st = copy_tensor(tensor, *host);
    if (!st.ok()) raise_status(st);
    return tensor_to_numpy(*host, "OrtValue");
  }
};

// OrtValue.data_type(): "tensor(float)", "seq(tensor(float))", and for an
// empty optional "optional(tensor(float))", as onnxruntime spells them.
std::string value_type_string(const Tensor& t) {
  const std::string tensor = tensor_type_string(t.dtype());
  switch (t.kind()) {
    case ValueKind::kSequence: return "seq(" + tensor + ")";
    case ValueKind::kNone: return "optional(" + tensor + ")";
    case ValueKind::kTensor: break;
  }
  return tensor;
}

void check(const Status& st) {
  if (!st.ok()) raise_status(st);
}

// The memory a buffer_ptr argument names.
struct CallerBuffer {
  DataType dtype = DataType::kUndefined;
  Shape shape;
  void* data = nullptr;
  size_t byte_size = 0;
};

// buffer_ptr is either an address, as onnxruntime takes it (a torch
// tensor's data_ptr()), whose size only the optional buffer_size can
// tell, or a numpy array, whose type, layout, size and (for an output)
// writability are checked here; element_type and shape default to its own.
CallerBuffer caller_buffer(const std::string& role, const py::object& buffer, const py::object& element_type,
                           const std::optional<std::vector<int64_t>>& shape, std::optional<size_t> buffer_size,
                           bool written) {
  CallerBuffer b;
  if (py::isinstance<py::array>(buffer)) {
    const auto arr = py::reinterpret_borrow<py::array>(buffer);
    b.dtype = element_type.is_none() ? element_type_of(arr.dtype()) : element_type_of(element_type);
    if (!arr.dtype().equal(numpy_dtype(b.dtype, role)))
      raise_invalid_argument(role + ": the array bound is " + std::string(py::str(arr.dtype())) + ", not " +
                             std::string(data_type_name(b.dtype)));
    if ((arr.flags() & py::array::c_style) == 0)
      raise_invalid_argument(role + ": the array bound is not C-contiguous; pass numpy.ascontiguousarray(a)");
    if (written && !arr.writeable()) raise_invalid_argument(role + ": the array bound is read-only");
    if (shape) {
      b.shape = Shape(*shape);
    } else {
      b.shape.resize(static_cast<size_t>(arr.ndim()));
      for (py::ssize_t i = 0; i < arr.ndim(); ++i) b.shape[static_cast<size_t>(i)] = arr.shape(i);
    }
    // Writability was checked above; the binding takes a non-const pointer.
    b.data = const_cast<void*>(arr.data());
    b.byte_size = static_cast<size_t>(arr.nbytes());
    return b;
  }
  if (!py::isinstance<py::int_>(buffer))
    raise_invalid_argument(role + ": buffer_ptr must be an address (int) or a numpy array, got " +
                           std::string(py::str(py::type::handle_of(buffer).attr("__name__"))) +
                           " (a sequence or optional input is bound with bind_cpu_input)");
  if (element_type.is_none() || !shape) raise_invalid_argument(role + ": a buffer_ptr address needs element_type and shape");
  b.dtype = element_type_of(element_type);
  b.shape = Shape(*shape);
  b.data = reinterpret_cast<void*>(buffer.cast<uintptr_t>());
  // Without buffer_size the caller vouches for the size; the null pointer
  // and the shape are still checked.
  b.byte_size = buffer_size ? *buffer_size : std::numeric_limits<size_t>::max();
  return b;
}

struct PyIOBinding {
  std::shared_ptr<Session> session;  // kept alive by the Python session object
  IoBinding binding;
  py::object owner;  // the Python session
  // numpy arrays bound by reference, kept alive while bound.
  std::map<std::string, py::object> input_arrays, output_arrays;

  void bind_cpu_input(const std::string& name, const py::object& array) {
    // Copied, so that later changes to the array do not reach a later run.
    // A list (sequence input) or None (optional input) is read as run() reads it.
    Result<Tensor> t = value_from_python(array, declared_input(*session, name), name).clone();
    if (!t.ok()) raise_status(t.status());
    check(binding.bind_input(name, *t));
    input_arrays.erase(name);
  }
  void bind_input(const std::string& name, const std::string& device_type, int device_id, const py::object& element_type,
                  const std::optional<std::vector<int64_t>>& shape, const py::object& buffer_ptr,
                  std::optional<size_t> buffer_size) {
    // A buffer the caller owns (e.g. a torch tensor's data_ptr()).
    const CallerBuffer b = caller_buffer("input '" + name + "'", buffer_ptr, element_type, shape, buffer_size, false);
    check(binding.bind_input(name, b.dtype, b.shape, b.data, b.byte_size, parse_device(device_type, device_id)));
    input_arrays[name] = buffer_ptr;
  }
  void bind_ortvalue_input(const std::string& name, const PyOrtValue& value) {
    check(binding.bind_input(name, value.tensor));
    input_arrays.erase(name);
  }
  void bind_output(const std::string& name, const std::string& device_type, int device_id, const py::object& element_type,
                   const std::optional<std::vector<int64_t>>& shape, const py::object& buffer_ptr,
                   std::optional<size_t> buffer_size) {
    const Device d = parse_device(device_type, device_id);
    if (!buffer_ptr.is_none() && !(py::isinstance<py::int_>(buffer_ptr) && buffer_ptr.cast<uintptr_t>() == 0)) {
      const CallerBuffer b = caller_buffer("output '" + name + "'", buffer_ptr, element_type, shape, buffer_size, true);
      check(binding.bind_output(name, b.dtype, b.shape, b.data, b.byte_size, d));
      output_arrays[name] = buffer_ptr;
      return;
    }
    check(binding.bind_output(name, d));
    output_arrays.erase(name);
  }
  void bind_ortvalue_output(const std::string& name, const PyOrtValue& value) {
    check(binding.bind_output(name, value.tensor));
    output_arrays.erase(name);
  }
  std::vector<PyOrtValue> get_outputs() const {
    std::vector<PyOrtValue> out;
    for (const Tensor& t : binding.outputs()) out.push_back({t});
    return out;
  }
  py::list copy_outputs_to_cpu() const {
    py::list out;
    for (const Tensor& t : binding.outputs()) out.append(PyOrtValue{t}.numpy());
    return out;
  }
};

}  // namespace

void bind_io_binding(py::module_& m, const std::function<std::shared_ptr<Session>(const py::object&)>& session_of) {
  py::class_<PyOrtValue>(m, "OrtValue", "A tensor in host or device memory, as onnxruntime.OrtValue.")
      .def_static("ortvalue_from_numpy", &PyOrtValue::from_numpy, py::arg("numpy_obj"), py::arg("device_type") = "cpu",
                  py::arg("device_id") = 0)
      .def_static("ortvalue_from_shape_and_type", &PyOrtValue::from_shape_and_type, py::arg("shape"),
                  py::arg("element_type"), py::arg("device_type") = "cpu", py::arg("device_id") = 0)
      .def("numpy", &PyOrtValue::numpy)
      .def("device_name", [](const PyOrtValue& v) { return device_name(v.tensor.device()); })
      .def("shape", [](const PyOrtValue& v) { return v.tensor.shape().to_vector(); })
      .def("data_type", [](const PyOrtValue& v) { return value_type_string(v.tensor); })
      .def("element_type", [](const PyOrtValue& v) { return numpy_dtype(v.tensor.dtype(), "OrtValue"); })
      .def("data_ptr", [](const PyOrtValue& v) { return reinterpret_cast<uintptr_t>(v.tensor.raw_data()); })
      .def("is_tensor", [](const PyOrtValue& v) { return v.tensor.is_tensor(); })
      .def("has_value", [](const PyOrtValue& v) { return v.tensor.kind() != ValueKind::kNone && v.tensor.defined(); });

  py::class_<PyIOBinding>(m, "_IOBinding")
      .def(py::init([session_of](const py::object& session) {
        PyIOBinding b;
        b.session = session_of(session);
        b.owner = session;
        return b;
      }))
      .def("bind_cpu_input", &PyIOBinding::bind_cpu_input)
      .def("bind_input", &PyIOBinding::bind_input, py::arg("name"), py::arg("device_type"), py::arg("device_id"),
           py::arg("element_type"), py::arg("shape"), py::arg("buffer_ptr"), py::arg("buffer_size") = py::none())
      .def("bind_ortvalue_input", &PyIOBinding::bind_ortvalue_input)
      .def("bind_output", &PyIOBinding::bind_output, py::arg("name"), py::arg("device_type") = "cpu",
           py::arg("device_id") = 0, py::arg("element_type") = py::none(), py::arg("shape") = py::none(),
           py::arg("buffer_ptr") = py::none(), py::arg("buffer_size") = py::none())
      .def("bind_ortvalue_output", &PyIOBinding::bind_ortvalue_output)
      .def("get_outputs", &PyIOBinding::get_outputs)
      .def("copy_outputs_to_cpu", &PyIOBinding::copy_outputs_to_cpu)
      .def("clear_binding_inputs",
           [](PyIOBinding& b) {
             b.binding.clear_inputs();
             b.input_arrays.clear();
           })
      .def("clear_binding_outputs",
           [](PyIOBinding& b) {
             b.binding.clear_outputs();
             b.output_arrays.clear();
           })
      // Runs wait for their device work before returning, so there is
      // nothing left to synchronise; kept for onnxruntime scripts.
      .def("synchronize_inputs", [](PyIOBinding&) {})
      .def("synchronize_outputs", [](PyIOBinding&) {})
      .def("_run", [](PyIOBinding& b, const py::object& run_options) {
        RunOptions ro;
        if (!run_options.is_none()) ro = run_options.cast<const PyRunOptions&>().to_core();
        Status st;
        {
          py::gil_scoped_release release;
          st = b.session->run_with_binding(b.binding, ro);
        }
        if (!st.ok()) raise_status(st);
      });
}

}  // namespace sy::python
