#include "schema/schema.h"

#include <algorithm>

#include "schema/op_versions.h"
#include "schema/schema_tables.h"

namespace sy {

const ValueType* InferenceContext::input_type(size_t i) const {
  if (!node_.has_input(i)) return nullptr;
  return &graph_.values[static_cast<size_t>(node_.inputs[i])].type;
}

const Tensor* InferenceContext::input_constant(size_t i) const {
  if (!node_.has_input(i)) return nullptr;
  return graph_.constant(node_.inputs[i]);
}

const OpSchema* find_schema(std::string_view domain, std::string_view op_type, int64_t opset) {
  domain = normalize_domain(domain);
  const OpSchema* best = nullptr;
  for (auto table : {elementwise_schemas(), normalization_schemas(), reduce_schemas(), nn_schemas(),
                     matmul_schemas(), tensor_schemas(), indexing_schemas(), image_schemas(), sorting_schemas()}) {
    for (const OpSchema& s : table) {
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

}  // namespace sy
