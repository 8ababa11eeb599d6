// IoBinding: inputs and outputs bound to memory ahead of a run, possibly
// in device memory, and Session::run_with_binding. The routes that let a
// run use a device feed or keep a device output without a copy are
// planned here too, once per session (plan_io_binding_routes).
#include <optional>

#include "session/api_boundary.h"
#include "session/session_impl.h"

namespace sy {

// Fills Impl::feed_device and Impl::output_routes (see session_impl.h).
void plan_io_binding_routes(Session::Impl& s, const Graph& graph) {
  for (ValueId v : s.input_values) {
    std::optional<Device> device;
    bool all_copies = true;
    for (NodeId c : graph.values[static_cast<size_t>(v)].consumers) {
      const auto id = static_cast<size_t>(c);
      const int p = id < s.partition.node_provider.size() ? s.partition.node_provider[id] : -1;
      const bool copy = p >= 0 && graph.nodes[static_cast<size_t>(c)].op_type == kCopyFromHostOp;
      if (!copy || (device && *device != s.chain[static_cast<size_t>(p)]->device())) {
        all_copies = false;
        break;
      }
      device = s.chain[static_cast<size_t>(p)]->device();
    }
    s.feed_device.push_back(all_copies ? device : std::nullopt);
  }
  s.output_routes.resize(graph.outputs.size());
  for (size_t j = 0; j < graph.outputs.size(); ++j) {
    const Value& out = graph.values[static_cast<size_t>(graph.outputs[j])];
    if (out.producer == kNoNode || !out.consumers.empty()) continue;
    const Node& producer = graph.nodes[static_cast<size_t>(out.producer)];
    if (producer.op_type != kCopyToHostOp) continue;
    for (size_t k = 0; k < s.plan.steps.size(); ++k) {
      const PlanStep& step = s.plan.steps[k];
      if (step.node != out.producer) continue;
      s.output_routes[j] = {static_cast<int>(k), producer.inputs[0], s.chain[static_cast<size_t>(step.provider)]->device()};
      break;
    }
  }
}

// ---- IoBinding ---------------------------------------------------------------

namespace {

// What a bound tensor must be before a run may read or write it: of a
// known type, with a shape whose size fits, and with memory behind it
// unless it has no elements. `role`: "input 'x'", "output 'y'".
Status check_bound_tensor(const std::string& role, const Tensor& t) {
  if (!t.is_tensor()) return ok_status();  // sequences and optionals: built from checked tensors
  if (t.dtype() == DataType::kUndefined) return invalid_argument(role + ": the tensor bound has no type");
  SY_RETURN_IF_ERROR(check_shape_is_sane(t.shape(), t.dtype(), role));
  if (t.raw_data() == nullptr && t.num_elements() > 0)
    return invalid_argument(role + ": the tensor bound for " + t.describe() + " has a null data pointer");
  return ok_status();
}

// A view of a caller's buffer of `byte_size` bytes, refused when the
// buffer cannot hold dtype[shape].
Result<Tensor> checked_buffer_view(const std::string& role, DataType dtype, const Shape& shape, void* data,
                                   size_t byte_size, Device device) {
  if (dtype == DataType::kUndefined || dtype == DataType::kString)
    return invalid_argument(role + ": a caller's buffer cannot hold elements of type " +
                            std::string(data_type_name(dtype)));
  SY_RETURN_IF_ERROR(check_shape_is_sane(shape, dtype, role));
  const size_t needed = storage_bytes(dtype, shape.num_elements());
  const std::string type = std::string(data_type_name(dtype)) + shape.to_string();
  if (data == nullptr && needed > 0)
    return invalid_argument(role + ": the data pointer is null, but " + type + " needs " + std::to_string(needed) +
                            " bytes");
  if (byte_size < needed)
    return invalid_argument(role + ": the buffer has " + std::to_string(byte_size) + " bytes, but " + type +
                            " needs " + std::to_string(needed));
  return Tensor::view(dtype, shape, data, device);
}

// Binds an output: replaces the binding of the same name, or adds one.
template <typename Output>
void put_output(std::vector<Output>& outputs, Output output) {
  for (Output& o : outputs) {
    if (o.name == output.name) {
      o = std::move(output);
      return;
    }
  }
  outputs.push_back(std::move(output));
}

}  // namespace

Status IoBinding::bind_input(const std::string& name, const Tensor& value) {
  return at_api_boundary([&] { return "binding input '" + name + "'"; }, [&]() -> Status {
    SY_RETURN_IF_ERROR(check_bound_tensor("input '" + name + "'", value));
    for (auto& [n, t] : inputs_) {
      if (n == name) {
        t = value;
        return ok_status();
      }
    }
    inputs_.emplace_back(name, value);
    return ok_status();
  });
}

Status IoBinding::bind_input(const std::string& name, DataType dtype, const Shape& shape, void* data,
                             size_t byte_size, Device device) {
  Result<Tensor> view = checked_buffer_view("input '" + name + "'", dtype, shape, data, byte_size, device);
  if (!view.ok()) return view.status();
  return bind_input(name, *view);
}

Status IoBinding::bind_output(const std::string& name, Device device) {
  return at_api_boundary([&] { return "binding output '" + name + "'"; }, [&]() -> Status {
    put_output(outputs_, Output{name, device, Tensor()});
    return ok_status();
  });
}

Status IoBinding::bind_output(const std::string& name, const Tensor& preallocated) {
  return at_api_boundary([&] { return "binding output '" + name + "'"; }, [&]() -> Status {
    const std::string role = "output '" + name + "'";
    if (!preallocated.is_tensor() || !preallocated.defined())
      return invalid_argument(role + ": only a tensor can be bound as an output's memory, got " +
                              preallocated.describe());
    // The run's result is copied in byte by byte, which strings are not.
    if (preallocated.dtype() == DataType::kString)
      return invalid_argument(role + ": string outputs cannot be written into a bound tensor; bind it without one");
    SY_RETURN_IF_ERROR(check_bound_tensor(role, preallocated));
    put_output(outputs_, Output{name, preallocated.device(), preallocated});
    return ok_status();
  });
}

Status IoBinding::bind_output(const std::string& name, DataType dtype, const Shape& shape, void* data,
                              size_t byte_size, Device device) {
  Result<Tensor> view = checked_buffer_view("output '" + name + "'", dtype, shape, data, byte_size, device);
  if (!view.ok()) return view.status();
  return bind_output(name, *view);
}

Status Session::run_with_binding(IoBinding& binding, const RunOptions& run_options) const {
  return at_api_boundary([] { return "running with an IoBinding"; }, [&]() -> Status {
    std::vector<std::string> names;
    std::vector<Device> devices;
    for (const IoBinding::Output& o : binding.outputs_) {
      names.push_back(o.name);
      devices.push_back(o.device);
      if (!o.preallocated.defined()) continue;
      // A bound tensor that cannot match the declared output is refused
      // before the run, not after it.
      for (const ValueInfo& info : impl_->output_infos) {
        if (info.name != o.name) continue;
        const Tensor& pre = o.preallocated;
        // A sequence or optional result is no block of bytes to copy in.
        if (info.sequence || info.optional)
          return invalid_argument("output '" + o.name + "' is " + info.type +
                                  ", which cannot be written into a bound tensor; bind it without one");
        bool fits = info.dtype == DataType::kUndefined || info.dtype == pre.dtype();
        if (info.has_shape) {
          fits = fits && info.shape.size() == pre.shape().rank();
          for (size_t d = 0; fits && d < info.shape.size(); ++d)
            fits = info.shape[d].value < 0 || info.shape[d].value == pre.shape()[d];
        }
        if (!fits)
          return invalid_argument("output '" + o.name + "' is declared " + info.type + " " + shape_string(info) +
                                  " but the tensor bound for it is " + pre.describe());
      }
    }
    if (names.empty()) {  // nothing bound: every output, on the host
      for (const ValueInfo& o : impl_->output_infos) {
        names.push_back(o.name);
        devices.push_back(kCpuDevice);
      }
    }
    SY_ASSIGN_OR_RETURN(std::vector<Tensor> results, impl_->run(binding.inputs_, names, run_options, devices));
    for (size_t k = 0; k < binding.outputs_.size(); ++k) {
      Tensor& pre = binding.outputs_[k].preallocated;
      if (!pre.defined()) continue;
      // An output the model leaves untyped may still turn out not to be a tensor.
      if (!results[k].is_tensor())
        return invalid_argument("output '" + names[k] + "' is " + results[k].describe() +
                                ", which cannot be written into the tensor bound for it; bind it without one");
      if (pre.dtype() != results[k].dtype() || pre.shape() != results[k].shape())
        return invalid_argument("output '" + names[k] + "' is " + results[k].describe() +
                                " but the tensor bound for it is " + pre.describe());
      SY_RETURN_IF_ERROR(impl_->copy_between(results[k], pre));
      results[k] = pre;
    }
    binding.results_ = std::move(results);
    return ok_status();
  });
}

}  // namespace sy
