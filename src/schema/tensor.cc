// Schemas of the shape and data-movement ops. Their shape inference matters
// more than most: transformer graphs compute Reshape targets, Slice bounds
// and Expand shapes from constants, and static (or symbolic) dims here are
// what let later passes and the memory planner know buffer sizes.
#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <vector>

#include "core/checked_math.h"
#include "schema/schema.h"

namespace sy {
namespace {

std::string dims_string(const ValueType& t) { return t.shape_string(); }

constexpr uint64_t kInt64Only = type_bit(DataType::kInt64);
constexpr uint64_t kInt32Or64 = type_bit(DataType::kInt32) | type_bit(DataType::kInt64);

// The product of some dims: known when all are; a lone symbolic dim among
// 1s stays itself; otherwise unknown.
Dim dims_product(const std::vector<Dim>& dims, size_t begin, size_t end) {
  int64_t known = 1;
  const Dim* other = nullptr;
  int others = 0;
  for (size_t i = begin; i < end; ++i) {
    if (dims[i].is_known()) {
      if (dims[i].value == 0) return Dim::known(0);
      // Too many elements to count: left for the kernel to refuse.
      if (!checked_mul(known, dims[i].value, known)) return Dim::unknown();
    } else {
      other = &dims[i];
      ++others;
    }
  }
  if (others == 0) return Dim::known(known);
  if (others == 1 && known == 1) return *other;
  return Dim::unknown();
}

// A constant int input (true) or an absent one (true, empty); false when
// present but not constant.
bool optional_constant_ints(const InferenceContext& ctx, size_t i, std::vector<int64_t>& out, bool& present) {
  present = ctx.has_input(i);
  out.clear();
  if (!present) return true;
  return constant_as_int64s(ctx.input_constant(i), out);
}

// ---- Reshape --------------------------------------------------------------------

Status infer_reshape(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* shape_type, required_input(ctx, 1));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "shape", kInt64Only));
  ValueType out = ValueType::tensor(in->dtype);
  std::vector<int64_t> shape;
  if (!constant_as_int64s(ctx.input_constant(1), shape)) {
    if (shape_type->has_shape && shape_type->rank() == 1 && shape_type->dims[0].is_known()) {
      out.has_shape = true;
      out.dims.assign(static_cast<size_t>(shape_type->dims[0].value), Dim::unknown());
    }
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  const bool allowzero = ctx.opset() >= 14 && ctx.node().attr_int("allowzero", 0) != 0;
  out.has_shape = true;
  out.dims.resize(shape.size());
  std::vector<bool> consumed(in->has_shape ? in->rank() : 0, false);
  int64_t infer_at = -1;
  int64_t known = 1;  // product of the output dims given as numbers
  bool has_zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t v = shape[i];
    if (v == -1) {
      if (infer_at >= 0) return ctx.error("shape " + ints_string(shape) + " has more than one -1");
      infer_at = static_cast<int64_t>(i);
    } else if (v == 0 && !allowzero) {
      if (in->has_shape) {
        if (i >= in->rank())
          return ctx.error("shape " + ints_string(shape) + " has 0 at position " + std::to_string(i) +
                           ", which copies an input dim, but input 0 has rank " + std::to_string(in->rank()));
        out.dims[i] = in->dims[i];
        consumed[i] = true;
      }
    } else if (v < 0) {
      return ctx.error("shape " + ints_string(shape) + " has an invalid dimension " + std::to_string(v));
    } else {
      has_zero = has_zero || v == 0;
      out.dims[i] = Dim::known(v);
      if (!checked_mul(known, v, known))
        return ctx.error("input 1 (shape) " + ints_string(shape) + " overflows: more than " +
                         std::to_string(INT64_MAX) + " elements");
    }
  }
  if (allowzero && has_zero && infer_at >= 0)
    return ctx.error("shape " + ints_string(shape) + " has both 0 and -1, which allowzero=1 forbids");
  if (!in->has_shape) {
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  // What the input has that the copied (0) output dims do not account for.
  int64_t rest_known = 1;
  std::vector<const Dim*> rest_other;
  for (size_t i = 0; i < in->rank(); ++i) {
    if (consumed[i]) continue;
    if (in->dims[i].is_known()) {
      if (!checked_mul(rest_known, in->dims[i].value, rest_known))
        return ctx.error("input 0 " + dims_string(*in) + " overflows: more than " + std::to_string(INT64_MAX) +
                         " elements");
    } else {
      rest_other.push_back(&in->dims[i]);
    }
  }
  if (infer_at >= 0) {
    Dim& d = out.dims[static_cast<size_t>(infer_at)];
    if (rest_other.empty() && known != 0) {
      if (rest_known % known != 0)
        return ctx.error("cannot reshape input 0 " + dims_string(*in) + " to " + ints_string(shape) +
                         ": the -1 dimension cannot be inferred");
      d = Dim::known(rest_known / known);
    } else if (rest_other.size() == 1 && known != 0 && rest_known == known) {
      d = *rest_other[0];
    }
  } else if (rest_other.empty() && rest_known != known) {
    return ctx.error("cannot reshape input 0 " + dims_string(*in) + " (" + std::to_string(rest_known) +
                     " elements not copied by 0) to " + ints_string(shape));
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- Flatten --------------------------------------------------------------------

Status infer_flatten(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  ValueType out = ValueType::tensor(in->dtype);
  if (in->has_shape) {
    const auto rank = static_cast<int64_t>(in->rank());
    int64_t axis = ctx.node().attr_int("axis", 1);
    if (axis < -rank || axis > rank)
      return ctx.error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank) +
                       " (expected [" + std::to_string(-rank) + ", " + std::to_string(rank) + "])");
    if (axis < 0) axis += rank;
    const auto a = static_cast<size_t>(axis);
    out.has_shape = true;
    out.dims = {dims_product(in->dims, 0, a), dims_product(in->dims, a, in->rank())};
  } else {
    out.has_shape = true;
    out.dims = {Dim::unknown(), Dim::unknown()};
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- Squeeze / Unsqueeze -------------------------------------------------------

// The axes attribute (before 13) or constant input 1; `known` false when
// input 1 is present but not constant.
void read_axes(const InferenceContext& ctx, std::vector<int64_t>& axes, bool& present, bool& known) {
  if (ctx.opset() < 13) {
    present = ctx.node().has_attr("axes");
    axes = ctx.node().attr_ints("axes");
    known = true;
    return;
  }
  known = optional_constant_ints(ctx, 1, axes, present);
}

Status infer_squeeze(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  if (ctx.opset() >= 13) SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "axes", kInt64Only));
  ValueType out = ValueType::tensor(in->dtype);
  std::vector<int64_t> axes;
  bool present = false;
  bool known = false;
  read_axes(ctx, axes, present, known);
  if (!in->has_shape || !known) {
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  const auto rank = static_cast<int64_t>(in->rank());
  std::vector<bool> drop(in->rank(), false);
  if (!present) {
    for (size_t i = 0; i < in->rank(); ++i) {
      // An unknown dim may or may not be 1: the output rank is unknown.
      if (!in->dims[i].is_known()) {
        ctx.output_type(0) = std::move(out);
        return ok_status();
      }
      drop[i] = in->dims[i].value == 1;
    }
  }
  for (int64_t axis : axes) {
    const int64_t given = axis;
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, rank));
    const Dim& d = in->dims[static_cast<size_t>(axis)];
    if (d.is_known() && d.value != 1)
      return ctx.error("cannot squeeze axis " + std::to_string(given) + " of input 0 " + dims_string(*in) +
                       ": its size is " + std::to_string(d.value) + ", expected 1");
    drop[static_cast<size_t>(axis)] = true;
  }
  out.has_shape = true;
  for (size_t i = 0; i < in->rank(); ++i)
    if (!drop[i]) out.dims.push_back(in->dims[i]);
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_unsqueeze(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  if (ctx.opset() >= 13) SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "axes", kInt64Only));
  ValueType out = ValueType::tensor(in->dtype);
  std::vector<int64_t> axes;
  bool present = false;
  bool known = false;
  read_axes(ctx, axes, present, known);
  if (!present) return ctx.error(ctx.opset() < 13 ? "attribute 'axes' is required" : "input 1 (axes) is required");
  if (!in->has_shape || !known) {
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  const auto out_rank = static_cast<int64_t>(in->rank() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t axis : axes) {
    const int64_t given = axis;
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, out_rank));
    if (inserted[static_cast<size_t>(axis)])
      return ctx.error("axis " + std::to_string(given) + " is repeated in " + ints_string(axes));
    inserted[static_cast<size_t>(axis)] = true;
  }
  out.has_shape = true;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i)
    out.dims.push_back(inserted[static_cast<size_t>(i)] ? Dim::known(1) : in->dims[next++]);
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- Shape / Size / Identity ------------------------------------------------------

