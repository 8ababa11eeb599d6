// Constant folding: a node whose inputs are all known at load time runs
// once, now, on the CPU, and its outputs become constants. PyTorch exports
// carry many such nodes (shape arithmetic on static shapes, weight
// transposes), and folding them removes work from every run.
#include <algorithm>
#include <string_view>

#include "optimizer/optimizer.h"
#include "providers/cpu/cpu_provider.h"
#include "providers/owning_kernel_context.h"

namespace sy {
namespace {

bool is_nondeterministic(const Node& node) {
  static constexpr std::string_view kRandom[] = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                 "RandomUniformLike", "Multinomial", "Bernoulli"};
  for (std::string_view op : kRandom)
    if (node.op_type == op) return true;
  return false;
}

bool has_subgraph(const Node& node) {
  for (const Attribute& a : node.attributes)
    if (a.g || !a.graphs.empty()) return true;
  return false;
}

// Shape(x) where x's shape is fully static.
bool fold_static_shape(Graph& graph, Node& node) {
  if (node.op_type != "Shape" || !node.domain.empty() || !node.has_input(0)) return false;
  const ValueType& t = graph.values[static_cast<size_t>(node.inputs[0])].type;
  if (!t.is_static()) return false;
  auto rank = static_cast<int64_t>(t.rank());
  int64_t start = node.attr_int("start", 0);
  int64_t end = node.attr_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  auto result = Tensor::allocate(DataType::kInt64, Shape{end - start});
  if (!result.ok()) return false;
  for (int64_t i = start; i < end; ++i) result->data<int64_t>()[i - start] = t.dims[static_cast<size_t>(i)].value;
  const ValueId out = node.outputs[0];
  graph.initializers[out] = std::move(result).value();
  graph.values[static_cast<size_t>(out)].is_initializer = true;
  node.removed = true;
  return true;
}

// A DequantizeLinear read by a Conv, MatMul or Gemm: the QDQ fusion
// (qdq_fusion.cc) reads the quantized weights through it after placement,
// so the generic folding leaves it; finish_rewrites folds what is left.
bool kept_for_qdq(const Graph& graph, const Node& node) {
  if (node.op_type != "DequantizeLinear" || !node.domain.empty() || node.outputs.size() != 1) return false;
  for (NodeId c : graph.values[static_cast<size_t>(node.outputs[0])].consumers) {
    const Node& reader = graph.nodes[static_cast<size_t>(c)];
    if (!reader.removed && reader.domain.empty() &&
        (reader.op_type == "Conv" || reader.op_type == "MatMul" || reader.op_type == "Gemm"))
      return true;
  }
  return false;
}

Status fold(Graph& graph, int* folded, bool dequantize_only) {
  SY_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.topological_order());
  ThreadPool pool(1);
  const KernelRegistry& registry = cpu::cpu_kernel_registry();
  for (NodeId id : order) {
    Node& node = graph.nodes[static_cast<size_t>(id)];
    if (node.domain == "com.switchyard" || is_nondeterministic(node) || has_subgraph(node)) continue;
    if (dequantize_only ? node.op_type != "DequantizeLinear" || !node.domain.empty() : kept_for_qdq(graph, node))
      continue;
    if (fold_static_shape(graph, node)) {
      ++*folded;
      continue;
    }
    bool all_constant = true;
    std::vector<const Tensor*> inputs;
    for (ValueId v : node.inputs) {
      if (v == kNoValue) {
        inputs.push_back(nullptr);
        continue;
      }
      const Tensor* c = graph.constant(v);
      if (c == nullptr) {
        all_constant = false;
        break;
      }
      inputs.push_back(c);
    }
    if (!all_constant) continue;
    std::string reason;
    const KernelDef* def = registry.find(graph, node, reason);
    if (def == nullptr) continue;  // the partitioner will report it
    KernelCreateContext create_ctx(graph, node);
    auto kernel = def->create(create_ctx);
    if (!kernel.ok()) continue;
    OwningKernelContext ctx(node, inputs, &pool);
    // A failure here (bad constant data) is left for run time, where the
    // error is reported with the run's context.
    if (!run_kernel_once(**kernel, ctx).ok()) continue;
    // Initializers are tensors: a sequence or optional result (SequenceEmpty,
    // SplitToSequence of a constant) stays a node and runs each time.
    bool all_tensors = true;
    for (const Tensor& t : ctx.outputs()) all_tensors = all_tensors && t.is_tensor();
    if (!all_tensors) continue;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const ValueId out = node.outputs[i];
      if (out == kNoValue) continue;
      graph.initializers[out] = std::move(ctx.outputs()[i]);
      graph.values[static_cast<size_t>(out)].is_initializer = true;
      const Tensor& t = graph.initializers[out];
      graph.values[static_cast<size_t>(out)].type = ValueType::tensor(t.dtype(), t.shape());
    }
    node.removed = true;
    ++*folded;
  }
  graph.rebuild_links();
  return ok_status();
}

}  // namespace

