// Schemas of the random generators: RandomNormal and RandomUniform (shape
// from the attribute), their Like forms (shape of the input), Bernoulli and
// Multinomial. The output type is the dtype attribute where given.
#include <string>
#include <vector>

#include "schema/schema.h"

namespace sy {
namespace {

constexpr uint64_t kFloatTypes = type_bit(DataType::kFloat) | type_bit(DataType::kDouble) |
                                 type_bit(DataType::kFloat16) | type_bit(DataType::kBfloat16);

// The dtype attribute, or `fallback` when absent; an error unless it is one
// of `allowed`.
Status read_dtype(const InferenceContext& ctx, DataType fallback, uint64_t allowed, DataType& out) {
  const int64_t v = ctx.node().attr_int("dtype", static_cast<int64_t>(fallback));
  if (v <= 0 || v > INT32_MAX || !is_valid_data_type(static_cast<int32_t>(v)) ||
      (allowed & type_bit(static_cast<DataType>(v))) == 0)
    return ctx.error("attribute dtype " + std::to_string(v) + " is not a type this op makes");
  out = static_cast<DataType>(v);
  return ok_status();
}

Status infer_random_with_shape(InferenceContext& ctx) {
  DataType dtype = DataType::kFloat;
  SY_RETURN_IF_ERROR(read_dtype(ctx, DataType::kFloat, kFloatTypes, dtype));
  if (!ctx.node().has_attr("shape")) return ctx.error("attribute shape is required");
  ValueType out = ValueType::tensor(dtype);
  out.has_shape = true;
  for (int64_t d : ctx.node().attr_ints("shape")) {
    if (d < 0) return ctx.error("shape " + ints_string(ctx.node().attr_ints("shape")) + " has a negative dim");
    out.dims.push_back(Dim::known(d));
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// RandomNormalLike, RandomUniformLike and Bernoulli: the input's shape.
Status infer_random_like(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  DataType dtype = in->dtype;
  if (ctx.node().has_attr("dtype") || dtype == DataType::kUndefined) {
    const uint64_t allowed = ctx.node().op_type == "Bernoulli" ? ~uint64_t{0} : kFloatTypes;
    SY_RETURN_IF_ERROR(read_dtype(ctx, dtype == DataType::kUndefined ? DataType::kFloat : dtype, allowed, dtype));
  }
  ValueType out = *in;
  out.dtype = dtype;
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_multinomial(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  DataType dtype = DataType::kInt32;
  SY_RETURN_IF_ERROR(
      read_dtype(ctx, DataType::kInt32, type_bit(DataType::kInt32) | type_bit(DataType::kInt64), dtype));
  const int64_t samples = ctx.node().attr_int("sample_size", 1);
  if (samples < 1) return ctx.error("sample_size must be positive; got " + std::to_string(samples));
  if (in->has_shape && in->rank() != 2)
    return ctx.error("input must be [batch_size, class_size]; got " + in->shape_string());
  ValueType out = ValueType::tensor(dtype);
  if (in->has_shape) {
    out.has_shape = true;
    out.dims = {in->dims[0], Dim::known(samples)};
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

constexpr OpSchema kRandomSchemas[] = {
    {"", "RandomNormal", 1, 0, 0, 1, 1, &infer_random_with_shape},
    {"", "RandomUniform", 1, 0, 0, 1, 1, &infer_random_with_shape},
    {"", "RandomNormalLike", 1, 1, 1, 1, 1, &infer_random_like},
    {"", "RandomUniformLike", 1, 1, 1, 1, 1, &infer_random_like},
    {"", "Bernoulli", 15, 1, 1, 1, 1, &infer_random_like},
    {"", "Multinomial", 7, 1, 1, 1, 1, &infer_multinomial},
};

}  // namespace

std::span<const OpSchema> random_schemas() { return kRandomSchemas; }

}  // namespace sy