Status infer_shape(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  ValueType out = ValueType::tensor(DataType::kInt64, {Dim::unknown()});
  if (in->has_shape) {
    const auto rank = static_cast<int64_t>(in->rank());
    auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
    const bool sliced = ctx.opset() >= 15;
    const int64_t start = sliced ? clamp(ctx.node().attr_int("start", 0)) : 0;
    const int64_t end = sliced && ctx.node().has_attr("end") ? clamp(ctx.node().attr_int("end", rank)) : rank;
    out.dims[0] = Dim::known(std::max<int64_t>(0, end - start));
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_size(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(required_input(ctx, 0).status());
  ctx.output_type(0) = ValueType::tensor(DataType::kInt64, std::vector<Dim>{});
  return ok_status();
}

// ---- Concat / Split ----------------------------------------------------------------

Status infer_concat(InferenceContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.error("needs at least one input");
  DataType dtype = DataType::kUndefined;
  const ValueType* shaped = nullptr;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    SY_ASSIGN_OR_RETURN(const ValueType* t, required_input(ctx, i));
    if (dtype == DataType::kUndefined) dtype = t->dtype;
    if (t->dtype != DataType::kUndefined && t->dtype != dtype)
      return ctx.error("input " + std::to_string(i) + " has type " + t->type_string() + ", expected " +
                       tensor_type_string(dtype) + " like the inputs before it");
    if (t->has_shape && shaped == nullptr) shaped = t;
  }
  if (!ctx.node().has_attr("axis")) return ctx.error("attribute 'axis' is required");
  ValueType out = ValueType::tensor(dtype);
  if (shaped == nullptr) {
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  const size_t rank = shaped->rank();
  int64_t axis = ctx.node().attr_int("axis", 0);
  SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, static_cast<int64_t>(rank)));
  const auto a = static_cast<size_t>(axis);
  out.has_shape = true;
  out.dims.assign(rank, Dim::unknown());
  bool all_shaped = true;
  int64_t axis_sum = 0;
  bool axis_known = true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const ValueType* t = ctx.input_type(i);
    if (!t->has_shape) {
      all_shaped = false;
      continue;
    }
    if (t->rank() != rank)
      return ctx.error("input " + std::to_string(i) + " has shape " + dims_string(*t) + ", expected rank " +
                       std::to_string(rank) + " like " + dims_string(*shaped));
    for (size_t k = 0; k < rank; ++k) {
      const Dim& d = t->dims[k];
      if (k == a) {
        if (d.is_known()) {
          if (!checked_add(axis_sum, d.value, axis_sum))
            return ctx.error("the inputs' dims on axis " + std::to_string(axis) + " add up to more than " +
                             std::to_string(INT64_MAX) + " (input " + std::to_string(i) + " is " +
                             dims_string(*t) + ")");
        } else {
          axis_known = false;
        }
        continue;
      }
      Dim& o = out.dims[k];
      if (d.is_known()) {
        if (o.is_known() && o.value != d.value)
          return ctx.error("input " + std::to_string(i) + " has shape " + dims_string(*t) + ": dim " +
                           std::to_string(k) + " is " + std::to_string(d.value) + ", expected " +
                           std::to_string(o.value));
        o = d;
      } else if (!o.is_known() && !o.is_symbolic() && d.is_symbolic()) {
        o = d;
      }
    }
  }
  if (all_shaped && axis_known) out.dims[a] = Dim::known(axis_sum);
  if (ctx.num_inputs() == 1 && all_shaped) out.dims[a] = ctx.input_type(0)->dims[a];
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_split(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  const size_t n = ctx.num_outputs();
  if (ctx.opset() >= 13) SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "split", kInt64Only));
  const bool has_num_outputs = ctx.opset() >= 18 && ctx.node().has_attr("num_outputs");
  if (has_num_outputs) {
    const int64_t num = ctx.node().attr_int("num_outputs", 0);
    if (num < 1 || static_cast<size_t>(num) != n)
      return ctx.error("num_outputs is " + std::to_string(num) + " but the node has " + std::to_string(n) + " outputs");
    if (ctx.has_input(1)) return ctx.error("'split' and 'num_outputs' cannot both be given");
  }
  for (size_t j = 0; j < n; ++j) ctx.output_type(j) = ValueType::tensor(in->dtype);
  if (!in->has_shape) return ok_status();
  int64_t axis = ctx.node().attr_int("axis", 0);
  SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, static_cast<int64_t>(in->rank())));
  const auto a = static_cast<size_t>(axis);
  const Dim& d = in->dims[a];

  std::vector<int64_t> split;
  bool present = false;
  bool known = true;
  if (ctx.opset() < 13) {
    present = ctx.node().has_attr("split");
    split = ctx.node().attr_ints("split");
  } else {
    known = optional_constant_ints(ctx, 1, split, present);
  }
  std::vector<Dim> sizes(n, Dim::unknown());
  if (present && known) {
    if (split.size() != n)
      return ctx.error("split " + ints_string(split) + " has " + std::to_string(split.size()) +
                       " entries but the node has " + std::to_string(n) + " outputs");
    int64_t sum = 0;
    for (size_t j = 0; j < n; ++j) {
      if (split[j] < 0) return ctx.error("split " + ints_string(split) + " has a negative entry");
      sizes[j] = Dim::known(split[j]);
      if (!checked_add(sum, split[j], sum))
        return ctx.error("split " + ints_string(split) + " adds up to more than " + std::to_string(INT64_MAX));
    }
    if (d.is_known() && sum != d.value)
      return ctx.error("split " + ints_string(split) + " sums to " + std::to_string(sum) + " but axis " +
                       std::to_string(axis) + " of input 0 " + dims_string(*in) + " has size " +
                       std::to_string(d.value));
  } else if (!present && d.is_known() && n > 0) {
    const auto parts = static_cast<int64_t>(n);
    if (ctx.opset() >= 18) {
      // ceil(d / parts) without forming d + parts - 1, which a declared dim
      // near INT64_MAX would overflow.
      const int64_t chunk = d.value / parts + (d.value % parts != 0 ? 1 : 0);
      for (size_t j = 0; j < n; ++j)
        sizes[j] = Dim::known(std::clamp(d.value - static_cast<int64_t>(j) * chunk, int64_t{0}, chunk));
    } else {
      if (d.value % parts != 0)
        return ctx.error("axis " + std::to_string(axis) + " of input 0 " + dims_string(*in) + " cannot be split into " +
                         std::to_string(n) + " equal parts");
      for (size_t j = 0; j < n; ++j) sizes[j] = Dim::known(d.value / parts);
    }
  } else if (!present && n == 1) {
    sizes[0] = d;
  }
  for (size_t j = 0; j < n; ++j) {
    ValueType& o = ctx.output_type(j);
    o.has_shape = true;
    o.dims = in->dims;
    o.dims[a] = sizes[j];
  }
  return ok_status();
}

