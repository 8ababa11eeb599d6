#include "partition/partitioner.h"

#include <map>

#include "model/fingerprint.h"
#include "optimizer/provider_rewrites.h"

namespace sy {
namespace {

class CopyKernel final : public Kernel {
 public:
  CopyKernel(const ExecutionProvider* provider, bool to_host) : provider_(provider), to_host_(to_host) {}
  Status run(KernelContext& ctx) const override {
    const Tensor* src = ctx.input(0);
    // A feed bound in this device's memory (IoBinding) is used as it is.
    if (!to_host_ && src->device() == provider_->device()) return ctx.set_output(0, *src);
    SY_ASSIGN_OR_RETURN(Tensor * dst, ctx.allocate_output(0, src->dtype(), src->shape()));
    return to_host_ ? provider_->copy_to_host(*src, *dst) : provider_->copy_from_host(*src, *dst);
  }

 private:
  const ExecutionProvider* provider_;
  bool to_host_;
};

// Drops a constant's data as soon as every node reading it has its final
// kernel, each of them on the host and having prepacked the constant (so it
// reads only the shape). Without this a weight and its packed copy both stay
// in memory until the last kernel is created, and session creation peaks at
// twice the model's weights (BERT: 775 MiB instead of 440).
class EarlyConstantRelease {
 public:
  EarlyConstantRelease(Graph& graph, std::span<const NodeId> order)
      : graph_(graph), unsettled_(graph.values.size(), 0), pinned_(graph.values.size(), false) {
    for (NodeId id : order) {
      const Node& node = graph.nodes[static_cast<size_t>(id)];
      for (ValueId v : node.inputs)
        if (v != kNoValue) ++unsettled_[static_cast<size_t>(v)];
      // Subgraphs read these when the node runs.
      for (ValueId v : node.implicit_inputs)
        if (v != kNoValue) pinned_[static_cast<size_t>(v)] = true;
    }
    for (ValueId v : graph.outputs) pinned_[static_cast<size_t>(v)] = true;
  }

  // `node`'s kernel is final. A constant read by a device provider stays:
  // the copy to the device is made from it after partitioning.
  void settle(const Node& node, uint64_t prepacked, bool on_host) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (v == kNoValue) continue;
      const auto k = static_cast<size_t>(v);
      if (!(on_host && i < 64 && (prepacked >> i & 1))) pinned_[k] = true;
      if (--unsettled_[k] > 0 || pinned_[k]) continue;
      auto it = graph_.initializers.find(v);
      if (it == graph_.initializers.end() || it->second.raw_data() == nullptr || !it->second.is_tensor()) continue;
      it->second = Tensor::view(it->second.dtype(), it->second.shape(), nullptr, it->second.device());
    }
  }

 private:
  Graph& graph_;
  std::vector<int> unsettled_;  // reads by nodes whose kernel is not final yet
  std::vector<bool> pinned_;    // some reader needs the data itself
};

std::string join_declines(const std::vector<Decline>& declines, std::span<ExecutionProvider* const> providers) {
  std::string s;
  for (const Decline& d : declines) {
    if (!s.empty()) s += "; ";
    s += providers[static_cast<size_t>(d.provider)]->short_name() + ": " + d.reason;
  }
  return s;
}

bool is_small_integer_constant(const Graph& graph, ValueId v) {
  const Tensor* t = graph.constant(v);
  return t != nullptr && t->is_tensor() && (t->dtype() == DataType::kInt64 || t->dtype() == DataType::kInt32) &&
         t->num_elements() <= 64;
}

bool is_integer_or_bool(DataType t) { return t == DataType::kInt64 || t == DataType::kInt32 || t == DataType::kBool; }

// Ops that read only their input's shape, never its bytes: a CPU node of
// this kind takes a device tensor without a copy.
bool reads_only_shape(const Node& node, size_t input) {
  return node.domain.empty() && input == 0 && (node.op_type == "Shape" || node.op_type == "Size");
}

}  // namespace

