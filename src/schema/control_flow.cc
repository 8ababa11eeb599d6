// Schemas of the control-flow ops: If, Loop and Scan. Their outputs are
// their bodies' outputs, so their types come from the bodies, which
// resolve() infers before the node itself; a Loop or Scan first gives its
// body's inputs the types it will pass them (seed_*_body).
#include <string>
#include <vector>

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

Result<const Graph*> body_attribute(const InferenceContext& ctx, const char* name) {
  const Attribute* a = ctx.node().attr(name);
  if (a == nullptr || !a->g) return ctx.error(std::string("has no ") + name + " graph attribute");
  return a->g.get();
}

Status infer_if(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Graph* then_graph, body_attribute(ctx, "then_branch"));
  SY_ASSIGN_OR_RETURN(const Graph* else_graph, body_attribute(ctx, "else_branch"));
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

const ValueType& output_type_of(const Graph& body, size_t i) {
  return body.values[static_cast<size_t>(body.outputs[i])].type;
}

// Body input i takes `type` where the body leaves its type unknown (or its
// tensor's element type); a declared shape stays.
void seed_input(Graph& body, size_t i, const ValueType& type) {
  if (i >= body.inputs.size()) return;
  ValueType& declared = body.values[static_cast<size_t>(body.inputs[i])].type;
  if (declared.kind == ValueType::Kind::kUnknown) {
    declared = type;
  } else if (declared.is_tensor() && type.is_tensor() && declared.dtype == DataType::kUndefined) {
    declared.dtype = type.dtype;
  }
}

// `type` without its shape: what a loop-carried value is known to be in
// every iteration (its shape may change from one to the next).
ValueType without_shape(const ValueType* type) {
  if (type == nullptr) return ValueType{};
  ValueType out = *type;
  out.has_shape = false;
  out.dims.clear();
  return out;
}

// `type` without dims [first, first + count), or unknown when its rank is
// too small.
ValueType without_dims(const ValueType* type, size_t first, size_t count) {
  if (type == nullptr || !type->is_tensor()) return ValueType{};
  ValueType out = *type;
  if (!out.has_shape) return out;
  if (out.dims.size() < first + count) return ValueType::tensor(type->dtype);
  out.dims.erase(out.dims.begin() + static_cast<std::ptrdiff_t>(first),
                 out.dims.begin() + static_cast<std::ptrdiff_t>(first + count));
  return out;
}

// A state carried through the iterations keeps its kind and element type.
Status check_carried_type(const InferenceContext& ctx, const Graph& body, size_t body_output, const ValueType* initial,
                          const char* what) {
  const ValueType& out = output_type_of(body, body_output);
  if (initial == nullptr || initial->kind == ValueType::Kind::kUnknown || out.kind == ValueType::Kind::kUnknown)
    return ok_status();
  const bool dtype_clash = initial->is_tensor() && out.is_tensor() && initial->dtype != DataType::kUndefined &&
                           out.dtype != DataType::kUndefined && initial->dtype != out.dtype;
  if (initial->kind == out.kind && !dtype_clash) return ok_status();
  // An optional state may take a value of its element's type, and back.
  const auto element_kind = [](const ValueType& t) {
    return t.kind == ValueType::Kind::kOptional && t.element ? t.element->kind : t.kind;
  };
  if (element_kind(*initial) == element_kind(out) && !dtype_clash) return ok_status();
  return ctx.error("body output " + std::to_string(body_output) + " ('" +
                   body.values[static_cast<size_t>(body.outputs[body_output])].name + "') is " + out.type_string() +
                   ", but the " + what + " it updates is " + initial->type_string());
}

// ---- Loop ----------------------------------------------------------------------

void seed_loop_body(const Graph& graph, const Node& node, const std::string& attribute, Graph& body) {
  if (attribute != "body") return;
  seed_input(body, 0, ValueType::tensor(DataType::kInt64, std::vector<Dim>{}));
  seed_input(body, 1, ValueType::tensor(DataType::kBool, std::vector<Dim>{}));
  for (size_t k = 2; k < node.inputs.size(); ++k) {
    if (!node.has_input(k)) continue;
    seed_input(body, k, without_shape(&graph.values[static_cast<size_t>(node.inputs[k])].type));
  }
}

