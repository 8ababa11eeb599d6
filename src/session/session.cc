#include "switchyard/session.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <new>
#include <thread>

#include "core/bool_bytes.h"
#include "core/environment.h"
#include "core/json_string.h"
#include "model/loader.h"
#include "model/resolve.h"
#include "model/saver.h"
#include "optimizer/optimizer.h"
#include "partition/assignment_report.h"
#include "partition/fallback_policy.h"
#include "providers/provider_factory.h"
#include "session/session_impl.h"

namespace sy {
namespace {

std::atomic<int> g_session_counter{0};

// Runs the body of a public API function so that no C++ exception leaves
// it: the API promises a Status, and an exception crossing into a caller
// that expects none (the Python module, a C program through a shim) ends
// the process. std::bad_alloc (a std::vector growing under a memory limit)
// becomes OutOfMemory; anything else is a bug and becomes Internal with
// its what(). `what()` says what the call was doing; it is called only
// when something was thrown, so Session::run builds no string per call.
template <typename What, typename Body>
auto at_api_boundary(What&& what, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory, "out of memory (std::bad_alloc) while " + std::string(what()));
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, "unexpected exception while " + std::string(what()) + ": " + e.what());
  } catch (...) {
    return Status(StatusCode::kInternal, "unexpected exception of unknown type while " + std::string(what()));
  }
}

// The most threads one setting may ask for. Threads beyond the hardware's
// only add switching, and each costs a stack (8 MiB of address space by
// default) and a process table entry: 100000 of them exhaust the machine.
// Four times the hardware threads leaves room for deliberate
// oversubscription; the floor keeps small machines and containers usable
// for tests that want a fixed count; the cap bounds big ones.
int max_threads_per_option() { return std::clamp(4 * ThreadPool::hardware_threads(), 64, 1024); }

Status check_thread_option(const char* option, int value) {
  if (value < 0)
    return invalid_argument(std::string("SessionOptions.") + option + " is " + std::to_string(value) +
                            "; it must be >= 0 (0: one thread per core)");
  const int limit = max_threads_per_option();
  if (value > limit)
    return invalid_argument(std::string("SessionOptions.") + option + " is " + std::to_string(value) +
                            ", more than the limit of " + std::to_string(limit) + " (4 x the " +
                            std::to_string(ThreadPool::hardware_threads()) +
                            " hardware threads, at least 64, at most 1024); more threads than that only slow a run "
                            "and can exhaust the system's threads");
  return ok_status();
}

// Options checked before anything is loaded or started; the external data
// mode they give is what the loader needs.
Result<ExternalDataMode> check_session_options(const SessionOptions& options) {
  SY_RETURN_IF_ERROR(check_thread_option("intra_op_threads", options.intra_op_threads));
  SY_RETURN_IF_ERROR(check_thread_option("inter_op_threads", options.inter_op_threads));
  return external_data_mode_from_config(options.config);
}

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

ValueInfo make_value_info(const Value& v) {
  ValueInfo info;
  info.name = v.name;
  info.dtype = v.type.dtype;
  info.type = v.type.type_string();
  info.has_shape = v.type.has_shape;
  for (const Dim& d : v.type.dims) info.shape.push_back({d.value, d.symbol});
  return info;
}


// The environment turning a provider off, as a reason (empty when it does not).
std::string disabled_by_environment(const ExecutionProvider& provider) {
  const std::string setting = provider_disabled_by(provider.name(), provider.short_name());
  return setting.empty() ? setting : "disabled by the environment variable " + setting;
}

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

}  // namespace

// ---- creation ---------------------------------------------------------------

