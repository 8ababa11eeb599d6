// Session::Impl::create: the pipeline of DESIGN.md, from a loaded model to
// a session ready to run — resolve, generic passes, the provider chain,
// placement, provider rewrites, kernels, the plan, the placement report
// (partition/assignment_report.h) under the fallback policy
// (partition/fallback_policy.h), the thread pool and the IO metadata.
#include <atomic>
#include <string>

#include "core/environment.h"
#include "model/resolve.h"
#include "model/saver.h"
#include "optimizer/optimizer.h"
#include "partition/assignment_report.h"
#include "partition/fallback_policy.h"
#include "providers/provider_factory.h"
#include "session/compiled_subgraph.h"
#include "session/session_impl.h"

namespace sy {
namespace {

std::atomic<int> g_session_counter{0};

ValueInfo make_value_info(const Value& v) {
  ValueInfo info;
  info.name = v.name;
  info.dtype = v.type.dtype;
  info.type = v.type.type_string();
  // optional(seq(tensor(float))): optional, then sequence, then float.
  const ValueType* t = &v.type;
  if (t->kind == ValueType::Kind::kOptional && t->element) {
    info.optional = true;
    t = t->element.get();
  }
  if (t->kind == ValueType::Kind::kSequence && t->element) {
    info.sequence = true;
    t = t->element.get();
  }
  info.element_dtype = t->dtype;
  info.has_shape = v.type.has_shape;
  for (const Dim& d : v.type.dims) info.shape.push_back({d.value, d.symbol});
  return info;
}

// The environment turning a provider off, as a reason (empty when it does not).
std::string disabled_by_environment(const ExecutionProvider& provider) {
  const std::string setting = provider_disabled_by(provider.name(), provider.short_name());
  return setting.empty() ? setting : "disabled by the environment variable " + setting;
}

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

}  // namespace

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

  for (const Value& value : graph.values)
    s->results_may_share_feeds |= !value.type.is_tensor() && value.type.kind != ValueType::Kind::kUnknown;
  for (const Node& node : graph.nodes)
    for (const Attribute& a : node.attributes) s->results_may_share_feeds |= a.g != nullptr || !a.graphs.empty();

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
  // Subgraphs (If branches) go through the same steps, once, before the
  // kernels of the nodes that run them, which get them at creation.
  SubgraphCompileOptions subgraph_options;
  subgraph_options.level = options.optimization_level;
  subgraph_options.partition = partition_options;
  CompiledSubgraphMap subgraph_map;
  SY_RETURN_IF_ERROR(compile_subgraphs(graph, s->chain, s->provider_allocators, subgraph_options, "", s->subgraphs,
                                       subgraph_map)
                         .with_context(where));
  SY_ASSIGN_OR_RETURN(s->partition, create_placed_kernels(graph, s->chain, std::move(placement), subgraph_map));
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
  // Nodes inside subgraphs follow, named with their nesting:
  // "If_0/then_branch/Add_3".
  for (const auto& sub : s->subgraphs)
    for (NodeAssignment& a : node_assignments(*sub->graph, sub->partition, s->chain)) {
      a.node_name = sub->name + "/" + a.node_name;
      s->assignment.push_back(std::move(a));
    }
  std::vector<PlacedGraph> placed{{&graph, &s->partition}};
  for (const auto& sub : s->subgraphs) placed.push_back({sub->graph, &sub->partition});
  if (const std::string fell = fall_through_message(placed, s->chain); !fell.empty())
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

}  // namespace sy
