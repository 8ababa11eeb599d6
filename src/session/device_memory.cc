// Tensors in the memory of the providers' devices, and copies between
// devices and the host: for a session (Session::allocate_tensor and
// copy_tensor, IoBinding outputs kept on a device) and outside one
// (allocate_device_tensor, copy_tensor).
#include <cstring>
#include <map>
#include <mutex>

#include "providers/provider_factory.h"
#include "session/api_boundary.h"
#include "session/session_impl.h"

namespace sy {
namespace {

// Memory on `owner`'s device that keeps the provider, and so its
// allocator, alive for as long as the tensor.
Result<Tensor> allocate_on_provider(const std::shared_ptr<ExecutionProvider>& owner, DataType dtype, const Shape& shape) {
  const Device d = owner->device();
  if (dtype == DataType::kString) return invalid_argument("string tensors cannot live on " + d.to_string());
  const size_t bytes = storage_bytes(dtype, shape.num_elements());
  void* p = owner->allocator()->allocate(bytes);
  if (p == nullptr) {
    const std::string why = owner->allocator()->last_error();
    return Status(StatusCode::kOutOfMemory, "failed to allocate " + std::to_string(bytes) + " bytes on " + d.to_string() +
                                                (why.empty() ? "" : ": " + why));
  }
  std::shared_ptr<void> memory(p, [owner](void* q) { owner->allocator()->deallocate(q); });
  return Tensor::shared(dtype, shape, p, std::move(memory), d);
}

// Copies src to dst between host memory and provider devices; `owner_of`
// names the provider of a non-host device (a Result<ExecutionProvider*>).
template <typename OwnerOf>
Status copy_through_providers(const Tensor& src, Tensor& dst, OwnerOf&& owner_of) {
  if (src.dtype() != dst.dtype() || src.shape() != dst.shape())
    return invalid_argument("copy from " + src.describe() + " to " + dst.describe() + ": type or shape differs");
  const Device from = src.device(), to = dst.device();
  if (from.is_cpu() && to.is_cpu()) {
    if (src.byte_size() > 0 && src.raw_data() != dst.raw_data()) std::memcpy(dst.raw_data(), src.raw_data(), src.byte_size());
    return ok_status();
  }
  if (from.is_cpu()) {
    SY_ASSIGN_OR_RETURN(ExecutionProvider * p, owner_of(to));
    return p->copy_from_host(src, dst);
  }
  SY_ASSIGN_OR_RETURN(ExecutionProvider * src_owner, owner_of(from));
  if (to.is_cpu()) return src_owner->copy_to_host(src, dst);
  if (from == to) return src_owner->copy_on_device(src, dst);
  SY_ASSIGN_OR_RETURN(ExecutionProvider * dst_owner, owner_of(to));
  SY_ASSIGN_OR_RETURN(Tensor host, Tensor::allocate_uninitialized(src.dtype(), src.shape()));
  SY_RETURN_IF_ERROR(src_owner->copy_to_host(src, host));
  return dst_owner->copy_from_host(host, dst);
}

// The provider serving a device outside sessions, created on first use.
Result<std::shared_ptr<ExecutionProvider>> device_provider(Device d) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, std::shared_ptr<ExecutionProvider>> providers;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(static_cast<int>(d.type), d.id);
  if (auto it = providers.find(key); it != providers.end()) return it->second;
  if (d.type != DeviceType::kCuda) return invalid_argument("no provider serves " + d.to_string() + " memory outside a session");
  SY_ASSIGN_OR_RETURN(std::unique_ptr<ExecutionProvider> p,
                      create_provider("CUDAExecutionProvider", {{"device_id", std::to_string(d.id)}}));
  const Availability a = p->availability();
  if (!a.available)
    return Status(StatusCode::kUnavailable, p->name() + " is not available for " + d.to_string() + ": " + a.reason +
                                                (a.fix.empty() ? "" : "; fix: " + a.fix));
  std::shared_ptr<ExecutionProvider> shared(std::move(p));
  providers[key] = shared;
  return shared;
}

}  // namespace

ExecutionProvider* Session::Impl::provider_for(Device d) const {
  for (ExecutionProvider* p : chain)
    if (p->device() == d) return p;
  return nullptr;
}

Result<Tensor> Session::Impl::allocate_on(Device d, DataType dtype, const Shape& shape) const {
  if (d.is_cpu()) return Tensor::allocate_uninitialized(dtype, shape);
  for (const auto& p : providers)
    if (p->device() == d) return allocate_on_provider(p, dtype, shape);
  return invalid_argument(d.to_string() + " is not the device of any provider of this session");
}

Status Session::Impl::copy_between(const Tensor& src, Tensor& dst) const {
  return copy_through_providers(src, dst, [this](Device d) -> Result<ExecutionProvider*> {
    if (ExecutionProvider* p = provider_for(d)) return p;
    return invalid_argument(d.to_string() + " is not the device of any provider of this session");
  });
}

// ---- device memory without a session ----------------------------------------

Result<Tensor> allocate_device_tensor(DataType dtype, const Shape& shape, Device device) {
  return at_api_boundary([&] { return "allocating a tensor on " + device.to_string(); }, [&]() -> Result<Tensor> {
    if (device.is_cpu()) return Tensor::allocate(dtype, shape);
    SY_ASSIGN_OR_RETURN(std::shared_ptr<ExecutionProvider> owner, device_provider(device));
    return allocate_on_provider(owner, dtype, shape);
  });
}

Status copy_tensor(const Tensor& src, Tensor& dst) {
  return at_api_boundary([] { return "copying a tensor"; }, [&]() -> Status {
    std::vector<ExecutionProvider*> used;
    SY_RETURN_IF_ERROR(copy_through_providers(src, dst, [&used](Device d) -> Result<ExecutionProvider*> {
      SY_ASSIGN_OR_RETURN(std::shared_ptr<ExecutionProvider> p, device_provider(d));
      used.push_back(p.get());  // device_provider keeps it alive
      return p.get();
    }));
    // Sessions use their own streams: the bytes must be in place before this returns.
    for (ExecutionProvider* p : used) SY_RETURN_IF_ERROR(p->synchronize());
    return ok_status();
  });
}

}  // namespace sy