// ---- Slice -----------------------------------------------------------------------

Status infer_slice(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  ValueType out = ValueType::tensor(in->dtype);
  std::vector<int64_t> starts, ends, axes, steps;
  bool has_axes = false;
  bool has_steps = false;
  bool all_known = true;
  if (ctx.opset() < 10) {
    starts = ctx.node().attr_ints("starts");
    ends = ctx.node().attr_ints("ends");
    has_axes = ctx.node().has_attr("axes");
    axes = ctx.node().attr_ints("axes");
  } else {
    static const char* const kNames[] = {"data", "starts", "ends", "axes", "steps"};
    for (size_t i = 1; i < 5; ++i) SY_RETURN_IF_ERROR(check_input_dtype(ctx, i, kNames[i], kInt32Or64));
    bool present = false;
    all_known = constant_as_int64s(ctx.input_constant(1), starts) && constant_as_int64s(ctx.input_constant(2), ends);
    const bool axes_known = optional_constant_ints(ctx, 3, axes, has_axes);
    const bool steps_known = optional_constant_ints(ctx, 4, steps, present);
    has_steps = present;
    if (!in->has_shape) {
      ctx.output_type(0) = std::move(out);
      return ok_status();
    }
    if (!all_known || !steps_known || !axes_known) {
      // The sliced axes lose their dims; the others keep theirs.
      out.has_shape = true;
      out.dims = in->dims;
      if (axes_known && has_axes) {
        for (int64_t axis : axes) {
          SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, static_cast<int64_t>(in->rank())));
          out.dims[static_cast<size_t>(axis)] = Dim::unknown();
        }
      } else {
        const ValueType* st = ctx.input_type(1);
        size_t count = in->rank();
        if (!has_axes && st && st->has_shape && st->rank() == 1 && st->dims[0].is_known())
          count = std::min(count, static_cast<size_t>(st->dims[0].value));
        for (size_t k = 0; k < count; ++k) out.dims[k] = Dim::unknown();
      }
      ctx.output_type(0) = std::move(out);
      return ok_status();
    }
  }
  if (!in->has_shape) {
    ctx.output_type(0) = std::move(out);
    return ok_status();
  }
  const size_t n = starts.size();
  if (ends.size() != n || (has_axes && axes.size() != n) || (has_steps && steps.size() != n))
    return ctx.error("starts " + ints_string(starts) + ", ends " + ints_string(ends) +
                     (has_axes ? ", axes " + ints_string(axes) : "") +
                     (has_steps ? ", steps " + ints_string(steps) : "") + " must have the same length");
  const auto rank = static_cast<int64_t>(in->rank());
  out.has_shape = true;
  out.dims = in->dims;
  std::vector<bool> seen(in->rank(), false);
  for (size_t i = 0; i < n; ++i) {
    int64_t axis = has_axes ? axes[i] : static_cast<int64_t>(i);
    const int64_t given = axis;
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, rank));
    const auto a = static_cast<size_t>(axis);
    if (seen[a]) return ctx.error("axis " + std::to_string(given) + " is repeated");
    seen[a] = true;
    const int64_t step = has_steps ? steps[i] : 1;
    if (step == 0) return ctx.error("steps " + ints_string(steps) + " has a 0");
    const int64_t b = starts[i];
    const int64_t e = ends[i];
    const Dim& dim = in->dims[a];
    if (!dim.is_known()) {
      // [0:INT_MAX:1] keeps the whole unknown dim.
      const bool whole = step == 1 && b == 0 && e >= INT32_MAX;
      out.dims[a] = whole ? dim : Dim::unknown();
      continue;
    }
    int64_t first = 0;
    const int64_t c = slice_axis(dim.value, b, e, step, first);
    out.dims[a] = Dim::known(c);
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- Gather family -------------------------------------------------------------------

