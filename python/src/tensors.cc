// numpy <-> Tensor. Inputs are wrapped without a copy whenever the array
// already has the layout a Tensor needs; outputs hand the Tensor's buffer to
// numpy through a capsule, so no output is copied either.
#include <Python.h>

#include <array>
#include <bit>
#include <cstring>
#include <utility>
#include <memory>
#include <string>
#include <vector>

#include "binding.h"

namespace sy::python {
namespace {

constexpr int kNpyAligned = py::detail::npy_api::NPY_ARRAY_ALIGNED_;

// numpy kind + item size -> DataType; kUndefined when ONNX has no such type.
DataType data_type_of(const py::dtype& dt) {
  const size_t size = static_cast<size_t>(dt.itemsize());
  switch (dt.kind()) {
    case 'f':
      if (size == 2) return DataType::kFloat16;
      if (size == 4) return DataType::kFloat;
      if (size == 8) return DataType::kDouble;
      break;
    case 'i':
      if (size == 1) return DataType::kInt8;
      if (size == 2) return DataType::kInt16;
      if (size == 4) return DataType::kInt32;
      if (size == 8) return DataType::kInt64;
      break;
    case 'u':
      if (size == 1) return DataType::kUint8;
      if (size == 2) return DataType::kUint16;
      if (size == 4) return DataType::kUint32;
      if (size == 8) return DataType::kUint64;
      break;
    case 'b':
      if (size == 1) return DataType::kBool;
      break;
    case 'c':
      if (size == 8) return DataType::kComplex64;
      if (size == 16) return DataType::kComplex128;
      break;
    case 'U':
    case 'S':
    case 'O':
      return DataType::kString;
    default:
      break;
  }
  return DataType::kUndefined;
}

std::string type_name(const py::handle& h) { return py::str(py::type::handle_of(h).attr("__name__")); }

bool is_native_byte_order(const py::dtype& dt) {
  const char order = dt.byteorder();
  if (order == '=' || order == '|') return true;
  constexpr char kNative = std::endian::native == std::endian::little ? '<' : '>';
  return order == kNative;
}

std::string dtype_name(const py::dtype& dt) { return py::str(static_cast<const py::object&>(dt)); }

Shape shape_of(const py::array& arr) {
  Shape shape;
  shape.resize(static_cast<size_t>(arr.ndim()));
  for (py::ssize_t i = 0; i < arr.ndim(); ++i) shape[static_cast<size_t>(i)] = arr.shape(i);
  return shape;
}

Tensor string_tensor(const py::array& arr, const std::string& name) {
  Result<Tensor> made = Tensor::allocate(DataType::kString, shape_of(arr));
  if (!made.ok()) raise_status(made.status().with_context("input '" + name + "'"));
  Tensor t = std::move(made).value();
  auto* out = t.data<std::string>();
  // tolist() gives str for 'U', bytes for 'S', and the objects themselves
  // for 'O', in C order whatever the array's strides.
  py::list items = arr.attr("ravel")().attr("tolist")();
  for (size_t i = 0; i < items.size(); ++i) {
    PyObject* item = items[i].ptr();
    if (PyUnicode_Check(item)) {
      Py_ssize_t n = 0;
      const char* utf8 = PyUnicode_AsUTF8AndSize(item, &n);
      if (utf8 == nullptr) throw py::error_already_set();
      out[i].assign(utf8, static_cast<size_t>(n));
    } else if (PyBytes_Check(item)) {
      out[i].assign(PyBytes_AS_STRING(item), static_cast<size_t>(PyBytes_GET_SIZE(item)));
    } else {
      raise_invalid_argument("input '" + name + "': element " + std::to_string(i) + " of the " +
                             dtype_name(arr.dtype()) +
                             " array is a " + type_name(items[i]) +
                             "; str, bytes and object arrays become string tensors, and their elements must be "
                             "str or bytes");
    }
  }
  return t;
}

}  // namespace

py::dtype numpy_dtype(DataType dtype, const std::string& what) {
  // Built once: making a dtype from its name costs more than a tiny run().
  static const auto* table = [] {
    auto* t = new std::array<py::object, kMaxDataTypeValue + 1>();
    const std::pair<DataType, const char*> names[] = {
        {DataType::kFloat, "float32"},      {DataType::kDouble, "float64"},     {DataType::kFloat16, "float16"},
        {DataType::kInt8, "int8"},          {DataType::kInt16, "int16"},        {DataType::kInt32, "int32"},
        {DataType::kInt64, "int64"},        {DataType::kUint8, "uint8"},        {DataType::kUint16, "uint16"},
        {DataType::kUint32, "uint32"},      {DataType::kUint64, "uint64"},      {DataType::kBool, "bool"},
        {DataType::kComplex64, "complex64"}, {DataType::kComplex128, "complex128"}, {DataType::kString, "O"},
    };
    for (const auto& [type, name] : names) (*t)[static_cast<size_t>(type)] = py::dtype(name);
    return t;  // never freed: numpy's dtypes outlive every module anyway
  }();
  const auto index = static_cast<size_t>(dtype);
  if (index < table->size() && (*table)[index]) return py::reinterpret_borrow<py::dtype>((*table)[index]);
  raise_status(not_implemented(what + ": " + tensor_type_string(dtype) + " has no numpy equivalent"));
}

Tensor tensor_from_python(const py::handle& value, const std::string& name) {
  py::array arr;
  if (py::isinstance<py::array>(value)) {
    arr = py::reinterpret_borrow<py::array>(value);
  } else {
    // Lists, scalars and array-likes, as numpy would read them; their dtype
    // is numpy's choice and is checked against the model like any other.
    arr = py::array::ensure(value);
    if (!arr) raise_invalid_argument("input '" + name + "': cannot make a tensor from a " + type_name(value));
  }
  const py::dtype dt = arr.dtype();
  const DataType dtype = data_type_of(dt);
  if (dtype == DataType::kUndefined)
    raise_invalid_argument("input '" + name + "': numpy dtype " + dtype_name(dt) +
                           " has no ONNX tensor type");
  if (dtype == DataType::kString) return string_tensor(arr, name);

  // Byte order and layout are fixed by a copy; the element type never is
  // (as in ONNX Runtime, a float64 array fed to a float input is an error).
  if (!is_native_byte_order(dt)) arr = arr.attr("astype")(dt.attr("newbyteorder")("="));
  constexpr int kWanted = py::array::c_style | kNpyAligned;
  if ((arr.flags() & kWanted) != kWanted) {
    arr = py::array::ensure(arr, kWanted);
    if (!arr) throw py::error_already_set();
  }

  void* data = const_cast<void*>(arr.data());
  // The Tensor holds a reference to the array; whichever thread drops the
  // last copy of the Tensor takes the GIL to release it.
  auto* ref = new py::object(arr);
  std::shared_ptr<void> owner(ref, [](void* p) {
    const PyGILState_STATE state = PyGILState_Ensure();
    delete static_cast<py::object*>(p);
    PyGILState_Release(state);
  });
  return Tensor::shared(dtype, shape_of(arr), data, std::move(owner));
}

const ValueInfo* declared_input(const Session& session, const std::string& name) {
  for (const ValueInfo& in : session.inputs())
    if (in.name == name) return &in;
  for (const ValueInfo& in : session.overridable_initializers())
    if (in.name == name) return &in;
  return nullptr;
}

Tensor value_from_python(const py::handle& value, const ValueInfo* info, const std::string& name) {
  if (info == nullptr) return tensor_from_python(value, name);
  const std::string role = "input '" + name + "' (" + info->type + ")";
  if (value.is_none()) {
    if (!info->optional) raise_invalid_argument(role + ": got None, which only an optional input takes");
    return Tensor::none(info->element_dtype);
  }
  const bool is_list = PyList_Check(value.ptr()) || PyTuple_Check(value.ptr());
  if (!info->sequence) {
    // numpy would stack a list of arrays into one tensor; for a tensor input
    // such a list is far more likely a sequence fed to the wrong input.
    if (is_list && py::len(value) > 0 && py::isinstance<py::array>(value[py::int_(0)]))
      raise_invalid_argument(role + ": got a list of arrays, which is a sequence; give one numpy array");
    return tensor_from_python(value, name);
  }
  if (!is_list)
    raise_invalid_argument(role + ": expected a list of numpy arrays, got a " +
                           std::string(py::str(py::type::handle_of(value).attr("__name__"))));
  // An empty list has no items to tell its element type: the declared one.
  DataType element = info->element_dtype;
  std::vector<Tensor> items;
  items.reserve(py::len(value));
  for (const py::handle& item : value) {
    const size_t k = items.size();
    Tensor t = tensor_from_python(item, name + "[" + std::to_string(k) + "]");
    if (element == DataType::kUndefined) element = t.dtype();
    if (t.dtype() != element)
      raise_invalid_argument(role + ": element " + std::to_string(k) + " is " + tensor_type_string(t.dtype()) +
                             ", but the elements must all be " + tensor_type_string(element));
    items.push_back(std::move(t));
  }
  return Tensor::sequence(element, std::move(items));
}

py::object tensor_to_numpy(const Tensor& tensor, const std::string& name) {
  // Sequences come back as lists of arrays and empty optionals as None, as
  // in onnxruntime.
  if (tensor.kind() == ValueKind::kNone) return py::none();
  if (tensor.kind() == ValueKind::kSequence) {
    py::list items;
    for (const Tensor& item : tensor.items()) items.append(tensor_to_numpy(item, name));
    return items;
  }
  if (!tensor.device().is_cpu())
    raise_status(fail("output '" + name + "' is on " + tensor.device().to_string() + ", not in host memory"));
  const py::dtype dt = numpy_dtype(tensor.dtype(), "output '" + name + "'");
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());