// Frees the bytes of constants no step reads at run time: weights every
// consumer prepacked into a layout of its own (MatMul, Gemm, Conv), and
// host originals of weights already copied to a device. Without this the
// session holds each such weight twice. A prepacked input keeps its shape
// (kernels still check it) with no data behind it. The partitioner has
// already dropped most of the prepacked ones while it created kernels (to
// keep creation's peak down); what is left here is the device-copy case.
void release_unread_constants(Session::Impl& s, Graph& graph) {
  std::vector<int> reads(graph.values.size(), 0), shape_only_reads(graph.values.size(), 0);
  for (const PlanStep& step : s.plan.steps) {
    const auto node = static_cast<size_t>(step.node);
    const uint64_t prepacked = node < s.partition.prepacked.size() ? s.partition.prepacked[node] : 0;
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const ValueId v = step.inputs[i];
      if (v == kNoValue) continue;
      ++reads[static_cast<size_t>(v)];
      if (i < 64 && (prepacked >> i & 1)) ++shape_only_reads[static_cast<size_t>(v)];
    }
    for (ValueId v : step.node_ptr->implicit_inputs)
      if (v != kNoValue) ++reads[static_cast<size_t>(v)];
  }
  for (ValueId out : graph.outputs) ++reads[static_cast<size_t>(out)];
  for (size_t v = 0; v < s.plan.constants.size() && v < reads.size(); ++v) {
    Tensor& t = s.plan.constants[v];
    if (!t.is_tensor() || !t.defined() || t.raw_data() == nullptr || reads[v] != shape_only_reads[v]) continue;
    if (s.plan.values[v].storage != ValueStorage::kConstant) continue;
    t = Tensor::view(t.dtype(), t.shape(), nullptr, t.device());
    graph.initializers.erase(static_cast<ValueId>(v));
  }
}

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

