// Schemas of the padding, scatter and index-driven ops: Pad, CenterCropPad,
// Scatter, ScatterElements, ScatterND, TensorScatter, OneHot, Compress,
// NonZero, ReverseSequence, BitCast, DepthToSpace and SpaceToDepth.
// Output shapes are derived from constant pads / shape / depth inputs when
// there are some; data-dependent sizes (Compress, NonZero) stay unknown.
#include <cmath>
#include <string>
#include <vector>

#include "core/checked_math.h"
#include "schema/schema.h"

namespace sy {
namespace {

constexpr uint64_t kInt64Only = type_bit(DataType::kInt64);
constexpr uint64_t kInt32Or64 = type_bit(DataType::kInt32) | type_bit(DataType::kInt64);
constexpr uint64_t kBoolOnly = type_bit(DataType::kBool);

// Checks an input's rank, when known.
Status check_input_rank(const InferenceContext& ctx, size_t i, const char* name, size_t rank) {
  const ValueType* t = ctx.input_type(i);
  if (t == nullptr || !t->has_shape || t->rank() == rank) return ok_status();
  return ctx.error("input " + std::to_string(i) + " (" + name + ") must have rank " + std::to_string(rank) + ", got " +
                   t->shape_string());
}

// A float depth as an integer; false (unknown, left to the kernel to
// refuse) when NaN or beyond int64, where the conversion is undefined.
bool float_as_int64(double v, int64_t& out) {
  if (!(std::fabs(v) < 9.2e18)) return false;
  out = static_cast<int64_t>(v);
  return true;
}

// The first element of a constant numeric tensor as an integer (OneHot's
// depth may be any numeric type).
bool constant_scalar_int(const Tensor* t, int64_t& out) {
  if (t == nullptr || t->num_elements() != 1) return false;
  switch (t->dtype()) {
    case DataType::kInt64:
      out = t->data<int64_t>()[0];
      return true;
    case DataType::kInt32:
      out = t->data<int32_t>()[0];
      return true;
    case DataType::kInt16:
      out = t->data<int16_t>()[0];
      return true;
    case DataType::kInt8:
      out = t->data<int8_t>()[0];
      return true;
    case DataType::kUint8:
      out = t->data<uint8_t>()[0];
      return true;
    case DataType::kUint16:
      out = t->data<uint16_t>()[0];
      return true;
    case DataType::kUint32:
      out = t->data<uint32_t>()[0];
      return true;
    case DataType::kUint64:
      out = static_cast<int64_t>(t->data<uint64_t>()[0]);
      return true;
    case DataType::kFloat:
      return float_as_int64(t->data<float>()[0], out);
    case DataType::kDouble:
      return float_as_int64(t->data<double>()[0], out);
    case DataType::kFloat16:
      return float_as_int64(float16_to_float(t->data<uint16_t>()[0]), out);
    default:
      return false;
  }
}

// ---- Pad ------------------------------------------------------------------------

Status infer_pad(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  const std::string mode = ctx.node().attr_string("mode", "constant");
  const bool wrap_ok = ctx.opset() >= 19;
  if (mode != "constant" && mode != "reflect" && mode != "edge" && !(wrap_ok && mode == "wrap"))
    return ctx.error("mode '" + mode + "' is not supported (expected constant, reflect, edge" +
                     (wrap_ok ? ", wrap)" : ")"));
  ValueType out = ValueType::tensor(in->dtype);
  if (!in->has_shape) {
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  const auto rank = static_cast<int64_t>(in->rank());
  out.has_shape = true;
  out.dims = in->dims;

  std::vector<int64_t> pads;
  std::vector<int64_t> axes;
  bool pads_known = true;
  bool axes_known = true;
  if (ctx.opset() < 11) {
    const char* name = ctx.opset() >= 2 ? "pads" : "paddings";
    if (!ctx.node().has_attr(name)) return ctx.error(std::string("attribute '") + name + "' is required");
    pads = ctx.node().attr_ints(name);
  } else {
    SY_RETURN_IF_ERROR(required_input(ctx, 1).status());
    SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "pads", kInt64Only));
    SY_RETURN_IF_ERROR(check_input_dtype(ctx, 3, "axes", kInt32Or64));
    if (ctx.has_input(2)) {
      const ValueType* v = ctx.input_type(2);
      if (v != nullptr && v->dtype != DataType::kUndefined && in->dtype != DataType::kUndefined &&
          v->dtype != in->dtype)
        return ctx.error("input 2 (constant_value) has type " + v->type_string() + ", expected " + in->type_string() +
                         " like input 0");
    }
    pads_known = constant_as_int64s(ctx.input_constant(1), pads);
    if (ctx.has_input(3)) axes_known = constant_as_int64s(ctx.input_constant(3), axes);
  }
  if (ctx.has_input(3) && !axes_known) {
    // Any axis may change.
    out.dims.assign(in->rank(), Dim::unknown());
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  if (!ctx.has_input(3)) {
    axes.resize(in->rank());
    for (int64_t k = 0; k < rank; ++k) axes[static_cast<size_t>(k)] = k;
  }
  for (int64_t& a : axes) SY_RETURN_IF_ERROR(normalize_axis(ctx, a, rank));
  if (!pads_known) {
    for (int64_t a : axes) out.dims[static_cast<size_t>(a)] = Dim::unknown();
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  if (pads.size() != 2 * axes.size())
    return ctx.error("pads " + ints_string(pads) + " must have 2 * " + std::to_string(axes.size()) +
                     " values for input 0 " + in->shape_string());
  const size_t n = axes.size();
  for (size_t i = 0; i < n; ++i) {
    Dim& d = out.dims[static_cast<size_t>(axes[i])];
    int64_t add = 0;
    int64_t padded = 0;
    if (!checked_add(pads[i], pads[i + n], add) || (d.is_known() && !checked_add(d.value, add, padded)))
      return ctx.error("pads " + ints_string(pads) + " on axis " + std::to_string(axes[i]) + " of input 0 " +
                       in->shape_string() + " overflow int64");
    if (d.is_known()) {
      if (padded < 0)
        return ctx.error("pads " + ints_string(pads) + " remove more than input 0 " + in->shape_string() +
                         " has on axis " + std::to_string(axes[i]));
      d = Dim::known(padded);
    } else if (add != 0) {
      d = Dim::unknown();
    }
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_center_crop_pad(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  SY_RETURN_IF_ERROR(required_input(ctx, 1).status());
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "shape", kInt32Or64));
  ValueType out = ValueType::tensor(in->dtype);
  if (!in->has_shape) {
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  const auto rank = static_cast<int64_t>(in->rank());
  std::vector<int64_t> axes = ctx.node().attr_ints("axes");
  if (!ctx.node().has_attr("axes")) {
    axes.resize(in->rank());
    for (int64_t k = 0; k < rank; ++k) axes[static_cast<size_t>(k)] = k;
  }
  for (int64_t& a : axes) SY_RETURN_IF_ERROR(normalize_axis(ctx, a, rank));
  out.has_shape = true;
  out.dims = in->dims;
  std::vector<int64_t> shape;
  const bool known = constant_as_int64s(ctx.input_constant(1), shape);
  if (known && shape.size() != axes.size())
    return ctx.error("shape " + ints_string(shape) + " must have " + std::to_string(axes.size()) +
                     " values, one per axis");
  for (size_t i = 0; i < axes.size(); ++i) {
    if (known && shape[i] < 0) return ctx.error("shape " + ints_string(shape) + " has a negative dimension");
    out.dims[static_cast<size_t>(axes[i])] = known ? Dim::known(shape[i]) : Dim::unknown();
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- Scatter family -------------------------------------------------------------

Status check_reduction(const InferenceContext& ctx) {
  if (ctx.opset() < 16) return ok_status();
  const std::string r = ctx.node().attr_string("reduction", "none");
  const bool minmax = ctx.opset() >= 18;
  if (r == "none" || r == "add" || r == "mul" || (minmax && (r == "max" || r == "min"))) return ok_status();
  return ctx.error("reduction '" + r + "' is not supported (expected none, add, mul" + (minmax ? ", max, min)" : ")"));
}

Status infer_scatter_elements(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* data, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* indices, required_input(ctx, 1));
  SY_ASSIGN_OR_RETURN(const ValueType* updates, required_input(ctx, 2));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "indices", kInt32Or64));
  SY_RETURN_IF_ERROR(check_reduction(ctx));
  if (data->has_shape) {
    if (data->rank() == 0) return ctx.error("input 0 (data) must have rank >= 1, got a scalar");
    int64_t axis = ctx.node().attr_int("axis", 0);
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, static_cast<int64_t>(data->rank())));
    if (indices->has_shape && indices->rank() != data->rank())
      return ctx.error("input 1 (indices) " + indices->shape_string() + " must have the rank of data " +
                       data->shape_string());
  }
  if (indices->has_shape && updates->has_shape && indices->rank() != updates->rank())
    return ctx.error("input 2 (updates) " + updates->shape_string() + " must have the shape of indices " +
                     indices->shape_string());
  return infer_same_as_input0(ctx);
}

Status infer_scatter_nd(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* data, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* indices, required_input(ctx, 1));
  SY_ASSIGN_OR_RETURN(const ValueType* updates, required_input(ctx, 2));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "indices", kInt64Only));
  SY_RETURN_IF_ERROR(check_reduction(ctx));
  if (data->has_shape && data->rank() == 0) return ctx.error("input 0 (data) must have rank >= 1, got a scalar");
  if (indices->has_shape) {
    if (indices->rank() == 0) return ctx.error("input 1 (indices) must have rank >= 1, got a scalar");
    const Dim& last = indices->dims.back();
    if (data->has_shape && last.is_known()) {
      const auto k = static_cast<size_t>(last.value);
      if (k > data->rank())
        return ctx.error("input 1 (indices) " + indices->shape_string() + " has tuples of " + std::to_string(k) +
                         " indices, more than the rank of data " + data->shape_string());
      const size_t want = indices->rank() - 1 + data->rank() - k;
      if (updates->has_shape && updates->rank() != want)
        return ctx.error("input 2 (updates) " + updates->shape_string() + " must have rank " + std::to_string(want) +
                         " (indices " + indices->shape_string() + ", data " + data->shape_string() + ")");
    }
  }
  return infer_same_as_input0(ctx);
}

