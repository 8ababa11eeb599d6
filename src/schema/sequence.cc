// Schemas of the sequence ops: SequenceEmpty, SequenceConstruct,
// SequenceInsert, SequenceErase, SequenceAt, SequenceLength,
// SplitToSequence, ConcatFromSequence and SequenceMap. A sequence's type is
// seq(tensor(T)); its element type carries the shape every item shares
// as far as it is known (a dim that differs between items is unknown).
#include <climits>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "schema/schema.h"

namespace sy {
namespace {

// The tensor type of a sequence's items, or nullptr when not known.
const ValueType* item_type(const ValueType* seq) {
  if (seq == nullptr || seq->kind != ValueType::Kind::kSequence || seq->element == nullptr) return nullptr;
  return seq->element->is_tensor() ? seq->element.get() : nullptr;
}

// The type both `a` and `b` fit: their dtype when it agrees, their dims
// where they agree (a dim that differs, or a rank that does, is unknown).
ValueType join(const ValueType& a, const ValueType& b) {
  ValueType out = ValueType::tensor(a.dtype == b.dtype ? a.dtype : DataType::kUndefined);
  if (!a.has_shape || !b.has_shape || a.rank() != b.rank()) return out;
  out.has_shape = true;
  for (size_t i = 0; i < a.rank(); ++i) out.dims.push_back(a.dims[i] == b.dims[i] ? a.dims[i] : Dim::unknown());
  return out;
}

// Input 0 must be a sequence (when its kind is known).
Result<const ValueType*> sequence_input(const InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* seq, required_input(ctx, 0));
  if (seq->kind != ValueType::Kind::kSequence && seq->kind != ValueType::Kind::kUnknown)
    return ctx.error("input 0 (input_sequence) has type " + seq->type_string() + ", expected a sequence");
  return seq;
}

// A position input (SequenceAt, SequenceInsert, SequenceErase) holds one
// value: the spec says a scalar, and the node suite (as ONNX Runtime)
// also passes a 1-element vector.
Status check_position(const InferenceContext& ctx, size_t i) {
  const ValueType* t = ctx.input_type(i);
  if (t != nullptr && t->is_static() && t->static_shape().num_elements() != 1)
    return ctx.error("input " + std::to_string(i) + " (position) must hold one value, got shape " + t->shape_string());
  return ok_status();
}

// ---- SequenceEmpty, SequenceConstruct ---------------------------------------------

Status infer_sequence_empty(InferenceContext& ctx) {
  const int64_t dtype = ctx.node().attr_int("dtype", static_cast<int64_t>(DataType::kFloat));
  if (dtype > INT32_MAX || dtype <= 0 || !is_valid_data_type(static_cast<int32_t>(dtype)))
    return ctx.error("dtype " + std::to_string(dtype) + " is not a tensor element type");
  ctx.output_type(0) = ValueType::sequence(ValueType::tensor(static_cast<DataType>(dtype)));
  return ok_status();
}

Status infer_sequence_construct(InferenceContext& ctx) {
  ValueType element;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    SY_ASSIGN_OR_RETURN(const ValueType* t, required_input(ctx, i));
    element = i == 0 ? *t : join(element, *t);
  }
  element.kind = ValueType::Kind::kTensor;
  ctx.output_type(0) = ValueType::sequence(std::move(element));
  return ok_status();
}

// ---- SequenceInsert, SequenceErase, SequenceAt, SequenceLength -------------------

Status infer_sequence_insert(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* seq, sequence_input(ctx));
  SY_ASSIGN_OR_RETURN(const ValueType* tensor, required_input(ctx, 1));
  SY_RETURN_IF_ERROR(check_position(ctx, 2));
  const ValueType* items = item_type(seq);
  if (items == nullptr) {
    ctx.output_type(0) = ValueType::sequence(*tensor);
    return ok_status();
  }
  if (items->dtype != DataType::kUndefined && tensor->dtype != DataType::kUndefined && items->dtype != tensor->dtype)
    return ctx.error("input 1 (tensor) has type " + tensor->type_string() + " but the sequence holds " +
                     items->type_string());
  ctx.output_type(0) = ValueType::sequence(join(*items, *tensor));
  return ok_status();
}