Status infer_gather(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* data, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* indices, required_input(ctx, 1));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "indices", kInt32Or64));
  ValueType out = ValueType::tensor(data->dtype);
  if (data->has_shape) {
    if (data->rank() == 0) return ctx.error("data must have rank >= 1, got a scalar");
    int64_t axis = ctx.node().attr_int("axis", 0);
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, static_cast<int64_t>(data->rank())));
    const auto a = static_cast<size_t>(axis);
    std::vector<int64_t> idx;
    const Dim& d = data->dims[a];
    if (d.is_known() && constant_as_int64s(ctx.input_constant(1), idx))
      for (int64_t v : idx)
        if (v < -d.value || v >= d.value)
          return ctx.error("index " + std::to_string(v) + " is out of range for axis " + std::to_string(axis) +
                           " of data " + dims_string(*data) + " (expected [" + std::to_string(-d.value) + ", " +
                           std::to_string(d.value - 1) + "])");
    if (indices->has_shape) {
      out.has_shape = true;
      out.dims.assign(data->dims.begin(), data->dims.begin() + axis);
      out.dims.insert(out.dims.end(), indices->dims.begin(), indices->dims.end());
      out.dims.insert(out.dims.end(), data->dims.begin() + axis + 1, data->dims.end());
    }
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_gather_elements(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* data, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* indices, required_input(ctx, 1));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "indices", kInt32Or64));
  if (data->has_shape && indices->has_shape && data->rank() != indices->rank())
    return ctx.error("indices " + dims_string(*indices) + " must have the rank of data " + dims_string(*data));
  if (data->has_shape) {
    int64_t axis = ctx.node().attr_int("axis", 0);
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, static_cast<int64_t>(data->rank())));
  }
  ValueType out = *indices;
  out.dtype = data->dtype;
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_gather_nd(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* data, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* indices, required_input(ctx, 1));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "indices", kInt64Only | kInt32Or64));
  ValueType out = ValueType::tensor(data->dtype);
  const int64_t b = ctx.opset() >= 12 ? ctx.node().attr_int("batch_dims", 0) : 0;
  if (b < 0) return ctx.error("batch_dims must be >= 0, got " + std::to_string(b));
  if (data->has_shape && indices->has_shape) {
    const auto r = static_cast<int64_t>(data->rank());
    const auto q = static_cast<int64_t>(indices->rank());
    if (r < 1 || q < 1 || b >= std::min(r, q))
      return ctx.error("data " + dims_string(*data) + " and indices " + dims_string(*indices) +
                       " must have rank >= 1 and more than batch_dims=" + std::to_string(b) + " dims");
    const Dim& last = indices->dims.back();
    if (last.is_known()) {
      if (last.value < 1 || last.value > r - b)
        return ctx.error("the last dim of indices " + dims_string(*indices) + " must be in [1, " +
                         std::to_string(r - b) + "] for data " + dims_string(*data) +
                         " with batch_dims=" + std::to_string(b));
      out.has_shape = true;
      out.dims.assign(indices->dims.begin(), indices->dims.end() - 1);
      out.dims.insert(out.dims.end(), data->dims.begin() + b + last.value, data->dims.end());
    }
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- Transpose ---------------------------------------------------------------------

Status infer_transpose(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  ValueType out = ValueType::tensor(in->dtype);
  const bool has_perm = ctx.node().has_attr("perm");
  const std::vector<int64_t> perm = ctx.node().attr_ints("perm");
  std::vector<bool> used(perm.size(), false);
  for (int64_t v : perm) {
    if (v < 0 || v >= static_cast<int64_t>(perm.size()) || used[static_cast<size_t>(v)])
      return ctx.error("perm " + ints_string(perm) + " is not a permutation");
    used[static_cast<size_t>(v)] = true;
  }
  if (in->has_shape) {
    const size_t r = in->rank();
    if (has_perm && perm.size() != r)
      return ctx.error("perm " + ints_string(perm) + " has " + std::to_string(perm.size()) + " entries but input 0 " +
                       dims_string(*in) + " has rank " + std::to_string(r));
    out.has_shape = true;
    for (size_t i = 0; i < r; ++i) out.dims.push_back(in->dims[has_perm ? static_cast<size_t>(perm[i]) : r - 1 - i]);
  } else if (has_perm) {
    out.has_shape = true;
    out.dims.assign(perm.size(), Dim::unknown());
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- Expand / Tile -----------------------------------------------------------------

Status infer_expand(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* shape_type, required_input(ctx, 1));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "shape", kInt64Only));
  std::vector<int64_t> shape;
  if (constant_as_int64s(ctx.input_constant(1), shape)) {
    for (int64_t v : shape)
      if (v < 0) return ctx.error("shape " + ints_string(shape) + " has a negative dimension");
    std::vector<Dim> dims;
    for (int64_t v : shape) dims.push_back(Dim::known(v));
    const ValueType target = ValueType::tensor(in->dtype, std::move(dims));
    const ValueType* both[] = {in, &target};
    Result<ValueType> out = broadcast_types(ctx, both);
    if (!out.ok())
      return ctx.error("input 0 " + dims_string(*in) + " cannot be expanded to shape " + ints_string(shape));
    out->dtype = in->dtype;
    ctx.output_type(0) = std::move(out).value();
    return ok_status();
  }
  ValueType out = ValueType::tensor(in->dtype);
  if (in->has_shape && shape_type->has_shape && shape_type->rank() == 1 && shape_type->dims[0].is_known()) {
    // Dims the input has (other than 1) survive any valid target shape.
    const size_t n = static_cast<size_t>(shape_type->dims[0].value);
    const size_t r = std::max(n, in->rank());
    out.has_shape = true;
    out.dims.assign(r, Dim::unknown());
    for (size_t k = 0; k < in->rank(); ++k) {
      const Dim& d = in->dims[k];
      if (d.is_known() && d.value != 1) out.dims[k + r - in->rank()] = d;
    }
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_tile(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  SY_RETURN_IF_ERROR(required_input(ctx, 1).status());
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "repeats", kInt64Only));
  ValueType out = ValueType::tensor(in->dtype);
  if (in->has_shape) {
    out.has_shape = true;
    out.dims.assign(in->rank(), Dim::unknown());
    std::vector<int64_t> repeats;
    if (constant_as_int64s(ctx.input_constant(1), repeats)) {
      if (repeats.size() != in->rank())
        return ctx.error("repeats " + ints_string(repeats) + " must have one entry per dim of input 0 " +
                         dims_string(*in));
      for (size_t k = 0; k < in->rank(); ++k) {
        const Dim& d = in->dims[k];
        if (repeats[k] < 0) return ctx.error("repeats " + ints_string(repeats) + " has a negative entry");
        if (d.is_known()) {
          int64_t tiled = 0;
          if (!checked_mul(d.value, repeats[k], tiled))
            return ctx.error("repeats " + ints_string(repeats) + ": dim " + std::to_string(k) + " of input 0 " +
                             dims_string(*in) + " times " + std::to_string(repeats[k]) + " overflows int64");
          out.dims[k] = Dim::known(tiled);
        } else if (repeats[k] == 1) {
          out.dims[k] = d;
        } else if (repeats[k] == 0) {
          out.dims[k] = Dim::known(0);
        }
      }
    }
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// ---- Generators -----------------------------------------------------------------------

Status infer_constant(InferenceContext& ctx) {
  const Node& node = ctx.node();
  const Attribute* a = nullptr;
  for (const Attribute& attr : node.attributes) {
    if (attr.name.rfind("value", 0) != 0 && attr.name != "sparse_value") continue;
    if (a != nullptr)
      return ctx.error("has both '" + a->name + "' and '" + attr.name + "'; expected exactly one value");
    a = &attr;
  }
  if (a == nullptr)
    return ctx.error("needs one of the attributes value, value_float(s), value_int(s), value_string(s)");
  ValueType& out = ctx.output_type(0);
  if (a->name == "value") {
    if (a->t.defined()) out = ValueType::tensor(a->t.dtype(), a->t.shape());
  } else if (a->name == "value_float") {
    out = ValueType::tensor(DataType::kFloat, std::vector<Dim>{});
  } else if (a->name == "value_floats") {
    out = ValueType::tensor(DataType::kFloat, {Dim::known(static_cast<int64_t>(a->floats.size()))});
  } else if (a->name == "value_int") {
    out = ValueType::tensor(DataType::kInt64, std::vector<Dim>{});
  } else if (a->name == "value_ints") {
    out = ValueType::tensor(DataType::kInt64, {Dim::known(static_cast<int64_t>(a->ints.size()))});
  } else if (a->name == "value_string") {
    out = ValueType::tensor(DataType::kString, std::vector<Dim>{});
  } else if (a->name == "value_strings") {
    out = ValueType::tensor(DataType::kString, {Dim::known(static_cast<int64_t>(a->strings.size()))});
  } else if (a->name == "sparse_value") {
    if (a->t.defined()) out = ValueType::tensor(a->t.dtype());
  } else {
    return ctx.error("unknown attribute '" + a->name + "'");
  }
  return ok_status();
}

Status infer_constant_of_shape(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 0, "input", kInt64Only));
  DataType dtype = DataType::kFloat;
  if (const Attribute* a = ctx.node().attr("value")) {
    if (!a->t.defined() || a->t.num_elements() != 1) return ctx.error("attribute 'value' must be a one-element tensor");
    dtype = a->t.dtype();
  }
  ValueType out = ValueType::tensor(dtype);
  std::vector<int64_t> shape;
  if (constant_as_int64s(ctx.input_constant(0), shape)) {
    out.has_shape = true;
    for (int64_t v : shape) {
      if (v < 0) return ctx.error("shape " + ints_string(shape) + " has a negative dimension");
      out.dims.push_back(Dim::known(v));
    }
  } else if (in->has_shape && in->rank() == 1 && in->dims[0].is_known()) {
    out.has_shape = true;
    out.dims.assign(static_cast<size_t>(in->dims[0].value), Dim::unknown());
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

// A scalar constant as double, for Range's element count.
bool constant_scalar(const Tensor* t, double& v) {
  if (t == nullptr || t->num_elements() != 1) return false;
  switch (t->dtype()) {
    case DataType::kFloat:
      v = t->data<float>()[0];
      return true;
    case DataType::kDouble:
      v = t->data<double>()[0];
      return true;
    case DataType::kInt16:
      v = t->data<int16_t>()[0];
      return true;
    case DataType::kInt32:
      v = t->data<int32_t>()[0];
      return true;
    case DataType::kInt64:
      v = static_cast<double>(t->data<int64_t>()[0]);
      return true;
    case DataType::kFloat16:
      v = float16_to_float(t->data<uint16_t>()[0]);
      return true;
    case DataType::kBfloat16:
      v = bfloat16_to_float(t->data<uint16_t>()[0]);
      return true;
    default:
      return false;
  }
}

Status infer_range(InferenceContext& ctx) {
  DataType dtype = DataType::kUndefined;
  for (size_t i = 0; i < 3; ++i) {
    SY_ASSIGN_OR_RETURN(const ValueType* t, required_input(ctx, i));
    if (t->has_shape && t->rank() > 1)
      return ctx.error("input " + std::to_string(i) + " must be a scalar, got shape " + dims_string(*t));
    if (dtype == DataType::kUndefined) dtype = t->dtype;
    if (t->dtype != DataType::kUndefined && t->dtype != dtype)
      return ctx.error("start, limit and delta must have one type; input " + std::to_string(i) + " is " +
                       t->type_string() + ", expected " + tensor_type_string(dtype));
  }
  ValueType out = ValueType::tensor(dtype, {Dim::unknown()});
  double start = 0, limit = 0, delta = 0;
  if (constant_scalar(ctx.input_constant(0), start) && constant_scalar(ctx.input_constant(1), limit) &&
      constant_scalar(ctx.input_constant(2), delta)) {
    if (delta == 0) return ctx.error("delta is 0");
    const double count = std::ceil((limit - start) / delta);
    // A count outside int64 stays unknown: the kernel refuses it with the
    // operands in the message, and the cast below would be undefined.
    constexpr double kMaxCount = 9.2e18;
    // Integer ranges count exactly from the integers themselves: a double
    // holds every int16 and int32 but not every int64 near the limits.
    auto exact = [&](size_t i, double approx) {
      const Tensor* t = ctx.input_constant(i);
      return t->dtype() == DataType::kInt64 ? t->data<int64_t>()[0] : static_cast<int64_t>(approx);
    };
    if (is_integer_type(dtype)) {
      const uint64_t n = range_count(exact(0, start), exact(1, limit), exact(2, delta));
      if (n <= static_cast<uint64_t>(INT64_MAX)) out.dims[0] = Dim::known(static_cast<int64_t>(n));
    } else if (dtype == DataType::kDouble && std::isfinite(count) && count < kMaxCount) {
      out.dims[0] = Dim::known(static_cast<int64_t>(std::max(count, 0.0)));
    } else if (!is_integer_type(dtype) && std::isfinite(count)) {
      // Floats follow the kernel, which computes in the input type.
      const float fc = std::ceil(static_cast<float>(static_cast<float>(limit) - static_cast<float>(start)) /
                                 static_cast<float>(delta));
      if (std::isfinite(fc) && fc < kMaxCount)
        out.dims[0] = Dim::known(static_cast<int64_t>(std::max(fc, 0.0f)));
    }
  }
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_eye_like(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  if (in->has_shape && in->rank() != 2) return ctx.error("input 0 must be 2-D, got shape " + dims_string(*in));
  const int64_t dt = ctx.node().attr_int("dtype", 0);
  if (dt != 0 && !is_valid_data_type(static_cast<int32_t>(dt)))
    return ctx.error("dtype " + std::to_string(dt) + " is not a valid data type");
  ValueType out = *in;
  if (dt != 0) out.dtype = static_cast<DataType>(dt);
  ctx.output_type(0) = std::move(out);
  return ok_status();
}

Status infer_trilu(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* in, required_input(ctx, 0));
  if (in->has_shape && in->rank() < 2) return ctx.error("input 0 must have rank >= 2, got shape " + dims_string(*in));
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 1, "k", kInt64Only));
  ctx.output_type(0) = *in;
  return ok_status();
}