Result<std::unique_ptr<Session::Impl>> Session::Impl::create(Model model, const SessionOptions& options) {
  auto s = std::make_unique<Impl>();
  s->options = options;
  s->log_id = options.log_id.empty() ? "session" + std::to_string(g_session_counter.fetch_add(1))
                                     : options.log_id;
  s->log_severity = static_cast<LogSeverity>(options.log_level);
  if (env_flag("SWITCHYARD_STRICT")) s->options.fallback = FallbackPolicy::strict();
  const std::string where = model.path.empty() ? "model" : model.path;
  Graph& graph = *model.graph;

  // Overridable initializers are inputs with a default value: they must not
  // be folded or prepacked as constants, nor shape inference use their
  // default values.
  for (size_t v = 0; v < graph.values.size(); ++v) {
    Value& value = graph.values[v];
    if (!(value.is_graph_input && value.is_initializer)) continue;
    auto it = graph.initializers.find(static_cast<ValueId>(v));
    if (it == graph.initializers.end()) continue;
    s->overridable.emplace_back(static_cast<ValueId>(v), it->second);
    s->overridable_infos.push_back(make_value_info(value));
    graph.initializers.erase(it);
    value.is_initializer = false;
  }
  SY_ASSIGN_OR_RETURN(const ResolveOptions resolve_options, resolve_options_from_config(options.config));
  SY_RETURN_IF_ERROR(resolve(graph, resolve_options).with_context(where));

  // Metadata describes the model as given, before any rewriting.
  for (ValueId v : graph.inputs) s->input_infos.push_back(make_value_info(graph.values[static_cast<size_t>(v)]));
  for (ValueId v : graph.outputs) s->output_infos.push_back(make_value_info(graph.values[static_cast<size_t>(v)]));

  // Generic passes, on the whole graph; each provider's own rewrites run
  // after placement, below.
  SY_RETURN_IF_ERROR(optimize(graph, options.optimization_level).with_context(where));

  // The provider chain. CPU is always the last resort.
  std::vector<ProviderRequest> requests = options.providers;
  if (requests.empty()) requests.push_back({"cpu", {}});
  bool has_cpu = false;
  for (const ProviderRequest& r : requests) {
    SY_ASSIGN_OR_RETURN(std::string name, canonical_provider_name(r.name));
    for (const std::string& seen : s->requested)
      if (seen == name) return invalid_argument("provider " + name + " is listed twice");
    s->requested.push_back(name);
    SY_ASSIGN_OR_RETURN(auto provider, create_provider(name, r.options));
    if (const std::string why = disabled_by_environment(*provider); !why.empty()) {
      Availability off;
      off.available = false;
      off.reason = why;
      off.fix = "unset it to use " + name;
      provider = make_unavailable_provider(provider->name(), provider->short_name(), off);
    }
    const Availability a = provider->availability();
    if (!a.available) {
      SY_RETURN_IF_ERROR(apply_policy(s->options.fallback.unavailable_provider,
                                      "requested provider " + name + " is not available: " + a.reason +
                                          (a.fix.empty() ? "" : "; fix: " + a.fix) +
                                          "; its nodes fall through to the next provider",
                                      s->log_severity, s->log_id, StatusCode::kUnavailable));
    }
    if (name == "CPUExecutionProvider") has_cpu = true;
    s->providers.push_back(std::move(provider));
  }
  if (!has_cpu) {
    SY_ASSIGN_OR_RETURN(auto cpu, create_provider("CPUExecutionProvider", {}));
    s->providers.push_back(std::move(cpu));
  }
  for (auto& p : s->providers) {
    s->chain.push_back(p.get());
    s->provider_allocators.push_back(p->allocator());
  }

  PartitionOptions partition_options;
  partition_options.min_partition_size = options.min_partition_size;
  SY_ASSIGN_OR_RETURN(Placement placement, place_nodes(graph, s->chain, partition_options));
  SY_RETURN_IF_ERROR(rewrite_placed_nodes(graph, s->chain, options.optimization_level).with_context(where));
  // Written before kernels and copies exist: the copies belong to this
  // session's devices, not to the model. The providers' fused ops are in
  // (com.switchyard), so the saved model needs no optimizing again.
  if (!options.optimized_model_path.empty())
    SY_RETURN_IF_ERROR(save_model(model, graph, options.optimized_model_path, s->overridable)
                           .with_context("writing the optimized model to " + options.optimized_model_path));
  SY_ASSIGN_OR_RETURN(s->partition, create_placed_kernels(graph, s->chain, std::move(placement)));
  SY_ASSIGN_OR_RETURN(s->plan, build_execution_plan(graph, s->partition, s->chain, s->kernels));
  release_unread_constants(*s, graph);
  // Placement limits first: when one is set, its message is the precise one.
  s->placement = summarize_placement(graph, s->partition, s->chain);
  for (const std::string& broken : broken_placement_limits(s->placement, s->options, s->chain[0]->name()))
    SY_RETURN_IF_ERROR(apply_policy(placement_limit_action(s->options.fallback), "placement limit broken: " + broken,
                                    s->log_severity, s->log_id));

  // The assignment report, and the fall-through warning: nodes that an
  // available provider ahead of their own declined.
  s->assignment = node_assignments(graph, s->partition, s->chain);
  if (const std::string fell = fall_through_message(graph, s->partition, s->chain); !fell.empty())
    SY_RETURN_IF_ERROR(apply_policy(s->options.fallback.node_fallthrough, fell, s->log_severity, s->log_id));

  s->profiler.start();
  const int threads = options.intra_op_threads > 0 ? options.intra_op_threads : ThreadPool::hardware_threads();
  Result<std::unique_ptr<ThreadPool>> pool = ThreadPool::create(threads);
  if (!pool.ok()) return pool.status().with_context("starting the session's thread pool");
  s->pool = std::move(pool).value();

  for (ValueId v : graph.inputs) s->input_values.push_back(v);
  for (size_t i = 0; i < s->input_infos.size(); ++i) s->input_index.emplace(s->input_infos[i].name, i);
  for (size_t i = 0; i < s->overridable_infos.size(); ++i) s->overridable_index.emplace(s->overridable_infos[i].name, i);
  for (ValueId v : graph.outputs) s->output_value.emplace(graph.values[static_cast<size_t>(v)].name, v);
  s->output_first_request = first_requests(graph.outputs);
  plan_io_binding_routes(*s, graph);

  ModelMetadata& md = s->metadata;
  md.producer_name = model.producer_name;
  md.producer_version = model.producer_version;
  md.graph_name = graph.name;
  md.domain = model.domain;
  md.description = model.doc_string;
  md.graph_description = graph.doc_string;
  md.version = model.model_version;
  md.ir_version = model.ir_version;
  md.opsets = model.opsets;
  md.custom_metadata = model.metadata;
  s->model = std::move(model);
  return s;
}

