// Schemas of TopK, Unique, CumSum, CumProd, Dropout and Swish (the last
// sits here beside its kernel's family, dropout.cc).
#include <string>
#include <vector>

#include "schema/schema.h"

namespace sy {
namespace {

// Sets an optional output's type when the node has that output.
void set_output(InferenceContext& ctx, size_t i, ValueType t) {
  if (i < ctx.num_outputs()) ctx.output_type(i) = std::move(t);
}

// ---- TopK -----------------------------------------------------------------------

Status infer_topk(InferenceContext& ctx) {
  const ValueType* in = ctx.input_type(0);
  if (in == nullptr) return ctx.error("input 0 (X) is required");
  Dim k = Dim::unknown();
  if (ctx.opset() < 10) {
    if (!ctx.node().has_attr("k")) return ctx.error("attribute 'k' is required");
    const int64_t kv = ctx.node().attr_int("k", 0);
    if (kv < 0) return ctx.error("k must be >= 0, got " + std::to_string(kv));
    k = Dim::known(kv);
  } else {
    SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "K", type_bit(DataType::kInt64)));
    std::vector<int64_t> kv;
    if (constant_as_int64s(ctx.input_constant(1), kv)) {
      if (kv.size() != 1) return ctx.error("K must hold one value, got " + std::to_string(kv.size()));
      if (kv[0] < 0) return ctx.error("K must be >= 0, got " + std::to_string(kv[0]));
      k = Dim::known(kv[0]);
    }
  }
  if (ctx.opset() >= 11) {
    for (const char* name : {"largest", "sorted"}) {
      const int64_t v = ctx.node().attr_int(name, 1);
      if (v != 0 && v != 1) return ctx.error(std::string(name) + " must be 0 or 1, got " + std::to_string(v));
    }
  }
  ValueType values = ValueType::tensor(in->dtype);
  ValueType indices = ValueType::tensor(DataType::kInt64);
  if (in->has_shape) {
    int64_t axis = ctx.node().attr_int("axis", -1);
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, static_cast<int64_t>(in->rank())));
    const Dim& d = in->dims[static_cast<size_t>(axis)];
    if (k.is_known() && d.is_known() && k.value > d.value)
      return ctx.error("k is " + std::to_string(k.value) + " but axis " + std::to_string(axis) + " of input 0 " +
                       in->shape_string() + " has only " + std::to_string(d.value) + " elements");
    values.has_shape = true;
    values.dims = in->dims;
    values.dims[static_cast<size_t>(axis)] = k;
    indices.has_shape = true;
    indices.dims = values.dims;
  }
  set_output(ctx, 0, std::move(values));
  set_output(ctx, 1, std::move(indices));
  return ok_status();
}

// ---- Unique ---------------------------------------------------------------------

Status infer_unique(InferenceContext& ctx) {
  const ValueType* in = ctx.input_type(0);
  if (in == nullptr) return ctx.error("input 0 (X) is required");
  const int64_t sorted = ctx.node().attr_int("sorted", 1);
  if (sorted != 0 && sorted != 1) return ctx.error("sorted must be 0 or 1, got " + std::to_string(sorted));
  // The number of unique values depends on the data: that dim is unknown.
  ValueType y = ValueType::tensor(in->dtype);
  Dim inverse_len = Dim::unknown();
  if (ctx.node().has_attr("axis")) {
    if (in->has_shape) {
      int64_t axis = ctx.node().attr_int("axis", 0);
      SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, static_cast<int64_t>(in->rank())));
      y.has_shape = true;
      y.dims = in->dims;
      y.dims[static_cast<size_t>(axis)] = Dim::unknown();
      inverse_len = in->dims[static_cast<size_t>(axis)];
    }
  } else {
    y.has_shape = true;
    y.dims = {Dim::unknown()};
    if (in->has_shape && in->is_static()) inverse_len = Dim::known(in->static_shape().num_elements());
    if (in->has_shape && in->rank() == 1) inverse_len = in->dims[0];
  }
  set_output(ctx, 0, std::move(y));
  set_output(ctx, 1, ValueType::tensor(DataType::kInt64, {Dim::unknown()}));
  set_output(ctx, 2, ValueType::tensor(DataType::kInt64, {inverse_len}));
  set_output(ctx, 3, ValueType::tensor(DataType::kInt64, {Dim::unknown()}));
  return ok_status();
}