std::vector<bool> shape_computation_nodes(const Graph& graph, std::span<const NodeId> order) {
  std::vector<bool> shape_value(graph.values.size(), false);
  std::vector<bool> is_shape_node(graph.nodes.size(), false);
  for (NodeId id : order) {
    const Node& node = graph.nodes[static_cast<size_t>(id)];
    bool shape_like = node.domain.empty() && (node.op_type == "Shape" || node.op_type == "Size");
    if (!shape_like) {
      bool any_shape_input = false, all_small = true;
      for (ValueId v : node.inputs) {
        if (v == kNoValue) continue;
        if (shape_value[static_cast<size_t>(v)]) any_shape_input = true;
        else if (!is_small_integer_constant(graph, v)) all_small = false;
      }
      bool integer_outputs = !node.outputs.empty();
      for (ValueId v : node.outputs)
        if (v != kNoValue && !is_integer_or_bool(graph.values[static_cast<size_t>(v)].type.dtype)) integer_outputs = false;
      shape_like = any_shape_input && all_small && integer_outputs && node.implicit_inputs.empty();
    }
    if (!shape_like) continue;
    is_shape_node[static_cast<size_t>(id)] = true;
    for (ValueId v : node.outputs)
      if (v != kNoValue) shape_value[static_cast<size_t>(v)] = true;
  }
  return is_shape_node;
}

std::unique_ptr<Kernel> make_copy_kernel(const ExecutionProvider* device_provider, bool to_host) {
  return std::make_unique<CopyKernel>(device_provider, to_host);
}

namespace {

// The shape-arithmetic rule: a provider that keeps shape math on the host
// is never offered those nodes; the decline is by design.
Decline shape_math_decline(size_t p) {
  return {static_cast<int>(p),
          "shape computation: it stays on the CPU by design (its small integer result feeds shape arguments "
          "read on the host)",
          true};
}

bool has_subgraph(const Node& node) {
  for (const Attribute& a : node.attributes)
    if (a.g != nullptr || !a.graphs.empty()) return true;
  return false;
}

// A device provider that does not run a control-flow node itself leaves it
// on the host, where it runs its bodies, whose nodes are placed on the
// providers one by one like the main graph's: no work falls back with it.
Decline control_flow_decline(size_t p, const std::string& reason) {
  return {static_cast<int>(p),
          "control flow: it runs on the host by design, and its bodies' nodes are placed one by one (" + reason + ")",
          true};
}

Status no_provider_error(const Graph& graph, NodeId id, size_t more, const std::vector<Decline>& declines,
                         std::span<ExecutionProvider* const> providers) {
  const Node& node = graph.nodes[static_cast<size_t>(id)];
  const std::string and_more = more > 0 ? " (and " + std::to_string(more) + " more nodes)" : "";
  return not_implemented("no provider can run " + node.describe() + and_more + ": " +
                         join_declines(declines, providers));
}

}  // namespace

Result<Placement> place_nodes(Graph& graph, std::span<ExecutionProvider* const> providers,
                              const PartitionOptions& options) {
  Placement placement;
  SY_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.topological_order());
  const size_t n = graph.nodes.size();
  placement.declines.resize(n);
  for (Node& node : graph.nodes) node.placed_on = -1;
  // Only device plugins keep shape math on the host; a CPU-only chain skips the analysis.
  bool any_device = false;
  for (ExecutionProvider* p : providers) any_device = any_device || p->keeps_shape_math_on_host();
  placement.shape_nodes = any_device ? shape_computation_nodes(graph, order) : std::vector<bool>(n, false);

  std::vector<NodeId> remaining = order;
  for (size_t p = 0; p < providers.size() && !remaining.empty(); ++p) {
    // Shape arithmetic stays on the host by design: its int64 results feed
    // shape arguments that kernels read on the host, so computing it on a
    // device would only add copies there and back.
    std::vector<NodeId> offered;
    for (NodeId id : remaining) {
      if (providers[p]->keeps_shape_math_on_host() && placement.shape_nodes[static_cast<size_t>(id)])
        placement.declines[static_cast<size_t>(id)].push_back(shape_math_decline(p));
      else
        offered.push_back(id);
    }
    for (NodeSupport& a : providers[p]->capability(graph, offered)) {
      const auto id = static_cast<size_t>(a.node);
      if (a.supported) {
        graph.nodes[id].placed_on = static_cast<int>(p);
      } else if (has_subgraph(graph.nodes[id]) && !providers[p]->device().is_cpu()) {
        placement.declines[id].push_back(control_flow_decline(p, a.reason));
      } else {
        placement.declines[id].push_back({static_cast<int>(p), std::move(a.reason)});
      }
    }
    // Runs (in execution order) of this provider's nodes that are too short
    // go on to the next provider. Nothing was created for them yet.
    if (options.min_partition_size > 1 && p + 1 < providers.size()) {
      auto on_p = [&](size_t k) { return graph.nodes[static_cast<size_t>(order[k])].placed_on == static_cast<int>(p); };
      size_t start = 0;
      while (start < order.size()) {
        if (!on_p(start)) {
          ++start;
          continue;
        }
        size_t end = start;
        while (end < order.size() && on_p(end)) ++end;
        const auto length = static_cast<int>(end - start);
        if (length < options.min_partition_size) {
          for (size_t k = start; k < end; ++k) {
            const auto id = static_cast<size_t>(order[k]);
            graph.nodes[id].placed_on = -1;
            placement.declines[id].push_back(
                {static_cast<int>(p), "its partition would have " + std::to_string(length) +
                                          " node(s), fewer than min_partition_size " +
                                          std::to_string(options.min_partition_size)});
          }
        }
        start = end;
      }
    }
    std::vector<NodeId> next;
    for (NodeId id : remaining)
      if (graph.nodes[static_cast<size_t>(id)].placed_on < 0) next.push_back(id);
    remaining = std::move(next);
  }
  if (!remaining.empty())
    return no_provider_error(graph, remaining[0], remaining.size() - 1,
                             placement.declines[static_cast<size_t>(remaining[0])], providers);
  return placement;
}