  if (tensor.dtype() == DataType::kString) {
    py::array arr(dt, shape);
    auto** cells = static_cast<PyObject**>(arr.mutable_data());
    const auto* strs = tensor.data<std::string>();
    for (int64_t i = 0, n = tensor.num_elements(); i < n; ++i) {
      PyObject* s = PyUnicode_DecodeUTF8(strs[i].data(), static_cast<Py_ssize_t>(strs[i].size()), "strict");
      if (s == nullptr) {  // not UTF-8: hand back the bytes rather than fail
        PyErr_Clear();
        s = PyBytes_FromStringAndSize(strs[i].data(), static_cast<Py_ssize_t>(strs[i].size()));
        if (s == nullptr) throw py::error_already_set();
      }
      Py_XDECREF(cells[i]);
      cells[i] = s;
    }
    return arr;
  }

  if (tensor.num_elements() == 0 || tensor.raw_data() == nullptr) return py::array(dt, shape);
  Tensor kept = tensor;
  if (!kept.owns_memory()) {
    // A view of memory the session may reuse: copy before handing it out.
    Result<Tensor> copy = tensor.clone();
    if (!copy.ok()) raise_status(copy.status().with_context("output '" + name + "'"));
    kept = std::move(copy).value();
  }
  void* data = kept.raw_data();
  py::capsule base(new Tensor(std::move(kept)), [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dt, shape, data, base);
}

}  // namespace sy::python