Status infer_loop(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Graph* body, body_attribute(ctx, "body"));
  if (!ctx.has_input(0) && !ctx.has_input(1))
    return ctx.error("has neither a trip count (M) nor a condition (cond): it would never end");
  const size_t carried = ctx.num_inputs() - 2;
  if (body->inputs.size() != carried + 2)
    return ctx.error("body has " + std::to_string(body->inputs.size()) + " inputs; expected " +
                     std::to_string(carried + 2) + " (iteration number, condition and " + std::to_string(carried) +
                     " loop-carried values)");
  if (ctx.num_outputs() < carried || body->outputs.size() != ctx.num_outputs() + 1)
    return ctx.error("body has " + std::to_string(body->outputs.size()) + " outputs; expected " +
                     std::to_string(ctx.num_outputs() + 1) + " (the condition, then one per output of the node, " +
                     std::to_string(carried) + " of them loop-carried)");
  for (size_t k = 0; k < carried; ++k) {
    SY_RETURN_IF_ERROR(check_carried_type(ctx, *body, 1 + k, ctx.input_type(2 + k), "loop-carried value"));
    // Zero iterations hand the initial value on, so the two merge; an
    // optional state that the body makes a value (or back) is what the body
    // makes.
    const ValueType* initial = ctx.input_type(2 + k);
    const ValueType& updated = output_type_of(*body, 1 + k);
    ctx.output_type(k) = initial != nullptr && (initial->kind == updated.kind || updated.kind == ValueType::Kind::kUnknown)
                             ? merge_branch_types(*initial, updated)
                             : updated;
  }
  // Scan outputs stack one value per iteration: a for loop (no cond) with
  // a constant trip count makes that many.
  Dim iterations = Dim::unknown();
  const Tensor* m = ctx.has_input(1) ? nullptr : ctx.input_constant(0);
  if (m != nullptr && m->dtype() == DataType::kInt64 && m->num_elements() == 1)
    iterations = Dim::known(std::max<int64_t>(0, m->data<int64_t>()[0]));
  for (size_t j = carried; j < ctx.num_outputs(); ++j) {
    const ValueType& element = output_type_of(*body, 1 + j);
    if (element.kind == ValueType::Kind::kUnknown) continue;
    if (!element.is_tensor())
      return ctx.error("body output " + std::to_string(1 + j) + " is a scan output and must be a tensor, not " +
                       element.type_string());
    ValueType out = ValueType::tensor(element.dtype);
    if (element.has_shape) {
      out.has_shape = true;
      out.dims.push_back(iterations);
      out.dims.insert(out.dims.end(), element.dims.begin(), element.dims.end());
    }
    ctx.output_type(j) = std::move(out);
  }
  return ok_status();
}

// ---- Scan ----------------------------------------------------------------------

// A Scan's layout: N state variables, then M scan inputs (opset 8: after
// sequence_lens, with a batch dim in front of everything).
struct ScanLayout {
  size_t first_state = 0;  // 1 at opset 8
  size_t num_states = 0;
  size_t num_scan_inputs = 0;
  bool batched = false;  // opset 8
  std::vector<int64_t> input_axes;
  std::vector<int64_t> output_axes;
};

bool scan_layout(const Node& node, ScanLayout& layout) {
  layout.batched = node.since_version < 9;
  layout.first_state = layout.batched ? 1 : 0;
  const int64_t m = node.attr_int("num_scan_inputs", -1);
  if (m < 1 || node.inputs.size() < layout.first_state + static_cast<size_t>(m)) return false;
  layout.num_scan_inputs = static_cast<size_t>(m);
  layout.num_states = node.inputs.size() - layout.first_state - layout.num_scan_inputs;
  layout.input_axes = node.attr_ints("scan_input_axes");
  layout.output_axes = node.attr_ints("scan_output_axes");
  return true;
}

void seed_scan_body(const Graph& graph, const Node& node, const std::string& attribute, Graph& body) {
  ScanLayout layout;
  if (attribute != "body" || !scan_layout(node, layout)) return;
  auto input_type = [&](size_t i) -> const ValueType* {
    return node.has_input(i) ? &graph.values[static_cast<size_t>(node.inputs[i])].type : nullptr;
  };
  const size_t batch_dims = layout.batched ? 1 : 0;
  for (size_t k = 0; k < layout.num_states; ++k)
    seed_input(body, k, without_shape(input_type(layout.first_state + k)));
  for (size_t j = 0; j < layout.num_scan_inputs; ++j) {
    const ValueType* t = input_type(layout.first_state + layout.num_states + j);
    int64_t axis = layout.batched ? 1 : (j < layout.input_axes.size() ? layout.input_axes[j] : 0);
    if (t != nullptr && t->has_shape && axis < 0) axis += static_cast<int64_t>(t->rank());
    if (axis < 0) continue;
    ValueType slice = without_dims(t, static_cast<size_t>(axis), 1);
    if (batch_dims != 0) slice = without_dims(&slice, 0, 1);
    seed_input(body, layout.num_states + j, slice);
  }
}