Status infer_sequence_erase(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* seq, sequence_input(ctx));
  SY_RETURN_IF_ERROR(check_position(ctx, 1));
  ctx.output_type(0) = *seq;
  return ok_status();
}

Status infer_sequence_at(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* seq, sequence_input(ctx));
  SY_RETURN_IF_ERROR(check_position(ctx, 1));
  const ValueType* items = item_type(seq);
  ctx.output_type(0) = items != nullptr ? *items : ValueType::tensor(DataType::kUndefined);
  return ok_status();
}

Status infer_sequence_length(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(sequence_input(ctx).status());
  ctx.output_type(0) = ValueType::tensor(DataType::kInt64, std::vector<Dim>{});
  return ok_status();
}

// ---- SplitToSequence ------------------------------------------------------------

// The items' length along the split axis, when `split` (absent, a scalar or
// a 1-D list) makes it the same for every item; else unknown.
Dim split_piece_length(const InferenceContext& ctx, const Dim& axis_dim) {
  if (!ctx.has_input(1)) return Dim::known(1);
  std::vector<int64_t> split;
  if (!constant_as_int64s(ctx.input_constant(1), split) || split.empty()) return Dim::unknown();
  const bool scalar = ctx.input_constant(1)->shape().rank() == 0;
  if (scalar) {
    // Chunks of `split`; only the last may be shorter.
    if (axis_dim.is_known() && split[0] > 0 && axis_dim.value % split[0] == 0) return Dim::known(split[0]);
    return Dim::unknown();
  }
  for (int64_t s : split)
    if (s != split[0]) return Dim::unknown();
  return Dim::known(split[0]);
}

Status infer_split_to_sequence(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  const ValueType* split = ctx.input_type(1);
  if (split != nullptr && split->has_shape && split->rank() > 1)
    return ctx.error("input 1 (split) must be a scalar or 1-D, got shape " + split->shape_string());
  const int64_t keepdims = ctx.node().attr_int("keepdims", 1);
  if (keepdims != 0 && keepdims != 1) return ctx.error("keepdims must be 0 or 1, got " + std::to_string(keepdims));
  ValueType element = ValueType::tensor(in->dtype);
  if (in->has_shape) {
    int64_t axis = ctx.node().attr_int("axis", 0);
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, static_cast<int64_t>(in->rank())));
    const auto a = static_cast<size_t>(axis);
    element.has_shape = true;
    element.dims = in->dims;
    // keepdims applies only when `split` is absent: every item is then one
    // slice, whose axis may go.
    if (!ctx.has_input(1) && keepdims == 0) {
      element.dims.erase(element.dims.begin() + static_cast<std::ptrdiff_t>(a));
    } else {
      element.dims[a] = split_piece_length(ctx, in->dims[a]);
    }
  }
  ctx.output_type(0) = ValueType::sequence(std::move(element));
  return ok_status();
}

// ---- ConcatFromSequence ---------------------------------------------------------

