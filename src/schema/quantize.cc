// Schemas of the linear quantization family: QuantizeLinear,
// DequantizeLinear and DynamicQuantizeLinear, with the shape rules of
// their scales and zero points (schema/quantize.h) that the kernels share.
#include "schema/quantize.h"

#include <string>
#include <vector>

#include "schema/schema.h"

namespace sy {
namespace {

std::string dims_string(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ",";
    s += dims[i] < 0 ? "?" : std::to_string(dims[i]);
  }
  return s + "]";
}

}  // namespace

std::string check_quant_scale_shape(std::span<const int64_t> x, std::span<const int64_t> scale, int64_t axis,
                                    int64_t block_size, const std::string& scale_label, QuantParamShape& out) {
  if (block_size < 0) return "attribute block_size is " + std::to_string(block_size) + "; it must be 0 or positive";
  out = QuantParamShape{};
  if (scale.empty() || (scale.size() == 1 && scale[0] == 1 && block_size == 0)) return "";
  const auto rank = static_cast<int64_t>(x.size());
  if (axis < -rank || axis >= rank)
    return "attribute axis " + std::to_string(axis) + " is out of range for x of rank " + std::to_string(rank) +
           " (expected [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "])";
  if (axis < 0) axis += rank;
  out.axis = axis;
  const int64_t dim = x[static_cast<size_t>(axis)];
  if (block_size == 0) {
    out.granularity = QuantGranularity::kPerAxis;
    if (scale.size() != 1)
      return scale_label + " has shape " + dims_string(scale) + ": per-axis quantization takes a 1-D scale of x's dim " +
             std::to_string(axis) + " (" + (dim < 0 ? std::string("?") : std::to_string(dim)) +
             "), and blocked quantization needs attribute block_size";
    if (dim >= 0 && scale[0] >= 0 && scale[0] != dim)
      return scale_label + " has " + std::to_string(scale[0]) + " elements, but per-axis quantization along axis " +
             std::to_string(axis) + " needs one per element of that dim of x " + dims_string(x) + ", " +
             std::to_string(dim);
    return "";
  }
  out.granularity = QuantGranularity::kBlocked;
  if (scale.size() != x.size())
    return scale_label + " has shape " + dims_string(scale) + ", but blocked quantization needs the rank of x " +
           dims_string(x);
  for (size_t d = 0; d < x.size(); ++d) {
    if (x[d] < 0 || scale[d] < 0) continue;
    const int64_t expected = static_cast<int64_t>(d) == axis ? (x[d] + block_size - 1) / block_size : x[d];
    if (scale[d] == expected) continue;
    if (static_cast<int64_t>(d) != axis)
      return scale_label + " has shape " + dims_string(scale) + ", but blocked quantization needs x's dims " +
             dims_string(x) + " except along axis " + std::to_string(axis) + " (dim " + std::to_string(d) +
             " differs)";
    return scale_label + " has " + std::to_string(scale[d]) + " blocks along axis " + std::to_string(axis) +
           ", but block_size " + std::to_string(block_size) + " divides x's " + std::to_string(x[d]) +
           " elements there into ceil(" + std::to_string(x[d]) + " / " + std::to_string(block_size) +
           ") = " + std::to_string(expected);
  }
  return "";
}

std::string check_zero_point_shape(std::span<const int64_t> scale, std::span<const int64_t> zero_point,
                                   const std::string& scale_label, const std::string& zero_point_label) {
  // A scalar and a 1-element 1-D tensor both mean per-tensor (the ONNX node
  // tests pair a scalar scale with a [1] zero point).
  auto one = [](std::span<const int64_t> d) { return d.empty() || (d.size() == 1 && d[0] == 1); };
  if (one(scale) && one(zero_point)) return "";
  bool same = scale.size() == zero_point.size();
  for (size_t d = 0; same && d < scale.size(); ++d)
    same = scale[d] < 0 || zero_point[d] < 0 || scale[d] == zero_point[d];
  if (same) return "";
  return zero_point_label + " has shape " + dims_string(zero_point) + ", but it must have the shape of " +
         scale_label + ", " + dims_string(scale);
}