Status infer_tensor_scatter(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* past, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* update, required_input(ctx, 1));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 2, "write_indices", kInt64Only));
  SY_RETURN_IF_ERROR(check_input_rank(ctx, 2, "write_indices", 1));
  const std::string mode = ctx.node().attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return ctx.error("mode '" + mode + "' is not supported (expected linear or circular)");
  if (past->has_shape) {
    const auto rank = static_cast<int64_t>(past->rank());
    if (rank < 2) return ctx.error("input 0 (past_cache) must have rank >= 2, got " + past->shape_string());
    int64_t axis = ctx.node().attr_int("axis", -2);
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, rank));
    if (axis == 0) return ctx.error("axis must not be 0 (the batch axis)");
    if (update->has_shape && update->rank() != past->rank())
      return ctx.error("input 1 (update) " + update->shape_string() + " must have the rank of past_cache " +
                       past->shape_string());
  }
  if (update->dtype != DataType::kUndefined && past->dtype != DataType::kUndefined && update->dtype != past->dtype)
    return ctx.error("input 1 (update) has type " + update->type_string() + ", expected " + past->type_string());
  return infer_same_as_input0(ctx);
}

// ---- OneHot -----------------------------------------------------------------------

Status infer_one_hot(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* indices, required_input(ctx, 0));
  SY_RETURN_IF_ERROR(required_input(ctx, 1).status());
  SY_ASSIGN_OR_RETURN(const ValueType* values, required_input(ctx, 2));
  if (values->has_shape && (values->rank() != 1 || (values->dims[0].is_known() && values->dims[0].value != 2)))
    return ctx.error("input 2 (values) must have shape [2], got " + values->shape_string());
  ValueType out = ValueType::tensor(values->dtype);
  if (indices->has_shape) {
    const auto rank = static_cast<int64_t>(indices->rank()) + 1;
    int64_t axis = ctx.node().attr_int("axis", -1);
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, rank));
    int64_t depth = 0;
    Dim d = Dim::unknown();
    if (constant_scalar_int(ctx.input_constant(1), depth)) {
      if (depth < 0) return ctx.error("depth " + std::to_string(depth) + " is negative");
      d = Dim::known(depth);
    }
    out.has_shape = true;
    out.dims = indices->dims;
    out.dims.insert(out.dims.begin() + axis, d);
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- Compress / NonZero ---------------------------------------------------------