// ---- CumSum, CumProd ------------------------------------------------------------

Status infer_cumulative(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(infer_same_as_input0(ctx));
  const ValueType* axis_type = ctx.input_type(1);
  if (axis_type == nullptr) return ctx.error("input 1 (axis) is required");
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "axis", type_bit(DataType::kInt32) | type_bit(DataType::kInt64)));
  if (axis_type->has_shape && axis_type->rank() > 1)
    return ctx.error("input 1 (axis) must be a scalar, got shape " + axis_type->shape_string());
  for (const char* name : {"exclusive", "reverse"}) {
    const int64_t v = ctx.node().attr_int(name, 0);
    if (v != 0 && v != 1) return ctx.error(std::string(name) + " must be 0 or 1, got " + std::to_string(v));
  }
  const ValueType* in = ctx.input_type(0);
  std::vector<int64_t> axis;
  if (in->has_shape && in->rank() > 0 && constant_as_int64s(ctx.input_constant(1), axis)) {
    if (axis.size() != 1) return ctx.error("input 1 (axis) must hold one value, got " + std::to_string(axis.size()));
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis[0], static_cast<int64_t>(in->rank())));
  }
  return ok_status();
}

// ---- Dropout --------------------------------------------------------------------

Status infer_dropout(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(infer_same_as_input0(ctx));
  const ValueType* in = ctx.input_type(0);
  if (ctx.opset() >= 12) {
    constexpr uint64_t kFloatTypes = type_bit(DataType::kFloat16) | type_bit(DataType::kFloat) |
                                     type_bit(DataType::kDouble) | type_bit(DataType::kBfloat16) |
                                     type_bit(DataType::kFloat8E4M3FN) | type_bit(DataType::kFloat8E4M3FNUZ) |
                                     type_bit(DataType::kFloat8E5M2) | type_bit(DataType::kFloat8E5M2FNUZ);
    SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "ratio", kFloatTypes));
    SY_RETURN_IF_ERROR(check_input_dtype(ctx, 2, "training_mode", type_bit(DataType::kBool)));
    for (size_t i = 1; i < 3; ++i) {
      const ValueType* t = ctx.input_type(i);
      if (t != nullptr && t->has_shape && t->rank() > 1)
        return ctx.error("input " + std::to_string(i) + " must be a scalar, got shape " + t->shape_string());
    }
  }
  if (ctx.num_outputs() > 1) {
    ValueType mask = *in;
    if (ctx.opset() >= 10) mask.dtype = DataType::kBool;  // before 10 the mask has the data's type
    ctx.output_type(1) = std::move(mask);
  }
  return ok_status();
}

constexpr OpSchema kSortingSchemas[] = {
    {"", "TopK", 1, 1, 1, 2, 2, &infer_topk},  // k is an attribute
    {"", "TopK", 10, 2, 2, 2, 2, &infer_topk},  // k is an input; 11 adds largest and sorted
    {"", "Unique", 11, 1, 1, 1, 4, &infer_unique},
    {"", "CumSum", 11, 2, 2, 1, 1, &infer_cumulative},
    {"", "CumProd", 26, 2, 2, 1, 1, &infer_cumulative},
    {"", "Dropout", 7, 1, 1, 1, 2, &infer_dropout},
    {"", "Dropout", 12, 1, 3, 1, 2, &infer_dropout},  // ratio and training_mode become inputs
    {"", "Swish", 24, 1, 1, 1, 1, &infer_same_as_input0},
};

}  // namespace

std::span<const OpSchema> sorting_schemas() { return kSortingSchemas; }

}  // namespace sy