Status infer_concat_from_sequence(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* seq, sequence_input(ctx));
  if (!ctx.node().has_attr("axis")) return ctx.error("attribute 'axis' is required");
  const int64_t new_axis = ctx.node().attr_int("new_axis", 0);
  if (new_axis != 0 && new_axis != 1) return ctx.error("new_axis must be 0 or 1, got " + std::to_string(new_axis));
  const ValueType* items = item_type(seq);
  if (items == nullptr) {
    ctx.output_type(0) = ValueType::tensor(DataType::kUndefined);
    return ok_status();
  }
  ValueType out = ValueType::tensor(items->dtype);
  if (items->has_shape) {
    // With new_axis the items are stacked: the axis may be one past the last.
    const auto rank = static_cast<int64_t>(items->rank()) + new_axis;
    int64_t axis = ctx.node().attr_int("axis", 0);
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, rank));
    out.has_shape = true;
    out.dims = items->dims;
    // The number of items, and their lengths along the axis, are run-time facts.
    if (new_axis == 1) {
      out.dims.insert(out.dims.begin() + static_cast<std::ptrdiff_t>(axis), Dim::unknown());
    } else {
      out.dims[static_cast<size_t>(axis)] = Dim::unknown();
    }
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- SequenceMap ---------------------------------------------------------------

// The body sees one item of each sequence input and each tensor input as
// it is.
void seed_sequence_map_body(const Graph& graph, const Node& node, const std::string& attribute, Graph& body) {
  if (attribute != "body") return;
  for (size_t i = 0; i < node.inputs.size() && i < body.inputs.size(); ++i) {
    if (!node.has_input(i)) continue;
    const ValueType& t = graph.values[static_cast<size_t>(node.inputs[i])].type;
    const ValueType* item = item_type(&t);
    ValueType& declared = body.values[static_cast<size_t>(body.inputs[i])].type;
    if (declared.kind != ValueType::Kind::kUnknown) continue;
    if (item != nullptr) {
      declared = *item;  // the dims all items share
    } else if (t.is_tensor()) {
      declared = t;
    }
  }
}

Status infer_sequence_map(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(sequence_input(ctx).status());
  const Attribute* a = ctx.node().attr("body");
  if (a == nullptr || !a->g) return ctx.error("has no body graph attribute");
  const Graph& body = *a->g;
  if (body.inputs.size() != ctx.num_inputs())
    return ctx.error("body has " + std::to_string(body.inputs.size()) + " inputs; expected " +
                     std::to_string(ctx.num_inputs()) + ", one per input of the node");
  if (body.outputs.size() != ctx.num_outputs())
    return ctx.error("body has " + std::to_string(body.outputs.size()) + " outputs; expected " +
                     std::to_string(ctx.num_outputs()) + ", one per output of the node");
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const ValueType& t = body.values[static_cast<size_t>(body.outputs[i])].type;
    if (t.kind == ValueType::Kind::kUnknown) continue;
    if (!t.is_tensor())
      return ctx.error("body output " + std::to_string(i) + " is " + t.type_string() +
                       "; the items of a sequence are tensors");
    // Items may differ in size from one to the next: the dims stay only
    // where the body fixes them.
    ctx.output_type(i) = ValueType::sequence(t);
  }
  return ok_status();
}

constexpr OpSchema kSequenceSchemas[] = {
    {"", "SequenceEmpty", 11, 0, 0, 1, 1, &infer_sequence_empty},
    {"", "SequenceConstruct", 11, 1, -1, 1, 1, &infer_sequence_construct},
    {"", "SequenceInsert", 11, 2, 3, 1, 1, &infer_sequence_insert},
    {"", "SequenceErase", 11, 1, 2, 1, 1, &infer_sequence_erase},
    {"", "SequenceAt", 11, 2, 2, 1, 1, &infer_sequence_at},
    {"", "SequenceLength", 11, 1, 1, 1, 1, &infer_sequence_length},
    {"", "SplitToSequence", 11, 1, 2, 1, 1, &infer_split_to_sequence},
    {"", "SplitToSequence", 24, 1, 2, 1, 1, &infer_split_to_sequence},  // adds bfloat16
    {"", "ConcatFromSequence", 11, 1, 1, 1, 1, &infer_concat_from_sequence},
    {"", "SequenceMap", 17, 1, -1, 1, -1, &infer_sequence_map, &seed_sequence_map_body},
};

}  // namespace

std::span<const OpSchema> sequence_schemas() { return kSequenceSchemas; }

}  // namespace sy
