#include "switchyard/tensor.h"

#include <cstring>
#include <limits>
#include <new>

#include "core/checked_math.h"

namespace sy {

Status check_shape_is_sane(const Shape& shape, DataType dtype, const std::string& what_in) {
  // Built only on failure: this check runs for every kernel output.
  auto what = [&] { return what_in.empty() ? std::string("tensor") : what_in; };
  int64_t signed_count = 0;
  if (Status st = checked_element_count(shape.dims(), signed_count); !st.ok()) return st.with_context(what());
  const auto count = static_cast<uint64_t>(signed_count);
  const uint64_t unit = element_size(dtype) == 0 ? 1 : element_size(dtype);
  if (count > kMaxTensorBytes / unit)
    return invalid_argument(what() + ": shape " + shape.to_string() + " of " + std::string(data_type_name(dtype)) +
                            " needs more than 1 TiB");
  return ok_status();
}

Result<Tensor> Tensor::allocate(DataType dtype, const Shape& shape, Allocator* allocator) {
  return allocate_impl(dtype, shape, allocator, /*zero=*/true);
}

Result<Tensor> Tensor::allocate_uninitialized(DataType dtype, const Shape& shape, Allocator* allocator) {
  return allocate_impl(dtype, shape, allocator, /*zero=*/false);
}

Result<Tensor> Tensor::allocate_impl(DataType dtype, const Shape& shape, Allocator* allocator, bool zero) {
  if (dtype == DataType::kUndefined) return invalid_argument("cannot allocate a tensor of undefined type");
  SY_RETURN_IF_ERROR(check_shape_is_sane(shape, dtype, "tensor"));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.device_ = allocator->device();
  const size_t bytes = storage_bytes(dtype, shape.num_elements());
  void* p = allocator->allocate(bytes);
  if (p == nullptr) {
    const std::string why = allocator->last_error();
    return Status(StatusCode::kOutOfMemory, "failed to allocate " + std::to_string(bytes) + " bytes on " +
                                                t.device_.to_string() + " for " + t.describe() +
                                                (why.empty() ? "" : ": " + why));
  }
  if (dtype == DataType::kString) {
    const int64_t n = shape.num_elements();
    auto* s = static_cast<std::string*>(p);
    for (int64_t i = 0; i < n; ++i) new (s + i) std::string();
    t.owner_ = std::shared_ptr<void>(p, [allocator, n](void* q) {
      auto* strs = static_cast<std::string*>(q);
      for (int64_t i = 0; i < n; ++i) strs[i].~basic_string();
      allocator->deallocate(q);
    });
  } else {
    if (zero && (t.device_.is_cpu() || t.device_.type == DeviceType::kSimulated)) std::memset(p, 0, bytes);
    t.owner_ = std::shared_ptr<void>(p, [allocator](void* q) { allocator->deallocate(q); });
  }
  t.data_ = p;
  return t;
}

Tensor Tensor::sequence(DataType element_type, std::vector<Tensor> items) {
  Tensor t;
  t.kind_ = ValueKind::kSequence;
  t.dtype_ = element_type;
  t.shape_ = Shape{static_cast<int64_t>(items.size())};
  t.items_ = std::make_shared<const std::vector<Tensor>>(std::move(items));
  return t;
}

Tensor Tensor::none(DataType element_type) {
  Tensor t;
  t.kind_ = ValueKind::kNone;
  t.dtype_ = element_type;
  t.shape_ = Shape{0};
  return t;
}

const std::vector<Tensor>& Tensor::items() const {
  static const std::vector<Tensor> kEmpty;
  return items_ ? *items_ : kEmpty;
}

Tensor Tensor::view(DataType dtype, const Shape& shape, void* data, Device device) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.data_ = data;
  t.device_ = device;
  return t;
}

Tensor Tensor::shared(DataType dtype, const Shape& shape, void* data, std::shared_ptr<void> owner, Device device) {
  Tensor t = view(dtype, shape, data, device);
  t.owner_ = std::move(owner);
  return t;
}

Result<Tensor> Tensor::clone() const {
  if (kind_ == ValueKind::kNone) return *this;
  if (kind_ == ValueKind::kSequence) {
    std::vector<Tensor> copies;
    for (const Tensor& item : items()) {
      SY_ASSIGN_OR_RETURN(Tensor c, item.clone());
      copies.push_back(std::move(c));
    }
    return sequence(dtype_, std::move(copies));
  }
  if (!device_.is_cpu() && device_.type != DeviceType::kSimulated)
    return invalid_argument("clone() of a tensor on " + device_.to_string() + " needs its provider's copy");
  SY_ASSIGN_OR_RETURN(Tensor copy, allocate_uninitialized(dtype_, shape_));
  copy.device_ = device_;
  if (dtype_ == DataType::kString) {
    const auto* src = data<std::string>();
    auto* dst = copy.data<std::string>();
    for (int64_t i = 0, n = num_elements(); i < n; ++i) dst[i] = src[i];
  } else if (byte_size() > 0) {
    std::memcpy(copy.data_, data_, byte_size());
  }
  return copy;
}

Result<Tensor> Tensor::reshaped(const Shape& shape) const {
  if (shape.num_elements() != num_elements())
    return invalid_argument("cannot reshape " + describe() + " to " + shape.to_string());
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

std::string Tensor::describe() const {
  if (kind_ == ValueKind::kSequence)
    return "seq(" + std::string(data_type_name(dtype_)) + ") of " + std::to_string(items().size());
  if (kind_ == ValueKind::kNone) return "optional(none)";
  return std::string(data_type_name(dtype_)) + shape_.to_string();
}

}  // namespace sy