// ---- running ----------------------------------------------------------------

// Sequences and optionals: the kind must match the declared type, and a
// sequence's element type its declared element type.
Status check_container_feed(const ValueInfo& info, const ValueType& type, const Tensor& feed) {
  const ValueType* t = &type;
  if (t->kind == ValueType::Kind::kOptional) {
    if (feed.kind() == ValueKind::kNone) return ok_status();
    if (t->element) t = t->element.get();
  }
  if (t->kind == ValueType::Kind::kSequence) {
    if (feed.kind() != ValueKind::kSequence)
      return invalid_argument("input '" + info.name + "': expected " + info.type + ", got " + feed.describe());
    const DataType want = t->element ? t->element->dtype : DataType::kUndefined;
    for (const Tensor& item : feed.items()) {
      if (want != DataType::kUndefined && item.dtype() != want)
        return invalid_argument("input '" + info.name + "': expected " + info.type + ", got an element of type " +
                                tensor_type_string(item.dtype()));
      SY_RETURN_IF_ERROR(check_bool_bytes(info.name, item));
    }
    return ok_status();
  }
  if (feed.kind() != ValueKind::kTensor)
    return invalid_argument("input '" + info.name + "': expected " + info.type + ", got " + feed.describe());
  return ok_status();
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

ExecutionProvider* Session::Impl::provider_for(Device d) const {
  for (ExecutionProvider* p : chain)
    if (p->device() == d) return p;
  return nullptr;
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
    for (Output& o : outputs_) {
      if (o.name == name) {
        o = {name, device, Tensor()};
        return ok_status();
      }
    }
    outputs_.push_back({name, device, Tensor()});
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
    for (Output& o : outputs_) {
      if (o.name == name) {
        o = {name, preallocated.device(), preallocated};
        return ok_status();
      }
    }
    outputs_.push_back({name, preallocated.device(), preallocated});
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

Result<Tensor> Session::allocate_tensor(DataType dtype, const Shape& shape, Device device) const {
  return at_api_boundary([] { return "allocating a tensor"; }, [&] { return impl_->allocate_on(device, dtype, shape); });
}

Status Session::copy_tensor(const Tensor& src, Tensor& dst) const {
  return at_api_boundary([] { return "copying a tensor"; }, [&] { return impl_->copy_between(src, dst); });
}

// ---- the public Session -------------------------------------------------------

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::create(const std::string& model_path, const SessionOptions& options) {
  return at_api_boundary([&] { return "creating a session for " + model_path; }, [&]() -> Result<std::unique_ptr<Session>> {
    SY_ASSIGN_OR_RETURN(const ExternalDataMode mode, check_session_options(options));
    SY_ASSIGN_OR_RETURN(Model model, load_model(model_path, mode));
    SY_ASSIGN_OR_RETURN(auto impl, Impl::create(std::move(model), options));
    return std::unique_ptr<Session>(new Session(std::move(impl)));
  });
}

Result<std::unique_ptr<Session>> Session::create_from_bytes(const void* data, size_t size,
                                                            const SessionOptions& options) {
  return at_api_boundary([] { return "creating a session from model bytes"; }, [&]() -> Result<std::unique_ptr<Session>> {
    // Bytes carry no external data, but a bad mode is still an error.
    SY_RETURN_IF_ERROR(check_session_options(options).status());
    SY_ASSIGN_OR_RETURN(Model model, load_model_from_bytes(data, size));
    SY_ASSIGN_OR_RETURN(auto impl, Impl::create(std::move(model), options));
    return std::unique_ptr<Session>(new Session(std::move(impl)));
  });
}

const std::vector<ValueInfo>& Session::inputs() const { return impl_->input_infos; }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->output_infos; }
const std::vector<ValueInfo>& Session::overridable_initializers() const { return impl_->overridable_infos; }
const ModelMetadata& Session::metadata() const { return impl_->metadata; }
const std::vector<NodeAssignment>& Session::assignment() const { return impl_->assignment; }
const PlacementSummary& Session::placement() const { return impl_->placement; }
std::vector<std::string> Session::requested_providers() const { return impl_->requested; }

std::vector<std::string> Session::providers() const {
  std::vector<std::string> used;
  for (size_t p = 0; p < impl_->chain.size(); ++p) {
    bool runs_something = false;
    for (int np : impl_->partition.node_provider)
      if (np == static_cast<int>(p)) runs_something = true;
    if (runs_something) used.push_back(impl_->chain[p]->name());
  }
  if (used.empty()) used.push_back("CPUExecutionProvider");  // a model with no nodes
  return used;
}

std::string Session::assignment_report() const {
  std::string out;
  for (const NodeAssignment& a : impl_->assignment) {
    out += a.node_name + " (" + a.op_type + ") -> " + a.provider + "\n";
    for (const ProviderDecline& d : a.declined) out += "    declined by " + d.provider + ": " + d.reason + "\n";
  }
  return out;
}

Result<std::vector<Tensor>> Session::run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                         const std::vector<std::string>& output_names,
                                         const RunOptions& run_options) const {
  return at_api_boundary([] { return "running the session"; }, [&] { return impl_->run(feeds, output_names, run_options); });
}

