#include "session/compiled_subgraph.h"

#include "optimizer/optimizer.h"

namespace sy {
namespace {

// The body's outer-scope values that are constants of the enclosing graph
// (its initializers, or what its passes folded) become the body's own, the
// tensor shared, so that the body's passes fold and fuse over them as over
// its own weights: an exporter that reorders an LSTM's weights inside a
// branch gets them reordered once, here, not on every run.
void import_outer_constants(const Graph& enclosing, Graph& body) {
  for (size_t v = 0; v < body.values.size(); ++v) {
    Value& value = body.values[v];
    if (!value.is_outer_scope) continue;
    const ValueId outer = enclosing.find_value(value.name);
    const Tensor* constant = outer == kNoValue ? nullptr : enclosing.constant(outer);
    if (constant == nullptr) continue;
    value.is_outer_scope = false;
    value.is_initializer = true;
    body.initializers[static_cast<ValueId>(v)] = *constant;
  }
}

Status compile_body(Graph& body, CompiledSubgraph& sub, std::span<ExecutionProvider* const> chain,
                    std::span<Allocator* const> allocators, const SubgraphCompileOptions& options,
                    std::vector<std::unique_ptr<CompiledSubgraph>>& compiled, CompiledSubgraphMap& map) {
  // resolve() already inferred the body with its parent. The passes leave
  // its outer-scope values alone (the constant ones are the body's own by
  // now): they are neither constants nor produced here, and a body's
  // outputs keep their names.
  SY_RETURN_IF_ERROR(optimize(body, options.level));
  SY_ASSIGN_OR_RETURN(Placement placement, place_nodes(body, chain, options.partition));
  SY_RETURN_IF_ERROR(rewrite_placed_nodes(body, chain, options.level));
  // The bodies inside this one first: their kernels' factories need them.
  SY_RETURN_IF_ERROR(compile_subgraphs(body, chain, allocators, options, sub.name + "/", compiled, map));
  SY_ASSIGN_OR_RETURN(sub.partition, create_placed_kernels(body, chain, std::move(placement), map));
  SY_ASSIGN_OR_RETURN(sub.plan, build_execution_plan(body, sub.partition, chain, sub.kernels, /*outputs_in_slots=*/true));
  return ok_status();
}

}  // namespace

Status compile_subgraphs(Graph& graph, std::span<ExecutionProvider* const> chain,
                         std::span<Allocator* const> allocators, const SubgraphCompileOptions& options,
                         const std::string& prefix, std::vector<std::unique_ptr<CompiledSubgraph>>& compiled,
                         CompiledSubgraphMap& map) {
  for (Node& node : graph.nodes) {
    if (node.removed) continue;
    for (Attribute& a : node.attributes) {
      // Graph lists (no ai.onnx op has one) are left to whoever needs them.
      if (!a.g) continue;
      auto sub = std::make_unique<CompiledSubgraph>();
      sub->name = prefix + (node.name.empty() ? node.op_type : node.name) + "/" + a.name;
      sub->graph = a.g.get();
      sub->chain.assign(chain.begin(), chain.end());
      sub->allocators.assign(allocators.begin(), allocators.end());
      CompiledSubgraph& ref = *sub;
      compiled.push_back(std::move(sub));
      import_outer_constants(graph, *a.g);
      SY_RETURN_IF_ERROR(compile_body(*a.g, ref, chain, allocators, options, compiled, map)
                             .with_context(node.describe() + " " + a.name));
      map[a.g.get()] = &ref;
    }
  }
  return ok_status();
}

}  // namespace sy