namespace {

std::string type_name(DataType t) { return std::string(data_type_name(t)); }

// Dims with -1 for unknown ones; false when the rank is unknown.
bool known_dims(const ValueType* t, std::vector<int64_t>& dims) {
  if (t == nullptr || !t->has_shape) return false;
  dims.clear();
  for (const Dim& d : t->dims) dims.push_back(d.is_known() ? d.value : -1);
  return true;
}

// The types QuantizeLinear-`opset` may quantize to.
uint64_t quantized_types(int opset) {
  uint64_t m = type_bit(DataType::kInt8) | type_bit(DataType::kUint8);
  if (opset >= 19)
    m |= type_bit(DataType::kFloat8E4M3FN) | type_bit(DataType::kFloat8E4M3FNUZ) | type_bit(DataType::kFloat8E5M2) |
         type_bit(DataType::kFloat8E5M2FNUZ);
  if (opset >= 21)
    m |= type_bit(DataType::kInt16) | type_bit(DataType::kUint16) | type_bit(DataType::kInt4) |
         type_bit(DataType::kUint4);
  if (opset >= 23) m |= type_bit(DataType::kFloat4E2M1);
  if (opset >= 25) m |= type_bit(DataType::kInt2) | type_bit(DataType::kUint2);
  return m;
}

constexpr uint64_t kRealTypes =
    type_bit(DataType::kFloat) | type_bit(DataType::kFloat16) | type_bit(DataType::kBfloat16);

// Attribute `name` of the versions from `since` on, a data type in
// `allowed`; kUndefined when it is absent or 0.
Result<DataType> type_attr(const InferenceContext& ctx, const char* name, int since, uint64_t allowed,
                           const char* expected) {
  const int64_t v = ctx.opset() >= since ? ctx.node().attr_int(name, 0) : 0;
  if (v == 0) return DataType::kUndefined;
  if (!is_valid_data_type(static_cast<int32_t>(v)) || (allowed & type_bit(static_cast<DataType>(v))) == 0)
    return ctx.error("attribute " + std::string(name) + " is " + std::to_string(v) + "; it must be " + expected);
  return static_cast<DataType>(v);
}

// The scale's and zero point's shapes against x's (where known).
Status check_params(const InferenceContext& ctx, const ValueType& x, const char* scale_name,
                    const char* zero_point_name) {
  const int64_t block_size = ctx.opset() >= 21 ? ctx.node().attr_int("block_size", 0) : 0;
  const int64_t axis = ctx.opset() >= 13 ? ctx.node().attr_int("axis", 1) : 1;
  const std::string scale_label = std::string("input 1 (") + scale_name + ")";
  std::vector<int64_t> x_dims, scale_dims, zp_dims;
  const bool scale_known = known_dims(ctx.input_type(1), scale_dims);
  if (scale_known && ctx.has_input(2) && known_dims(ctx.input_type(2), zp_dims)) {
    const std::string problem =
        check_zero_point_shape(scale_dims, zp_dims, scale_label, std::string("input 2 (") + zero_point_name + ")");
    if (!problem.empty()) return ctx.error(problem);
  }
  if (block_size < 0)
    return ctx.error("attribute block_size is " + std::to_string(block_size) + "; it must be 0 or positive");
  if (!scale_known || !known_dims(&x, x_dims)) return ok_status();
  if (ctx.opset() < 13 && !scale_dims.empty() && !(scale_dims.size() == 1 && scale_dims[0] == 1))
    return ctx.error(scale_label + " must be a scalar before opset 13 (per-tensor quantization only)");
  QuantParamShape shape;
  const std::string problem = check_quant_scale_shape(x_dims, scale_dims, axis, block_size, scale_label, shape);
  return problem.empty() ? ok_status() : ctx.error(problem);
}

Status infer_quantize_linear(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  SY_RETURN_IF_ERROR(required_input(ctx, 1).status());
  SY_ASSIGN_OR_RETURN(const DataType from_attr,
                      type_attr(ctx, "output_dtype", 21, quantized_types(ctx.opset()),
                                "a type this version of QuantizeLinear produces (or 0: the zero point's type)"));
  const ValueType* zp = ctx.input_type(2);
  DataType out = from_attr != DataType::kUndefined ? from_attr : DataType::kUint8;
  if (zp != nullptr && zp->dtype != DataType::kUndefined) {
    if (from_attr != DataType::kUndefined && zp->dtype != from_attr)
      return ctx.error("input 2 (y_zero_point) has type " + type_name(zp->dtype) + ", but attribute output_dtype says " +
                       type_name(from_attr) + "; the zero point must have the output's type");
    out = zp->dtype;
  }
  if ((quantized_types(ctx.opset()) & type_bit(out)) == 0)
    return ctx.error("cannot quantize to " + type_name(out) + " at opset " + std::to_string(ctx.opset()));
  const int64_t saturate = ctx.opset() >= 19 ? ctx.node().attr_int("saturate", 1) : 1;
  if (saturate != 0 && saturate != 1)
    return ctx.error("attribute saturate must be 0 or 1, got " + std::to_string(saturate));
  SY_RETURN_IF_ERROR(type_attr(ctx, "precision", 23, kRealTypes | type_bit(DataType::kInt32),
                               "float, float16, bfloat16 or int32 (or 0: the scale's type)")
                         .status());
  SY_RETURN_IF_ERROR(check_params(ctx, *x, "y_scale", "y_zero_point"));
  ctx.output_type(0) = *x;
  ctx.output_type(0).dtype = out;
  return ok_status();
}

Status infer_dequantize_linear(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* scale, required_input(ctx, 1));
  DataType out = ctx.opset() >= 19 ? scale->dtype : DataType::kFloat;
  SY_ASSIGN_OR_RETURN(const DataType from_attr,
                      type_attr(ctx, "output_dtype", 23, kRealTypes,
                                "float, float16 or bfloat16 (or 0: the scale's type)"));
  if (from_attr != DataType::kUndefined) {
    out = from_attr;
  } else if (out != DataType::kUndefined && (kRealTypes & type_bit(out)) == 0) {
    return ctx.error("input 1 (x_scale) has type " + type_name(out) +
                     ", which cannot be the output's type; set attribute output_dtype");
  }
  SY_RETURN_IF_ERROR(check_params(ctx, *x, "x_scale", "x_zero_point"));
  ctx.output_type(0) = *x;
  ctx.output_type(0).dtype = out;
  return ok_status();
}

Status infer_dynamic_quantize_linear(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  ctx.output_type(0) = *x;
  ctx.output_type(0).dtype = DataType::kUint8;
  for (size_t i = 1; i < ctx.num_outputs(); ++i)
    ctx.output_type(i) = ValueType::tensor(i == 1 ? DataType::kFloat : DataType::kUint8, std::vector<Dim>{});
  return ok_status();
}

constexpr OpSchema kQuantizeSchemas[] = {
    {"", "QuantizeLinear", 10, 2, 3, 1, 1, &infer_quantize_linear},
    {"", "DequantizeLinear", 10, 2, 3, 1, 1, &infer_dequantize_linear},
    {"", "DynamicQuantizeLinear", 11, 1, 1, 3, 3, &infer_dynamic_quantize_linear},
};

}  // namespace

std::span<const OpSchema> quantize_schemas() { return kQuantizeSchemas; }

}  // namespace sy
