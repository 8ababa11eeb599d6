// Session::Impl::run: a run of a session. The feeds are checked against
// the model's inputs and bound into a frame, the plan is executed
// (executor.h), and the outputs are taken from the frame — or, for an
// IoBinding output kept on its device, copied into memory of its own there.
#include <algorithm>
#include <string>

#include "core/bool_bytes.h"
#include "session/session_impl.h"

namespace sy {
namespace {

// Kernels read bool elements as C++ bool, for which a byte other than 0 or
// 1 is undefined behaviour; such a feed (a numpy bool array viewed from
// uint8, a caller's buffer) is refused rather than silently normalised,
// which would mean writing into the caller's memory or copying every bool
// feed. Device memory is not scanned.
Status check_bool_bytes(const std::string& input, const Tensor& t) {
  if (!t.is_tensor() || t.dtype() != DataType::kBool || !t.device().is_cpu() || t.raw_data() == nullptr)
    return ok_status();
  const auto* bytes = t.data<uint8_t>();
  const auto n = static_cast<size_t>(t.num_elements());
  const size_t bad = first_invalid_bool_byte(bytes, n);
  if (bad == n) return ok_status();
  return invalid_argument("input '" + input + "': bool element " + std::to_string(bad) + " of " + t.describe() +
                          " is the byte " + std::to_string(bytes[bad]) +
                          "; a bool must be 0 or 1 (convert with != 0, e.g. numpy's astype(bool))");
}

// Sequences and optionals: the kind must match the declared type, and the
// element type (info.element_dtype) the declared one, for the sequence or
// empty optional itself as for each item. Items must be tensors in host
// memory: the sequence kernels read them there, and unlike a tensor feed
// (place_feed) they are not copied to the host first.
Status check_container_feed(const ValueInfo& info, const ValueType& type, const Tensor& feed) {
  auto mismatch = [&](const std::string& got) {
    return invalid_argument("input '" + info.name + "': expected " + info.type + ", got " + got);
  };
  const DataType want = info.element_dtype;
  auto other_type = [&](DataType got) {
    return want != DataType::kUndefined && got != DataType::kUndefined && got != want;
  };
  const ValueType* t = &type;
  if (t->kind == ValueType::Kind::kOptional) {
    if (feed.kind() == ValueKind::kNone) {
      if (other_type(feed.dtype())) return mismatch("an empty optional of " + tensor_type_string(feed.dtype()));
      return ok_status();
    }
    if (t->element) t = t->element.get();
  }
  if (t->kind == ValueType::Kind::kSequence) {
    if (feed.kind() != ValueKind::kSequence) return mismatch(feed.describe());
    if (other_type(feed.dtype())) return mismatch("a sequence of " + tensor_type_string(feed.dtype()));
    const std::vector<Tensor>& items = feed.items();
    for (size_t k = 0; k < items.size(); ++k) {
      const Tensor& item = items[k];
      // Spelled out only on a mismatch: a run checks its feeds without allocating.
      auto which = [k] { return " (element " + std::to_string(k) + ")"; };
      if (!item.is_tensor()) return mismatch(item.describe() + which());
      if (want != DataType::kUndefined && item.dtype() != want)
        return mismatch("an element of type " + tensor_type_string(item.dtype()) + which());
      if (!item.device().is_cpu())
        return invalid_argument("input '" + info.name + "': element " + std::to_string(k) + " of the sequence is in " +
                                item.device().to_string() + " memory; the items of a sequence must be in host memory");
      SY_RETURN_IF_ERROR(check_bool_bytes(info.name, item));
    }
    return ok_status();
  }
  if (feed.kind() != ValueKind::kTensor) return mismatch(feed.describe());
  return ok_status();
}

// Whether `result` (or an item of it) is `feed` (or an item of it): the
// sequence and optional kernels hand values on without copying them, so
// SequenceConstruct then SequenceAt, or Identity of a sequence, returns the
// caller's own tensors.
bool shares_bytes(const Tensor& result, const Tensor& feed) {
  if (result.kind() == ValueKind::kSequence) {
    for (const Tensor& item : result.items())
      if (shares_bytes(item, feed)) return true;
    return false;
  }
  if (feed.kind() == ValueKind::kSequence) {
    for (const Tensor& item : feed.items())
      if (shares_bytes(result, item)) return true;
    return false;
  }
  return result.raw_data() != nullptr && result.raw_data() == feed.raw_data();
}

}  // namespace


// For each requested output, the position of the first request of the same
// value (its own when it is the first). Sorted, so that many outputs cost
// n log n rather than a search through the earlier requests for each.
std::vector<size_t> first_requests(const std::vector<ValueId>& wanted) {
  std::vector<std::pair<ValueId, size_t>> by_value(wanted.size());
  for (size_t k = 0; k < wanted.size(); ++k) by_value[k] = {wanted[k], k};
  std::sort(by_value.begin(), by_value.end());
  std::vector<size_t> first(wanted.size());
  for (size_t i = 0; i < by_value.size(); ++i) {
    const bool repeat = i > 0 && by_value[i].first == by_value[i - 1].first;
    first[by_value[i].second] = repeat ? first[by_value[i - 1].second] : by_value[i].second;
  }
  return first;
}

Status Session::Impl::check_feed(const ValueInfo& info, const ValueType& type, const Tensor& feed) const {
  if (type.kind == ValueType::Kind::kSequence || type.kind == ValueType::Kind::kOptional) {
    SY_RETURN_IF_ERROR(check_container_feed(info, type, feed));
    if (!feed.is_tensor()) return ok_status();
    if (type.element) return check_feed(info, *type.element, feed);  // optional(tensor)
    return ok_status();
  }
  if (!feed.is_tensor())
    return invalid_argument("input '" + info.name + "': expected " + info.type + ", got " + feed.describe());
  if (!feed.device().is_cpu() && provider_for(feed.device()) == nullptr)
    return invalid_argument("input '" + info.name + "': it is in " + feed.device().to_string() +
                            " memory, which no provider of this session owns (put it in host memory, or add the "
                            "provider of that device)");
  if (type.dtype != DataType::kUndefined && feed.dtype() != type.dtype)
    return invalid_argument("input '" + info.name + "': expected " + info.type + ", got " +
                            tensor_type_string(feed.dtype()));
  SY_RETURN_IF_ERROR(check_bool_bytes(info.name, feed));
  if (!type.has_shape) return ok_status();
  const Shape& s = feed.shape();
  if (s.rank() != type.rank())
    return invalid_argument("input '" + info.name + "': expected rank " + std::to_string(type.rank()) + " " +
                            shape_string(info) + ", got rank " + std::to_string(s.rank()) + " " + s.to_string());
  for (size_t i = 0; i < s.rank(); ++i) {
    const Dim& d = type.dims[i];
    if (d.is_known() && d.value != s[i])
      return invalid_argument("input '" + info.name + "': dimension " + std::to_string(i) + " must be " +
                              std::to_string(d.value) + " (expected shape " + shape_string(info) + "), got shape " +
                              s.to_string());
  }
  return ok_status();
}

Result<Tensor> Session::Impl::place_feed(size_t i, const Tensor& feed) const {
  const Value& value = model.graph->values[static_cast<size_t>(input_values[i])];
  ExecutionProvider* owner = provider_for(feed.device());
  if (owner == nullptr)
    return invalid_argument("input '" + value.name + "' is in " + feed.device().to_string() +
                            " memory, which no provider of this session owns");
  if (value.consumers.empty() || feed_device[i] == feed.device()) return feed;
  SY_ASSIGN_OR_RETURN(Tensor host, Tensor::allocate_uninitialized(feed.dtype(), feed.shape()));
  SY_RETURN_IF_ERROR(owner->copy_to_host(feed, host));
  return host;
}

Result<std::vector<Tensor>> Session::Impl::run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                               const std::vector<std::string>& output_names,
                                               const RunOptions& run_options,
                                               const std::vector<Device>& device_outputs) const {
  const Graph& graph = *model.graph;

  // Which outputs, by value.
  std::vector<ValueId> wanted;
  if (output_names.empty()) {
    wanted = graph.outputs;
  } else {
    for (const std::string& name : output_names) {
      auto found = output_value.find(name);
      if (found == output_value.end()) {
        std::string known;
        for (const ValueInfo& o : output_infos) known += (known.empty() ? "" : ", ") + o.name;
        return invalid_argument("unknown output '" + name + "'; the model's outputs are: " + known);
      }
      wanted.push_back(found->second);
    }
  }

  std::unique_ptr<ExecutionFrame> frame = frames_.acquire(plan, provider_allocators);
  struct FrameReturn {
    FramePool& frames;
    std::unique_ptr<ExecutionFrame>& frame;
    ~FrameReturn() { frames.release(std::move(frame)); }
  } frame_return{frames_, frame};

  // Bind feeds.
  std::vector<bool> bound(input_values.size(), false);
  // Feeds usually come in the model's input order, so a feed's own position
  // is tried before the name map.
  auto input_position = [&](const std::string& name, size_t hint) -> std::optional<size_t> {
    if (hint < input_infos.size() && input_infos[hint].name == name) return hint;
    auto it = input_index.find(name);
    return it == input_index.end() ? std::nullopt : std::optional<size_t>(it->second);
  };
  for (size_t f = 0; f < feeds.size(); ++f) {
    const auto& [name, tensor] = feeds[f];
    if (const std::optional<size_t> input = input_position(name, f)) {
      const size_t i = *input;
      SY_RETURN_IF_ERROR(check_feed(input_infos[i], graph.values[static_cast<size_t>(input_values[i])].type, tensor));
      if (tensor.is_tensor() && !tensor.device().is_cpu()) {
        SY_ASSIGN_OR_RETURN(frame->values[static_cast<size_t>(input_values[i])], place_feed(i, tensor));
      } else {
        frame->values[static_cast<size_t>(input_values[i])] = tensor;
      }
      bound[i] = true;
    } else if (auto over = overridable_index.find(name); over != overridable_index.end()) {
      const size_t i = over->second;
      SY_RETURN_IF_ERROR(
          check_feed(overridable_infos[i], graph.values[static_cast<size_t>(overridable[i].first)].type, tensor));
      frame->values[static_cast<size_t>(overridable[i].first)] = tensor;
    } else {
      std::string known;
      for (const ValueInfo& in : input_infos) known += (known.empty() ? "" : ", ") + in.name;
      return invalid_argument("unknown input '" + name + "'; the model's inputs are: " + known);
    }
  }
  for (size_t i = 0; i < input_values.size(); ++i)
    if (!bound[i])
      return invalid_argument("input '" + input_infos[i].name + "' (" + input_infos[i].type + " " +
                              shape_string(input_infos[i]) + ") is required but was not given");
  for (const auto& [v, default_value] : overridable)
    if (!frame->values[static_cast<size_t>(v)].defined()) frame->values[static_cast<size_t>(v)] = default_value;

  // Per-run messages go out under the run's own level, named by its tag.
  const auto run_severity = static_cast<LogSeverity>(run_options.log_level);
  if (run_severity <= LogSeverity::kVerbose)
    log_message(LogSeverity::kVerbose, run_severity, run_options.run_tag.empty() ? log_id : log_id + "/" + run_options.run_tag,
                "run: " + std::to_string(plan.steps.size()) + " steps");

  // Outputs wanted on a device (IoBinding): their final copy to the host is
  // skipped when the route planned at creation ends on that device. Plain
  // runs pass no devices and allocate nothing here.
  std::vector<ValueId> device_source;
  std::vector<int> skipped;  // step indices
  if (!device_outputs.empty()) device_source.assign(wanted.size(), kNoValue);
  for (size_t k = 0; k < wanted.size() && k < device_outputs.size(); ++k) {
    if (device_outputs[k].is_cpu()) continue;
    const auto j = static_cast<size_t>(std::find(graph.outputs.begin(), graph.outputs.end(), wanted[k]) - graph.outputs.begin());
    if (j >= output_routes.size()) continue;  // not a graph output: nothing to skip
    const DeviceOutputRoute& route = output_routes[j];
    if (route.step < 0 || route.device != device_outputs[k]) continue;
    device_source[k] = route.source;
    skipped.push_back(route.step);
  }
  ExecuteOptions execute;
  execute.skipped_steps = skipped;
  execute.profiler = options.enable_profiling ? &profiler : nullptr;
  execute.log_id = log_id;
  execute.log_severity = log_severity;
  SY_RETURN_IF_ERROR(execute_plan(graph, plan, *frame, chain, pool.get(), run_options, execute));

  std::vector<Tensor> results;
  results.reserve(wanted.size());
  // Computed at creation for the common request, every output.
  std::vector<size_t> named_first_request;
  if (!output_names.empty()) named_first_request = first_requests(wanted);
  const std::vector<size_t>& first_request = output_names.empty() ? output_first_request : named_first_request;
  for (size_t k = 0; k < wanted.size(); ++k) {
    const ValueId v = wanted[k];
    const ValuePlan& vp = plan.values[static_cast<size_t>(v)];
    const size_t earlier = first_request[k];
    const Device where = k < device_outputs.size() ? device_outputs[k] : kCpuDevice;
    if (!where.is_cpu()) {
      // In memory of its own on the device: the frame's buffers are reused.
      const Tensor& src = device_source[k] != kNoValue ? frame->values[static_cast<size_t>(device_source[k])]
                                                         : frame->values[static_cast<size_t>(v)];
      const Tensor& value = src.defined() ? src : plan.constants[static_cast<size_t>(v)];
      // Sequences and optionals live in host memory only (their kernels are
      // the CPU's); a device copy of one would be a tensor of nothing.
      if (!value.is_tensor())
        return invalid_argument("output '" + graph.values[static_cast<size_t>(v)].name + "' is " + value.describe() +
                                ", which cannot be put in " + where.to_string() +
                                " memory; bind it to the host (cpu) instead");
      SY_ASSIGN_OR_RETURN(Tensor t, allocate_on(where, value.dtype(), value.shape()));
      SY_RETURN_IF_ERROR(copy_between(value, t));
      results.push_back(std::move(t));
      continue;
    }
    if (earlier < k) {  // the same output asked for twice: a second copy
      SY_ASSIGN_OR_RETURN(Tensor t, results[earlier].clone());
      results.push_back(std::move(t));
    } else if (vp.storage == ValueStorage::kOutput) {
      results.push_back(std::move(frame->values[static_cast<size_t>(v)]));
      frame->values[static_cast<size_t>(v)] = Tensor();
      // As for an input passed straight through: no result aliases a feed.
      bool shared = false;
      for (size_t f = 0; results_may_share_feeds && !shared && f < feeds.size(); ++f)
        shared = shares_bytes(results.back(), feeds[f].second);
      if (shared) {
        SY_ASSIGN_OR_RETURN(Tensor t, results.back().clone());
        results.back() = std::move(t);
      }
    } else if (vp.storage == ValueStorage::kConstant) {
      SY_ASSIGN_OR_RETURN(Tensor t, plan.constants[static_cast<size_t>(v)].clone());
      results.push_back(std::move(t));
    } else {
      // A graph input passed straight through: copy, so the caller's
      // buffer is never aliased by a result.
      SY_ASSIGN_OR_RETURN(Tensor t, frame->values[static_cast<size_t>(v)].clone());
      results.push_back(std::move(t));
    }
  }
  return results;
}

}  // namespace sy