Status rewrite_placed_nodes(Graph& graph, std::span<ExecutionProvider* const> providers, OptimizationLevel level,
                            PassStats* stats) {
  // What capability() promised, at every level.
  for (size_t p = 0; p < providers.size(); ++p)
    SY_RETURN_IF_ERROR(providers[p]->adapt_placed_nodes(graph, static_cast<int>(p)).with_context(providers[p]->name()));
  if (level == OptimizationLevel::kDisableAll) return ok_status();
  for (size_t p = 0; p < providers.size(); ++p) {
    const std::vector<std::string> names = providers[p]->rewrites();
    if (names.empty()) continue;
    SY_RETURN_IF_ERROR(run_provider_rewrites(graph, static_cast<int>(p), names, level, stats)
                           .with_context(providers[p]->name() + "'s rewrites"));
  }
  return finish_rewrites(graph, level, stats);
}

namespace {

// Which run of the provider being compiled each node and value belongs to,
// filled once per provider so that describing a run costs its own size.
struct RunMarks {
  std::vector<int> node_run;     // per NodeId: the run's index, -1 outside every run
  std::vector<int> listed_in;    // per ValueId: the run that lists it as an input
};

// The partition made of `run` (number `k`), all placed on one provider:
// its inputs and outputs. False when it cannot be compiled whole (a node
// with a subgraph, which reads outer-scope values the ABI cannot name).
bool describe_partition(const Graph& graph, std::span<const NodeId> run, int k, RunMarks& marks,
                        PartitionToCompile& part) {
  auto inside = [&](NodeId id) {
    const auto i = static_cast<size_t>(id);
    return i < marks.node_run.size() && marks.node_run[i] == k && !graph.nodes[i].removed;
  };
  for (NodeId id : run) {
    const Node& node = graph.nodes[static_cast<size_t>(id)];
    if (!node.implicit_inputs.empty()) return false;
    part.nodes.push_back(id);
    for (ValueId v : node.inputs) {
      if (v == kNoValue || marks.listed_in[static_cast<size_t>(v)] == k) continue;
      const NodeId producer = graph.values[static_cast<size_t>(v)].producer;
      if (producer != kNoNode && inside(producer)) continue;
      marks.listed_in[static_cast<size_t>(v)] = k;
      part.inputs.push_back(v);
    }
  }
  for (NodeId id : run) {
    for (ValueId v : graph.nodes[static_cast<size_t>(id)].outputs) {
      if (v == kNoValue) continue;
      const Value& value = graph.values[static_cast<size_t>(v)];
      bool read_outside = value.is_graph_output;
      for (NodeId c : value.consumers)
        read_outside = read_outside || (!graph.nodes[static_cast<size_t>(c)].removed && !inside(c));
      if (read_outside) part.outputs.push_back(v);
    }
  }
  return !part.outputs.empty();
}

// Offers provider p's partitions (maximal runs of its nodes in execution
// order; a run of a topological order is convex, so nothing outside it
// reads a value inside and feeds one back) to its compile(). A compiled
// run becomes one CompiledPartition node; its kernel goes to `kernels`
// and its nodes stay in the graph, removed, listed in `compiled`.
Status compile_partitions(Graph& graph, ExecutionProvider& provider, int p, std::span<const NodeId> order,
                          std::map<NodeId, CreatedKernel>& kernels, std::map<NodeId, std::vector<NodeId>>& compiled) {
  // Runs of this provider's nodes in `order`: [begin, end) each.
  std::vector<std::pair<size_t, size_t>> runs;
  RunMarks marks{std::vector<int>(graph.nodes.size(), -1), std::vector<int>(graph.values.size(), -1)};
  for (size_t start = 0; start < order.size();) {
    if (graph.nodes[static_cast<size_t>(order[start])].placed_on != p) {
      ++start;
      continue;
    }
    size_t end = start;
    while (end < order.size() && graph.nodes[static_cast<size_t>(order[end])].placed_on == p)
      marks.node_run[static_cast<size_t>(order[end++])] = static_cast<int>(runs.size());
    runs.emplace_back(start, end);
    start = end;
  }
  if (runs.empty()) return ok_status();
  // Model, device, provider build: the parts of the key every run shares.
  const std::string shared_key = graph_fingerprint(graph) + "-" +
                                 Fingerprint().add(provider.device().to_string()).hex() + "-" +
                                 Fingerprint().add(provider.name()).add(provider.version()).hex();
  int index = 0;
  for (size_t k = 0; k < runs.size(); ++k) {
    const std::span<const NodeId> run = order.subspan(runs[k].first, runs[k].second - runs[k].first);
    PartitionToCompile part;
    if (!describe_partition(graph, run, static_cast<int>(k), marks, part)) continue;
    Fingerprint names;
    for (NodeId id : run) names.add(graph.nodes[static_cast<size_t>(id)].name);
    part.cache_key = shared_key + "-" + names.hex();
    Result<CreatedKernel> kernel = provider.compile(graph, part);
    if (!kernel.ok()) {
      if (kernel.status().code() == StatusCode::kNotImplemented) continue;  // a kernel per node instead
      return kernel.status().with_context(provider.name() + " compiling the partition from " +
                                          graph.nodes[static_cast<size_t>(run.front())].describe());
    }
    Node node;
    node.name = provider.short_name() + "_partition_" + std::to_string(index++);
    node.op_type = kCompiledPartitionOp;
    node.domain = kSwitchyardDomain;
    node.since_version = 1;
    node.inputs = part.inputs;
    node.outputs = part.outputs;
    node.placed_on = p;
    for (NodeId id : run) graph.nodes[static_cast<size_t>(id)].removed = true;
    const NodeId id = graph.add_node(std::move(node));
    kernels.emplace(id, std::move(kernel).value());
    compiled.emplace(id, std::vector<NodeId>(run.begin(), run.end()));
  }
  graph.rebuild_links();
  return ok_status();
}

}  // namespace

