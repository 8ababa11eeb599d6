#include "schema/schema.h"

#include <algorithm>
#include <string>

#include "schema/op_versions.h"
#include "schema/schema_tables.h"

namespace sy {

const ValueType* InferenceContext::input_type(size_t i) const {
  if (!node_.has_input(i)) return nullptr;
  return &graph_.values[static_cast<size_t>(node_.inputs[i])].type;
}

const Tensor* InferenceContext::input_constant(size_t i) const {
  if (!node_.has_input(i)) return nullptr;
  if (const Tensor* t = graph_.constant(node_.inputs[i])) return t;
  // Before constant folding, exporters' shape arguments (Unsqueeze axes,
  // Reshape shapes) come from Constant nodes: their `value` is as good.
  const NodeId p = graph_.values[static_cast<size_t>(node_.inputs[i])].producer;
  if (p == kNoNode) return nullptr;
  const Node& producer = graph_.nodes[static_cast<size_t>(p)];
  if (producer.removed || !producer.domain.empty() || producer.op_type != "Constant") return nullptr;
  const Attribute* value = producer.attr("value");
  if (value == nullptr || value->type != AttributeType::kTensor || !value->t.is_tensor()) return nullptr;
  return &value->t;
}

const OpSchema* find_schema(std::string_view domain, std::string_view op_type, int64_t opset) {
  domain = normalize_domain(domain);
  const OpSchema* best = nullptr;
  for (SchemaTableFunction family : schema_families()) {
    for (const OpSchema& s : family()) {
      if (s.domain != domain || s.op_type != op_type || s.since_version > opset) continue;
      if (best == nullptr || s.since_version > best->since_version) best = &s;
    }
  }
  return best;
}

int max_supported_opset(std::string_view domain) { return newest_opset(domain); }

Status infer_same_as_input0(InferenceContext& ctx) {
  const ValueType* in = ctx.input_type(0);
  if (in == nullptr) return ctx.error("input 0 is required");
  ctx.output_type(0) = *in;
  return ok_status();
}

Result<ValueType> broadcast_types(const InferenceContext& ctx, std::span<const ValueType* const> inputs) {
  ValueType out = ValueType::tensor(inputs.empty() ? DataType::kUndefined : inputs[0]->dtype);
  size_t rank = 0;
  for (const ValueType* t : inputs) {
    if (!t->has_shape) return out;  // rank unknown: shape unknown
    rank = std::max(rank, t->rank());
  }
  out.has_shape = true;
  out.dims.assign(rank, Dim::known(1));
  for (size_t k = 0; k < rank; ++k) {
    // A known dim other than 1 decides the result (the others must match
    // or be 1). Otherwise the unknown dims decide: one shared symbol stays
    // symbolic, anything else is unknown; all ones give 1.
    int64_t known = 1;
    const Dim* unknown = nullptr;
    bool unknowns_agree = true;
    for (const ValueType* t : inputs) {
      const size_t offset = rank - t->rank();
      if (k < offset) continue;
      const Dim& d = t->dims[k - offset];
      if (d.is_known()) {
        if (d.value == 1) continue;
        if (known != 1 && known != d.value)
          return ctx.error("inputs cannot be broadcast: dimension " + std::to_string(known) + " vs " +
                           std::to_string(d.value));
        known = d.value;
      } else if (unknown == nullptr) {
        unknown = &d;
      } else if (!(d.is_symbolic() && *unknown == d)) {
        unknowns_agree = false;
      }
    }
    if (known != 1 || unknown == nullptr) {
      out.dims[k] = Dim::known(known);
    } else {
      out.dims[k] = unknowns_agree && unknown->is_symbolic() ? *unknown : Dim::unknown();
    }
  }
  return out;
}

Status infer_broadcast(InferenceContext& ctx, DataType dtype) {
  std::vector<const ValueType*> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (const ValueType* t = ctx.input_type(i)) inputs.push_back(t);
  if (inputs.empty()) return ctx.error("needs at least one input");
  SY_ASSIGN_OR_RETURN(ValueType out, broadcast_types(ctx, inputs));
  out.dtype = dtype == DataType::kUndefined ? inputs[0]->dtype : dtype;
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

bool constant_as_int64s(const Tensor* t, std::vector<int64_t>& out) {
  if (t == nullptr) return false;
  const int64_t n = t->num_elements();
  out.resize(static_cast<size_t>(n));
  if (t->dtype() == DataType::kInt64) {
    std::copy(t->data<int64_t>(), t->data<int64_t>() + n, out.begin());
    return true;
  }
  if (t->dtype() == DataType::kInt32) {
    std::copy(t->data<int32_t>(), t->data<int32_t>() + n, out.begin());
    return true;
  }
  return false;
}

std::string ints_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

Result<const ValueType*> required_input(const InferenceContext& ctx, size_t i) {
  const ValueType* t = ctx.input_type(i);
  if (t == nullptr) return ctx.error("input " + std::to_string(i) + " is required");
  return t;
}

namespace {

// "tensor(int32) or tensor(int64)": the types of a type_bit mask.
std::string allowed_types_string(uint64_t allowed) {
  std::string s;
  for (int t = 1; t <= kMaxDataTypeValue; ++t) {
    if (!(allowed & (uint64_t{1} << t))) continue;
    if (!s.empty()) s += " or ";
    s += tensor_type_string(static_cast<DataType>(t));
  }
  return s;
}

}  // namespace

Status check_input_dtype(const InferenceContext& ctx, size_t i, const char* name, uint64_t allowed) {
  const ValueType* t = ctx.input_type(i);
  if (t == nullptr || t->dtype == DataType::kUndefined || (allowed & type_bit(t->dtype))) return ok_status();
  return ctx.error("input " + std::to_string(i) + " (" + name + ") has type " + t->type_string() + ", expected " +
                   allowed_types_string(allowed));
}

int64_t known_count(const ValueType* t) {
  if (t == nullptr || !t->has_shape) return -1;
  int64_t n = 1;
  for (const Dim& d : t->dims) {
    if (!d.is_known()) return -1;
    n *= d.value;
  }
  return n;
}

Status check_stash_type(const InferenceContext& ctx) {
  const int64_t stash = ctx.node().attr_int("stash_type", 1);
  if (stash != 1 && stash != 11 && stash != 16)
    return ctx.error("attribute stash_type must be 1 (float), 11 (double) or 16 (bfloat16), got " +
                     std::to_string(stash));
  return ok_status();
}

Status normalize_axis(const InferenceContext& ctx, int64_t& axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    return ctx.error(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank) + " (expected [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) +
                     "])");
  if (axis < 0) axis += rank;
  return ok_status();
}

Status infer_matmul_shape(const InferenceContext& ctx, const ValueType& a, const ValueType& b, ValueType& out) {
  if (!a.has_shape || !b.has_shape) return ok_status();
  if (a.rank() == 0 || b.rank() == 0)
    return ctx.error("inputs must have rank >= 1; got A " + a.shape_string() + " and B " + b.shape_string());
  const bool a_vector = a.rank() == 1;
  const bool b_vector = b.rank() == 1;
  const Dim& k_a = a.dims.back();
  const Dim& k_b = b_vector ? b.dims[0] : b.dims[b.rank() - 2];
  if (k_a.is_known() && k_b.is_known() && k_a.value != k_b.value)
    return ctx.error("A " + a.shape_string() + " and B " + b.shape_string() + " have different inner dimensions (" +
                     k_a.to_string() + " vs " + k_b.to_string() + ")");
  // Broadcast the batch dims by reusing the elementwise rule on them alone.
  ValueType a_batch = ValueType::tensor(a.dtype, std::vector<Dim>(a.dims.begin(), a.dims.end() - (a_vector ? 1 : 2)));
  ValueType b_batch = ValueType::tensor(b.dtype, std::vector<Dim>(b.dims.begin(), b.dims.end() - (b_vector ? 1 : 2)));
  const ValueType* batches[] = {&a_batch, &b_batch};
  SY_ASSIGN_OR_RETURN(ValueType batch, broadcast_types(ctx, batches));
  out.has_shape = true;
  out.dims = batch.dims;
  if (!a_vector) out.dims.push_back(a.dims[a.rank() - 2]);
  if (!b_vector) out.dims.push_back(b.dims.back());
  return ok_status();
}

}  // namespace sy