const OpSchema kTensorSchemas[] = {
    {"", "Reshape", 5, 2, 2, 1, 1, &infer_reshape},
    {"", "Flatten", 1, 1, 1, 1, 1, &infer_flatten},
    {"", "Squeeze", 1, 1, 1, 1, 1, &infer_squeeze},
    {"", "Squeeze", 13, 1, 2, 1, 1, &infer_squeeze},
    {"", "Unsqueeze", 1, 1, 1, 1, 1, &infer_unsqueeze},
    {"", "Unsqueeze", 13, 2, 2, 1, 1, &infer_unsqueeze},
    {"", "Shape", 1, 1, 1, 1, 1, &infer_shape},
    {"", "Size", 1, 1, 1, 1, 1, &infer_size},
    {"", "Identity", 1, 1, 1, 1, 1, &infer_same_as_input0},
    {"", "Concat", 4, 1, -1, 1, 1, &infer_concat},
    {"", "Split", 2, 1, 1, 1, -1, &infer_split},
    {"", "Split", 13, 1, 2, 1, -1, &infer_split},
    {"", "Slice", 1, 1, 1, 1, 1, &infer_slice},
    {"", "Slice", 10, 3, 5, 1, 1, &infer_slice},
    {"", "Gather", 1, 2, 2, 1, 1, &infer_gather},
    {"", "GatherElements", 11, 2, 2, 1, 1, &infer_gather_elements},
    {"", "GatherND", 11, 2, 2, 1, 1, &infer_gather_nd},
    {"", "Transpose", 1, 1, 1, 1, 1, &infer_transpose},
    {"", "Expand", 8, 2, 2, 1, 1, &infer_expand},
    {"", "Tile", 6, 2, 2, 1, 1, &infer_tile},
    {"", "Constant", 1, 0, 0, 1, 1, &infer_constant},
    {"", "ConstantOfShape", 9, 1, 1, 1, 1, &infer_constant_of_shape},
    {"", "Range", 11, 3, 3, 1, 1, &infer_range},
    {"", "EyeLike", 9, 1, 1, 1, 1, &infer_eye_like},
    {"", "Trilu", 14, 1, 2, 1, 1, &infer_trilu},
};

}  // namespace

std::span<const OpSchema> tensor_schemas() { return kTensorSchemas; }

}  // namespace sy
