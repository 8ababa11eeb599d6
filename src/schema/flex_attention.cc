// Schema of ai.onnx.preview FlexAttention (version 1): Y = softmax of the
// scaled (and optionally modified) Q·K^T scores, optionally modified, times V.
// Its score_mod and prob_mod subgraphs take the (B, Hq, L, S) scores or
// probabilities in the softmax precision, which seed_flex_body gives their
// input so that their nodes are inferred with the types they will see.
#include <string>
#include <vector>

#include "schema/schema.h"

namespace sy {
namespace {

// The element type the softmax (and the modifier subgraphs) work in: the
// softmax_precision attribute, else double for double inputs and float for
// the others. kUndefined for a value the op does not know.
DataType softmax_dtype(const Node& node, DataType input) {
  if (!node.has_attr("softmax_precision")) return input == DataType::kDouble ? DataType::kDouble : DataType::kFloat;
  switch (node.attr_int("softmax_precision", 0)) {
    case 1: return DataType::kFloat;
    case 10: return DataType::kFloat16;
    case 11: return DataType::kDouble;
    case 16: return DataType::kBfloat16;
    default: return DataType::kUndefined;
  }
}

const ValueType* node_input_type(const Graph& graph, const Node& node, size_t i) {
  return node.has_input(i) ? &graph.values[static_cast<size_t>(node.inputs[i])].type : nullptr;
}

void seed_flex_body(const Graph& graph, const Node& node, const std::string& attribute, Graph& body) {
  if ((attribute != "score_mod" && attribute != "prob_mod") || body.inputs.size() != 1) return;
  const ValueType* q = node_input_type(graph, node, 0);
  const ValueType* k = node_input_type(graph, node, 1);
  if (q == nullptr || !q->is_tensor() || q->dtype == DataType::kUndefined) return;
  const DataType dtype = softmax_dtype(node, q->dtype);
  if (dtype == DataType::kUndefined) return;
  ValueType type = ValueType::tensor(dtype);
  if (q->has_shape && q->rank() == 4 && k != nullptr && k->is_tensor() && k->has_shape && k->rank() == 4)
    type = ValueType::tensor(dtype, std::vector<Dim>{q->dims[0], q->dims[1], q->dims[2], k->dims[2]});
  ValueType& declared = body.values[static_cast<size_t>(body.inputs[0])].type;
  if (declared.kind == ValueType::Kind::kUnknown) {
    declared = type;
  } else if (declared.is_tensor() && declared.dtype == DataType::kUndefined) {
    declared.dtype = dtype;
  }
}

Status infer_flex_attention(InferenceContext& ctx) {
  const Node& node = ctx.node();
  if (node.has_attr("softmax_precision") && softmax_dtype(node, DataType::kFloat) == DataType::kUndefined)
    return ctx.error("attribute softmax_precision must be 1 (float), 10 (float16), 11 (double) or 16 (bfloat16); got " +
                     std::to_string(node.attr_int("softmax_precision", 0)));
  for (const char* name : {"score_mod", "prob_mod"}) {
    const Attribute* a = node.attr(name);
    if (a == nullptr) continue;
    if (!a->g) return ctx.error(std::string("attribute ") + name + " must be a graph");
    if (a->g->inputs.size() != 1 || a->g->outputs.size() != 1)
      return ctx.error(std::string(name) + " must have 1 input and 1 output, has " + std::to_string(a->g->inputs.size()) +
                       " and " + std::to_string(a->g->outputs.size()));
  }
  SY_ASSIGN_OR_RETURN(const ValueType* q, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* k, required_input(ctx, 1));
  SY_ASSIGN_OR_RETURN(const ValueType* v, required_input(ctx, 2));
  const char* names[3] = {"Q", "K", "V"};
  const ValueType* types[3] = {q, k, v};
  for (size_t i = 0; i < 3; ++i)
    if (types[i]->is_tensor() && types[i]->has_shape && types[i]->rank() != 4)
      return ctx.error(std::string("input ") + std::to_string(i) + " (" + names[i] + ") must be rank 4, has rank " +
                       std::to_string(types[i]->rank()));
  if (!q->has_shape || !v->has_shape) {
    ctx.output_type(0) = ValueType::tensor(q->dtype);
    return ok_status();
  }
  ctx.output_type(0) = ValueType::tensor(q->dtype, std::vector<Dim>{q->dims[0], q->dims[1], q->dims[2], v->dims[3]});
  return ok_status();
}

constexpr OpSchema kFlexAttentionSchemas[] = {
    {"ai.onnx.preview", "FlexAttention", 1, 3, 3, 1, 1, &infer_flex_attention, &seed_flex_body},
};

}  // namespace

std::span<const OpSchema> flex_attention_schemas() { return kFlexAttentionSchemas; }

}  // namespace sy