Status infer_compress(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  SY_RETURN_IF_ERROR(required_input(ctx, 1).status());
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "condition", kBoolOnly));
  SY_RETURN_IF_ERROR(check_input_rank(ctx, 1, "condition", 1));
  ValueType out = ValueType::tensor(in->dtype);
  // The count of true entries, when the condition is constant.
  Dim selected = Dim::unknown();
  if (const Tensor* c = ctx.input_constant(1); c != nullptr && c->dtype() == DataType::kBool) {
    int64_t n = 0;
    for (int64_t i = 0; i < c->num_elements(); ++i) n += c->data<bool>()[i] ? 1 : 0;
    selected = Dim::known(n);
  }
  if (!ctx.node().has_attr("axis")) {
    out.has_shape = true;
    out.dims = {selected};
  } else if (in->has_shape) {
    const auto rank = static_cast<int64_t>(in->rank());
    if (rank == 0) return ctx.error("input 0 must have rank >= 1 when axis is given, got a scalar");
    int64_t axis = ctx.node().attr_int("axis", 0);
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, rank));
    out.has_shape = true;
    out.dims = in->dims;
    out.dims[static_cast<size_t>(axis)] = selected;
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_non_zero(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  ValueType out = ValueType::tensor(DataType::kInt64);
  out.has_shape = true;
  out.dims = {in->has_shape ? Dim::known(static_cast<int64_t>(in->rank())) : Dim::unknown(), Dim::unknown()};
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- ReverseSequence ------------------------------------------------------------

Status infer_reverse_sequence(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* lens, required_input(ctx, 1));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "sequence_lens", kInt64Only));
  SY_RETURN_IF_ERROR(check_input_rank(ctx, 1, "sequence_lens", 1));
  const int64_t batch_axis = ctx.node().attr_int("batch_axis", 1);
  const int64_t time_axis = ctx.node().attr_int("time_axis", 0);
  if ((batch_axis != 0 && batch_axis != 1) || (time_axis != 0 && time_axis != 1) || batch_axis == time_axis)
    return ctx.error("batch_axis " + std::to_string(batch_axis) + " and time_axis " + std::to_string(time_axis) +
                     " must be 0 and 1 in some order");
  if (in->has_shape) {
    if (in->rank() < 2) return ctx.error("input 0 must have rank >= 2, got " + in->shape_string());
    const Dim& batch = in->dims[static_cast<size_t>(batch_axis)];
    if (lens->has_shape && lens->rank() == 1 && batch.is_known() && lens->dims[0].is_known() &&
        batch.value != lens->dims[0].value)
      return ctx.error("input 1 (sequence_lens) " + lens->shape_string() +
                       " must have one length per batch entry of input 0 " + in->shape_string());
  }
  return infer_same_as_input0(ctx);
}