Result<std::string> Session::end_profiling() {
  return at_api_boundary([] { return "writing the profile"; }, [&] { return write_profile(); });
}

Result<std::string> Session::write_profile() {
  if (!impl_->options.enable_profiling) return std::string();
  return impl_->profiler.write_trace(impl_->options.profile_file_prefix, impl_->chain);
}

std::vector<Session::ProfileRecord> Session::profile_records() const { return impl_->profiler.records(impl_->chain); }

size_t Session::profile_record_count() const { return impl_->profiler.count(); }

std::vector<std::string> available_providers() {
  std::vector<std::string> out;
  for (const ProviderInfo& p : known_providers()) {
    if (!p.built) continue;
    auto provider = create_provider(p.name, {});
    if (provider.ok() && (*provider)->availability().available) out.push_back(p.name);
  }
  return out;
}

std::vector<std::string> all_providers() {
  std::vector<std::string> out;
  for (const ProviderInfo& p : known_providers()) out.push_back(p.name);
  return out;
}

const char* version_string() { return SWITCHYARD_VERSION; }

std::string shape_string(const ValueInfo& info) {
  if (!info.has_shape) return "[?]";
  std::string s = "[";
  for (size_t i = 0; i < info.shape.size(); ++i) {
    if (i) s += ",";
    const DimInfo& d = info.shape[i];
    s += d.value >= 0 ? std::to_string(d.value) : (d.symbol.empty() ? "?" : d.symbol);
  }
  return s + "]";
}

void set_log_function(LogFunction function) {
  if (!function) {
    set_log_callback(nullptr);
    return;
  }
  set_log_callback([function = std::move(function)](LogSeverity severity, std::string_view log_id,
                                                    std::string_view message) {
    function(static_cast<LogLevel>(severity), std::string(log_id), std::string(message));
  });
}

}  // namespace sy
