// Tensor: a typed, shaped view of bytes on a device, optionally owning them.
// Copying a Tensor shares the bytes (like a shared_ptr); clone() copies them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "switchyard/allocator.h"
#include "switchyard/data_type.h"
#include "switchyard/device.h"
#include "switchyard/shape.h"
#include "switchyard/status.h"

namespace sy {

// What a value holds. Almost always a tensor; ONNX also has sequences of
// tensors and optionals, which travel through the same type so that the
// executor, feeds and outputs need one path (like ORT's OrtValue).
enum class ValueKind : uint8_t {
  kTensor,
  kSequence,  // items(): the tensors; dtype(): their element type
  kNone,      // an optional without a value
};

class Tensor {
 public:
  Tensor() = default;

  // A sequence of tensors whose elements have type `element_type`.
  static Tensor sequence(DataType element_type, std::vector<Tensor> items);
  // An optional that holds nothing; `element_type` may be kUndefined.
  static Tensor none(DataType element_type = DataType::kUndefined);
  ValueKind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == ValueKind::kTensor; }
  // The elements of a sequence (empty for other kinds).
  const std::vector<Tensor>& items() const;

  // New zero-initialised tensor owning its memory (strings start empty).
  // Fails on negative dimensions, overflow, or allocation failure.
  static Result<Tensor> allocate(DataType dtype, const Shape& shape, Allocator* allocator = cpu_allocator());
  // The same without zeroing, for memory a kernel is about to overwrite
  // (strings are still constructed empty).
  static Result<Tensor> allocate_uninitialized(DataType dtype, const Shape& shape,
                                               Allocator* allocator = cpu_allocator());
  // A view of memory someone else owns; the caller keeps it alive.
  static Tensor view(DataType dtype, const Shape& shape, void* data, Device device = kCpuDevice);
  // A view whose lifetime is tied to `owner` (a mapped file, a parent buffer).
  static Tensor shared(DataType dtype, const Shape& shape, void* data, std::shared_ptr<void> owner,
                       Device device = kCpuDevice);

  bool defined() const { return dtype_ != DataType::kUndefined || kind_ != ValueKind::kTensor; }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  Device device() const { return device_; }
  int64_t num_elements() const { return shape_.num_elements(); }
  size_t byte_size() const { return storage_bytes(dtype_, num_elements()); }
  bool owns_memory() const { return owner_ != nullptr; }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  template <typename T>
  T* data() {
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(data_);
  }

  // Re-points this tensor at other memory with another shape, keeping no
  // ownership. Used by the executor to place values in planned buffers.
  void reset_view(DataType dtype, const Shape& shape, void* data, Device device) {
    dtype_ = dtype;
    shape_ = shape;
    data_ = data;
    device_ = device;
    owner_.reset();
    kind_ = ValueKind::kTensor;
    items_.reset();
  }

  // Deep copy into host memory owned by the result.
  Result<Tensor> clone() const;
  // Same bytes, another shape with the same element count.
  Result<Tensor> reshaped(const Shape& shape) const;

  // "float[1,3,224,224]"
  std::string describe() const;

 private:
  static Result<Tensor> allocate_impl(DataType dtype, const Shape& shape, Allocator* allocator, bool zero);

  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  void* data_ = nullptr;
  Device device_;
  std::shared_ptr<void> owner_;
  ValueKind kind_ = ValueKind::kTensor;
  std::shared_ptr<const std::vector<Tensor>> items_;  // kSequence
};

// Checks dims are non-negative and the element count and byte size fit in
// memory limits; the error names `what`.
Status check_shape_is_sane(const Shape& shape, DataType dtype, const std::string& what);

}  // namespace sy