Status infer_scan(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const Graph* body, body_attribute(ctx, "body"));
  ScanLayout layout;
  if (!scan_layout(ctx.node(), layout))
    return ctx.error("num_scan_inputs must be at least 1 and at most the number of inputs");
  const size_t n = layout.num_states;
  if (body->inputs.size() != n + layout.num_scan_inputs)
    return ctx.error("body has " + std::to_string(body->inputs.size()) + " inputs; expected " +
                     std::to_string(n + layout.num_scan_inputs) + " (" + std::to_string(n) + " states and " +
                     std::to_string(layout.num_scan_inputs) + " scan inputs)");
  if (ctx.num_outputs() < n || body->outputs.size() != ctx.num_outputs())
    return ctx.error("body has " + std::to_string(body->outputs.size()) + " outputs; expected " +
                     std::to_string(ctx.num_outputs()) + ", one per output of the node (" + std::to_string(n) +
                     " states first)");
  if (!layout.batched && !layout.input_axes.empty() && layout.input_axes.size() != layout.num_scan_inputs)
    return ctx.error("scan_input_axes has " + std::to_string(layout.input_axes.size()) + " entries; expected " +
                     std::to_string(layout.num_scan_inputs));
  if (!layout.batched && !layout.output_axes.empty() && layout.output_axes.size() != ctx.num_outputs() - n)
    return ctx.error("scan_output_axes has " + std::to_string(layout.output_axes.size()) + " entries; expected " +
                     std::to_string(ctx.num_outputs() - n));
  for (size_t k = 0; k < n; ++k) {
    const ValueType* initial = ctx.input_type(layout.first_state + k);
    SY_RETURN_IF_ERROR(check_carried_type(ctx, *body, k, initial, "state variable"));
    ctx.output_type(k) = initial != nullptr ? *initial : ValueType{};
  }
  // The scan length (and the batch, at opset 8) from the first scan input.
  const ValueType* first = ctx.input_type(layout.first_state + n);
  int64_t axis = layout.batched ? 1 : (layout.input_axes.empty() ? 0 : layout.input_axes[0]);
  Dim length = Dim::unknown();
  Dim batch = Dim::unknown();
  if (first != nullptr && first->has_shape) {
    if (axis < 0) axis += static_cast<int64_t>(first->rank());
    if (axis >= 0 && static_cast<size_t>(axis) < first->rank()) length = first->dims[static_cast<size_t>(axis)];
    if (layout.batched && first->rank() > 0) batch = first->dims[0];
  }
  for (size_t j = n; j < ctx.num_outputs(); ++j) {
    const ValueType& element = output_type_of(*body, j);
    if (element.kind == ValueType::Kind::kUnknown) continue;
    if (!element.is_tensor())
      return ctx.error("body output " + std::to_string(j) + " is a scan output and must be a tensor, not " +
                       element.type_string());
    ValueType out = ValueType::tensor(element.dtype);
    if (element.has_shape) {
      const auto rank = static_cast<int64_t>(element.rank()) + 1;
      int64_t out_axis = layout.batched || layout.output_axes.empty() ? 0 : layout.output_axes[j - n];
      if (out_axis < 0) out_axis += rank;
      if (out_axis < 0 || out_axis >= rank)
        return ctx.error("scan_output_axes[" + std::to_string(j - n) + "] is out of range for an output of rank " +
                         std::to_string(rank));
      out.has_shape = true;
      out.dims = element.dims;
      out.dims.insert(out.dims.begin() + out_axis, length);
      if (layout.batched) out.dims.insert(out.dims.begin(), batch);
    }
    ctx.output_type(j) = std::move(out);
  }
  return ok_status();
}

constexpr OpSchema kControlFlowSchemas[] = {
    {"", "If", 1, 1, 1, 1, -1, &infer_if},
    {"", "Loop", 1, 2, -1, 1, -1, &infer_loop, &seed_loop_body},
    {"", "Scan", 8, 2, -1, 1, -1, &infer_scan, &seed_scan_body},
    {"", "Scan", 9, 1, -1, 1, -1, &infer_scan, &seed_scan_body},
};

}  // namespace

std::span<const OpSchema> control_flow_schemas() { return kControlFlowSchemas; }

}  // namespace sy