// ---- BitCast ----------------------------------------------------------------------

// Bits per element; 0 for string and undefined.
int bit_width(DataType t) {
  switch (t) {
    case DataType::kUint4:
    case DataType::kInt4:
    case DataType::kFloat4E2M1:
      return 4;
    case DataType::kUint2:
    case DataType::kInt2:
      return 2;
    case DataType::kString:
      return 0;
    default:
      return static_cast<int>(element_size(t)) * 8;
  }
}

Status infer_bit_cast(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  const Attribute* to_attr = ctx.node().attr("to");
  if (to_attr == nullptr) return ctx.error("attribute 'to' is required");
  const int64_t to_value = to_attr->i;
  if (to_value > kMaxDataTypeValue || !is_valid_data_type(static_cast<int32_t>(to_value)) ||
      static_cast<DataType>(to_value) == DataType::kString || to_value == 0)
    return ctx.error("attribute 'to' = " + std::to_string(to_value) + " is not a non-string tensor type");
  const auto to = static_cast<DataType>(to_value);
  if (in->dtype == DataType::kString) return ctx.error("input 0 must not be tensor(string)");
  if (in->dtype != DataType::kUndefined && bit_width(in->dtype) != bit_width(to))
    return ctx.error("cannot bitcast " + in->type_string() + " (" + std::to_string(bit_width(in->dtype)) +
                     " bits) to " + tensor_type_string(to) + " (" + std::to_string(bit_width(to)) + " bits)");
  ValueType out = *in;
  out.kind = ValueType::Kind::kTensor;
  out.dtype = to;
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- DepthToSpace / SpaceToDepth ----------------------------------------------

Result<int64_t> read_blocksize(const InferenceContext& ctx) {
  const Attribute* a = ctx.node().attr("blocksize");
  if (a == nullptr) return ctx.error("attribute 'blocksize' is required");
  if (a->i <= 0) return ctx.error("blocksize must be positive, got " + std::to_string(a->i));
  int64_t square = 0;
  if (!checked_mul(a->i, a->i, square))
    return ctx.error("blocksize " + std::to_string(a->i) + " is too large: its square overflows int64");
  return a->i;
}

Dim scale_dim(const Dim& d, int64_t mul, int64_t div) {
  if (!d.is_known()) return mul == 1 && div == 1 ? d : Dim::unknown();
  int64_t scaled = 0;
  // Too large to count: left unknown for the kernel to refuse.
  if (!checked_mul(d.value, mul, scaled)) return Dim::unknown();
  return Dim::known(scaled / div);
}

Status infer_depth_to_space(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const int64_t b, read_blocksize(ctx));
  if (ctx.opset() >= 11) {
    const std::string mode = ctx.node().attr_string("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") return ctx.error("mode '" + mode + "' is not supported (expected DCR or CRD)");
  }
  ValueType out = ValueType::tensor(in->dtype);
  if (in->has_shape) {
    if (in->rank() != 4) return ctx.error("input 0 must have rank 4 [N,C,H,W], got " + in->shape_string());
    const Dim& c = in->dims[1];
    if (c.is_known() && c.value % (b * b) != 0)
      return ctx.error("channels " + std::to_string(c.value) + " of input 0 " + in->shape_string() +
                       " are not divisible by blocksize^2 = " + std::to_string(b * b));
    out.has_shape = true;
    out.dims = {in->dims[0], scale_dim(c, 1, b * b), scale_dim(in->dims[2], b, 1), scale_dim(in->dims[3], b, 1)};
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_space_to_depth(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const int64_t b, read_blocksize(ctx));
  ValueType out = ValueType::tensor(in->dtype);
  if (in->has_shape) {
    if (in->rank() != 4) return ctx.error("input 0 must have rank 4 [N,C,H,W], got " + in->shape_string());
    for (size_t k = 2; k < 4; ++k)
      if (in->dims[k].is_known() && in->dims[k].value % b != 0)
        return ctx.error("spatial dims of input 0 " + in->shape_string() + " are not divisible by blocksize " +
                         std::to_string(b));
    out.has_shape = true;
    out.dims = {in->dims[0], scale_dim(in->dims[1], b * b, 1), scale_dim(in->dims[2], 1, b),
                scale_dim(in->dims[3], 1, b)};
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

const OpSchema kIndexingSchemas[] = {
    {"", "Pad", 1, 1, 1, 1, 1, &infer_pad},
    {"", "Pad", 11, 2, 3, 1, 1, &infer_pad},
    {"", "Pad", 18, 2, 4, 1, 1, &infer_pad},
    {"", "CenterCropPad", 18, 2, 2, 1, 1, &infer_center_crop_pad},
    {"", "Scatter", 9, 3, 3, 1, 1, &infer_scatter_elements},
    {"", "ScatterElements", 11, 3, 3, 1, 1, &infer_scatter_elements},
    {"", "ScatterND", 11, 3, 3, 1, 1, &infer_scatter_nd},
    {"", "TensorScatter", 24, 2, 3, 1, 1, &infer_tensor_scatter},
    {"", "OneHot", 9, 3, 3, 1, 1, &infer_one_hot},
    {"", "Compress", 9, 2, 2, 1, 1, &infer_compress},
    {"", "NonZero", 9, 1, 1, 1, 1, &infer_non_zero},
    {"", "ReverseSequence", 10, 2, 2, 1, 1, &infer_reverse_sequence},
    {"", "BitCast", 26, 1, 1, 1, 1, &infer_bit_cast},
    {"", "DepthToSpace", 1, 1, 1, 1, 1, &infer_depth_to_space},
    {"", "SpaceToDepth", 1, 1, 1, 1, 1, &infer_space_to_depth},
};

}  // namespace

std::span<const OpSchema> indexing_schemas() { return kIndexingSchemas; }

}  // namespace sy