Status fold_constants(Graph& graph, int* folded) { return fold(graph, folded, false); }

Status fold_constant_dequantize(Graph& graph, int* folded) { return fold(graph, folded, true); }

Status eliminate_identities(Graph& graph, int* removed) {
  graph.link_subgraph_inputs();
  for (Node& node : graph.nodes) {
    if (node.removed || !node.domain.empty()) continue;
    const bool identity = node.op_type == "Identity";
    // Dropout in inference is the identity when its mask is not used.
    const bool dropout = node.op_type == "Dropout" &&
                         (node.outputs.size() < 2 || node.outputs[1] == kNoValue ||
                          graph.values[static_cast<size_t>(node.outputs[1])].consumers.empty()) &&
                         !(node.outputs.size() >= 2 && node.outputs[1] != kNoValue &&
                           graph.values[static_cast<size_t>(node.outputs[1])].is_graph_output) &&
                         !node.has_input(2);  // training_mode input
    if (!identity && !dropout) continue;
    if (!node.has_input(0) || node.outputs.empty() || node.outputs[0] == kNoValue) continue;
    const ValueId in = node.inputs[0];
    const ValueId out = node.outputs[0];
    const Value& out_value = graph.values[static_cast<size_t>(out)];
    if (out_value.is_graph_output) continue;  // its name must survive
    // A subgraph reading the output by name from the outer scope would lose
    // it; such identities stay.
    bool read_by_subgraph = false;
    for (NodeId c : out_value.consumers)
      for (ValueId v : graph.nodes[static_cast<size_t>(c)].implicit_inputs) read_by_subgraph |= v == out;
    if (read_by_subgraph) continue;
    if (graph.values[static_cast<size_t>(in)].type.kind != ValueType::Kind::kTensor) continue;
    for (NodeId c : out_value.consumers)
      for (ValueId& v : graph.nodes[static_cast<size_t>(c)].inputs)
        if (v == out) v = in;
    node.removed = true;
    ++*removed;
  }
  // One relink at the end: consumer lists of the removed identities' outputs
  // stay valid during the loop, since only node inputs were rewritten.
  graph.rebuild_links();
  return ok_status();
}

Status eliminate_dead_nodes(Graph& graph, int* removed) {
  graph.link_subgraph_inputs();
  bool changed = true;
  while (changed) {
    changed = false;
    for (Node& node : graph.nodes) {
      if (node.removed) continue;
      bool used = false;
      for (ValueId out : node.outputs) {
        if (out == kNoValue) continue;
        const Value& v = graph.values[static_cast<size_t>(out)];
        if (v.is_graph_output) used = true;
        for (NodeId c : v.consumers)
          if (!graph.nodes[static_cast<size_t>(c)].removed) used = true;
      }
      if (!used) {
        node.removed = true;
        ++*removed;
        changed = true;
      }
    }
    if (changed) graph.rebuild_links();
  }
  return ok_status();
}

}  // namespace sy
