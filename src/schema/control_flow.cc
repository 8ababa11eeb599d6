// Schemas of the control-flow ops: If for now (Loop and Scan follow on the
// same ground). An If's outputs are its branches' outputs, so their types
// come from the branches, which resolve() infers before the If itself.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

// The type both branches can give: the dtype they share, and each dim
// where they agree (a known number or the same symbol); a dim on which
// they differ is unknown, and differing ranks leave the shape unknown.
ValueType merge_branch_types(const ValueType& a, const ValueType& b) {
  if (a.kind == ValueType::Kind::kUnknown) return b;
  if (b.kind == ValueType::Kind::kUnknown) return a;
  ValueType out = a;
  if (!a.is_tensor()) return out;  // sequences, optionals: the then branch's type
  if (!a.has_shape || !b.has_shape || a.rank() != b.rank()) {
    out.has_shape = false;
    out.dims.clear();
    return out;
  }
  for (size_t d = 0; d < a.rank(); ++d)
    if (!(a.dims[d] == b.dims[d])) out.dims[d] = Dim::unknown();
  return out;
}

Result<const Graph*> branch(const InferenceContext& ctx, const char* name) {
  const Attribute* a = ctx.node().attr(name);
  if (a == nullptr || !a->g) return ctx.error(std::string("has no ") + name + " graph attribute");
  return a->g.get();
}

Status infer_if(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Graph* then_graph, branch(ctx, "then_branch"));
  SY_ASSIGN_OR_RETURN(const Graph* else_graph, branch(ctx, "else_branch"));
  const size_t n = ctx.num_outputs();
  if (then_graph->outputs.size() != else_graph->outputs.size())
    return ctx.error("its branches disagree in output count: then_branch has " +
                     std::to_string(then_graph->outputs.size()) + ", else_branch has " +
                     std::to_string(else_graph->outputs.size()));
  if (then_graph->outputs.size() != n)
    return ctx.error("has " + std::to_string(n) + " outputs, but then_branch and else_branch have " +
                     std::to_string(then_graph->outputs.size()));
  for (size_t i = 0; i < n; ++i) {
    const ValueType& t = then_graph->values[static_cast<size_t>(then_graph->outputs[i])].type;
    const ValueType& e = else_graph->values[static_cast<size_t>(else_graph->outputs[i])].type;
    const bool both_known = t.kind != ValueType::Kind::kUnknown && e.kind != ValueType::Kind::kUnknown;
    if (both_known && (t.kind != e.kind || t.dtype != e.dtype))
      return ctx.error("output " + std::to_string(i) + ": then_branch gives " + t.type_string() +
                       ", else_branch gives " + e.type_string());
    ctx.output_type(i) = merge_branch_types(t, e);
  }
  return ok_status();
}

constexpr OpSchema kControlFlowSchemas[] = {
    {"", "If", 1, 1, 1, 1, -1, &infer_if},
};

}  // namespace

std::span<const OpSchema> control_flow_schemas() { return kControlFlowSchemas; }

}  // namespace sy