Result<PartitionResult> create_placed_kernels(Graph& graph, std::span<ExecutionProvider* const> providers,
                                              Placement placement, const CompiledSubgraphMap& subgraphs) {
  PartitionResult result;
  SY_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.topological_order());
  // Providers that build one engine per partition compile theirs first.
  std::map<NodeId, CreatedKernel> compiled_kernels;
  bool any_compiled = false;
  for (size_t p = 0; p < providers.size(); ++p) {
    if (!providers[p]->compiles_partitions()) continue;
    SY_RETURN_IF_ERROR(compile_partitions(graph, *providers[p], static_cast<int>(p), order, compiled_kernels,
                                          result.compiled));
    any_compiled = true;
  }
  if (any_compiled) {
    SY_ASSIGN_OR_RETURN(order, graph.topological_order());
  }
  const size_t n = graph.nodes.size();
  result.node_provider.assign(n, -1);
  result.kernels.resize(n);
  result.declines = std::move(placement.declines);
  result.declines.resize(n);  // nodes the rewrites added have none
  placement.shape_nodes.resize(n, false);
  result.host_inputs.assign(n, 0);
  result.prepacked.assign(n, 0);

  // 1. Kernels, in execution order, one per live node, on the provider it
  // was placed on. Each constant is released as soon as its last reader
  // has its kernel (EarlyConstantRelease). A provider that fails to create
  // a kernel declines the node after all: it goes to the next provider
  // that can run it.
  EarlyConstantRelease release(graph, order);
  for (NodeId id : order) {
    const auto k = static_cast<size_t>(id);
    Node& node = graph.nodes[k];
    size_t p = static_cast<size_t>(node.placed_on);
    if (node.placed_on < 0) return fail(node.describe() + " was not placed");
    if (auto it = compiled_kernels.find(id); it != compiled_kernels.end()) {
      result.node_provider[k] = node.placed_on;
      result.kernels[k] = std::move(it->second.kernel);
      result.host_inputs[k] = it->second.host_inputs;
      release.settle(node, 0, providers[p]->device().is_cpu());
      continue;
    }
    while (true) {
      Result<CreatedKernel> created = providers[p]->create_kernel(graph, id, subgraphs);
      if (created.ok()) {
        result.node_provider[k] = static_cast<int>(p);
        result.kernels[k] = std::move(created->kernel);
        result.host_inputs[k] = created->host_inputs;
        result.prepacked[k] = created->prepacked_inputs;
        break;
      }
      result.declines[k].push_back({static_cast<int>(p), created.status().message()});
      size_t next = p + 1;
      for (; next < providers.size(); ++next) {
        if (providers[next]->keeps_shape_math_on_host() && placement.shape_nodes[k]) {
          result.declines[k].push_back(shape_math_decline(next));
          continue;
        }
        std::vector<NodeSupport> a = providers[next]->capability(graph, std::span<const NodeId>(&id, 1));
        if (!a.empty() && a[0].supported) break;
        result.declines[k].push_back({static_cast<int>(next), a.empty() ? "no answer" : std::move(a[0].reason)});
      }
      if (next == providers.size()) return no_provider_error(graph, id, 0, result.declines[k], providers);
      p = next;
      node.placed_on = static_cast<int>(p);
    }
    release.settle(node, result.prepacked[k], providers[p]->device().is_cpu());
  }

  // 2. Copies where a value is used on another device than where it lives.
  // Graph inputs and initializers live on the host.
  auto device_of_provider = [&](int p) { return providers[static_cast<size_t>(p)]->device(); };
  std::vector<Device> location(graph.values.size(), kCpuDevice);
  for (NodeId id : order) {
    const Node& node = graph.nodes[static_cast<size_t>(id)];
    for (ValueId out : node.outputs)
      if (out != kNoValue) location[static_cast<size_t>(out)] = device_of_provider(result.node_provider[static_cast<size_t>(id)]);
  }
  // provider index owning each non-host device
  std::map<std::pair<int, int>, int> device_owner;
  for (size_t p = 0; p < providers.size(); ++p) {
    const Device d = providers[p]->device();
    if (!d.is_cpu()) device_owner.emplace(std::make_pair(static_cast<int>(d.type), d.id), static_cast<int>(p));
  }
  auto owner_of = [&](Device d) { return device_owner.at({static_cast<int>(d.type), d.id}); };

  // (value, device) -> the value holding its copy there
  std::map<std::tuple<ValueId, int, int>, ValueId> copies;
  std::vector<NodeId> new_order;
  auto add_copy = [&](ValueId src, Device from, Device to, std::vector<NodeId>& emit) -> ValueId {
    const bool to_host = to.is_cpu();
    const Device device_side = to_host ? from : to;
    const int owner = owner_of(device_side);
    Value& sv = graph.values[static_cast<size_t>(src)];
    const std::string copy_name = sv.name + "@" + to.to_string();
    ValueId dst = graph.add_value(copy_name, graph.values[static_cast<size_t>(src)].type);
    Node copy;
    copy.name = "copy_" + copy_name;
    copy.op_type = to_host ? kCopyToHostOp : kCopyFromHostOp;
    copy.domain = kSwitchyardDomain;
    copy.since_version = 1;
    copy.inputs = {src};
    copy.outputs = {dst};
    const NodeId cid = graph.add_node(std::move(copy));
    result.node_provider.push_back(owner);
    result.kernels.push_back(make_copy_kernel(providers[static_cast<size_t>(owner)], to_host));
    result.declines.emplace_back();
    location.push_back(to);
    ++result.num_copies;
    if (graph.constant(src) != nullptr) ++result.num_constant_copies;
    emit.push_back(cid);
    return dst;
  };
  auto copy_to = [&](ValueId v, Device to, std::vector<NodeId>& emit) -> ValueId {
    const Device from = location[static_cast<size_t>(v)];
    if (from == to) return v;
    auto key = std::make_tuple(v, static_cast<int>(to.type), to.id);
    auto it = copies.find(key);
    if (it != copies.end()) return it->second;
    ValueId result_value;
    if (!from.is_cpu() && !to.is_cpu()) {  // device to device goes through the host
      const ValueId host = [&] {
            auto hk = std::make_tuple(v, static_cast<int>(DeviceType::kCpu), 0);
            auto hit = copies.find(hk);
            if (hit != copies.end()) return hit->second;
            ValueId h = add_copy(v, from, kCpuDevice, emit);
            copies[hk] = h;
            return h;
          }();
      result_value = add_copy(host, kCpuDevice, to, emit);
    } else {
      result_value = add_copy(v, from, to, emit);
    }
    copies[key] = result_value;
    return result_value;
  };

  for (NodeId id : order) {
    const Device here = device_of_provider(result.node_provider[static_cast<size_t>(id)]);
    for (size_t i = 0; i < graph.nodes[static_cast<size_t>(id)].inputs.size(); ++i) {
      const ValueId v = graph.nodes[static_cast<size_t>(id)].inputs[i];
      // Shape arguments the kernel reads on the host.
      const Device wanted = i < 64 && (result.host_inputs[static_cast<size_t>(id)] >> i & 1) ? kCpuDevice : here;
      if (v == kNoValue || location[static_cast<size_t>(v)] == wanted) continue;
      if (wanted.is_cpu() && reads_only_shape(graph.nodes[static_cast<size_t>(id)], i) &&
          !location[static_cast<size_t>(v)].is_cpu() &&
          providers[static_cast<size_t>(owner_of(location[static_cast<size_t>(v)]))]->keeps_shape_math_on_host())
        continue;
      const ValueId moved = copy_to(v, wanted, new_order);
      graph.nodes[static_cast<size_t>(id)].inputs[i] = moved;
    }
    // A compiled subgraph takes its outer-scope values in host memory, as
    // its placement assumed (like graph inputs). Its kernel matched them to
    // the body's values by position, so the copy replaces the value in place.
    // (copy_to adds nodes, so no reference into the node is held across it.)
    for (size_t k = 0; k < graph.nodes[static_cast<size_t>(id)].implicit_inputs.size(); ++k) {
      const ValueId v = graph.nodes[static_cast<size_t>(id)].implicit_inputs[k];
      if (v == kNoValue || location[static_cast<size_t>(v)].is_cpu()) continue;
      const ValueId moved = copy_to(v, kCpuDevice, new_order);
      graph.nodes[static_cast<size_t>(id)].implicit_inputs[k] = moved;
    }
    new_order.push_back(id);
  }
  // Graph outputs must end on the host under their own names.
  for (ValueId& out : graph.outputs) {
    if (location[static_cast<size_t>(out)].is_cpu()) continue;
    const std::string name = graph.values[static_cast<size_t>(out)].name;
    graph.rename_value(out, name + "@" + location[static_cast<size_t>(out)].to_string());
    graph.values[static_cast<size_t>(out)].is_graph_output = false;
    const ValueId host = copy_to(out, kCpuDevice, new_order);
    graph.rename_value(host, name);
    graph.values[static_cast<size_t>(host)].is_graph_output = true;
    out = host;
  }
  graph.rebuild_links();
  result.order = std::move(new_order);

  // 3. Partitions: runs of consecutive nodes on one provider.
  for (NodeId id : result.order) {
    const int p = result.node_provider[static_cast<size_t>(id)];
    if (result.partitions.empty() || result.partitions.back().provider != p) result.partitions.push_back({p, {}});
    result.partitions.back().nodes.push_back(id);
  }
  return result;
}

Result<PartitionResult> partition_graph(Graph& graph, std::span<ExecutionProvider* const> providers,
                                        const PartitionOptions& options) {
  SY_ASSIGN_OR_RETURN(Placement placement, place_nodes(graph, providers, options));
  return create_placed_kernels(graph, providers, std::move(placement));
}

}  // namespace sy
