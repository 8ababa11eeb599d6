// Schemas of the Reduce* ops, ArgMax and ArgMin.
#include <string>
#include <vector>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_reduce(InferenceContext& ctx) {
  const ValueType* x = ctx.input_type(0);
  if (x == nullptr) return ctx.error("input 0 is required");
  const Node& node = ctx.node();
  const bool keepdims = node.attr_int("keepdims", 1) != 0;
  const bool noop = node.attr_int("noop_with_empty_axes", 0) != 0;
  const int axes_input_since = node.op_type == "ReduceSum" ? 13 : 18;
  std::vector<int64_t> axes;
  bool axes_known = true;
  if (ctx.opset() >= axes_input_since) {
    if (ctx.has_input(1)) {
      const Tensor* c = ctx.input_constant(1);
      axes_known = constant_as_int64s(c, axes);
    }
  } else {
    axes = node.attr_ints("axes");
  }
  ValueType out = ValueType::tensor(x->dtype);
  if (!x->has_shape) {
    ctx.output_type(0) = out;
    return ok_status();
  }
  const auto rank = static_cast<int64_t>(x->rank());
  if (!axes_known) {
    // Which axes go is known only at run time; with keepdims the rank stays.
    if (keepdims) {
      out.has_shape = true;
      out.dims.assign(x->rank(), Dim::unknown());
    }
    ctx.output_type(0) = out;
    return ok_status();
  }
  std::vector<bool> reduced(x->rank(), axes.empty() && !noop);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank)
      return ctx.error("axis " + std::to_string(a) + " is out of range for input of rank " + std::to_string(rank));
    const auto d = static_cast<size_t>(a < 0 ? a + rank : a);
    if (reduced[d]) return ctx.error("axis " + std::to_string(a) + " is given twice");
    reduced[d] = true;
  }
  out.has_shape = true;
  for (size_t d = 0; d < x->rank(); ++d) {
    if (!reduced[d]) {
      out.dims.push_back(x->dims[d]);
    } else if (keepdims) {
      out.dims.push_back(Dim::known(1));
    }
  }
  ctx.output_type(0) = out;
  return ok_status();
}

Status infer_arg(InferenceContext& ctx) {
  const ValueType* x = ctx.input_type(0);
  if (x == nullptr) return ctx.error("input 0 is required");
  ValueType out = ValueType::tensor(DataType::kInt64);
  if (x->has_shape) {
    const auto rank = static_cast<int64_t>(x->rank());
    const int64_t axis = ctx.node().attr_int("axis", 0);
    if (axis < -rank || axis >= rank)
      return ctx.error("axis " + std::to_string(axis) + " is out of range for input of rank " + std::to_string(rank));
    const auto ax = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    const bool keepdims = ctx.node().attr_int("keepdims", 1) != 0;
    out.has_shape = true;
    for (size_t d = 0; d < x->rank(); ++d) {
      if (d != ax) {
        out.dims.push_back(x->dims[d]);
      } else if (keepdims) {
        out.dims.push_back(Dim::known(1));
      }
    }
  }
  ctx.output_type(0) = out;
  return ok_status();
}

constexpr OpSchema attr_axes(std::string_view op) { return {"", op, 1, 1, 1, 1, 1, &infer_reduce}; }
constexpr OpSchema input_axes(std::string_view op, int since) { return {"", op, since, 1, 2, 1, 1, &infer_reduce}; }

constexpr OpSchema kReduceSchemas[] = {
    attr_axes("ReduceSum"),       input_axes("ReduceSum", 13),
    attr_axes("ReduceMean"),      input_axes("ReduceMean", 18),
    attr_axes("ReduceMax"),       input_axes("ReduceMax", 18),
    attr_axes("ReduceMin"),       input_axes("ReduceMin", 18),
    attr_axes("ReduceProd"),      input_axes("ReduceProd", 18),
    attr_axes("ReduceL1"),        input_axes("ReduceL1", 18),
    attr_axes("ReduceL2"),        input_axes("ReduceL2", 18),
    attr_axes("ReduceLogSum"),    input_axes("ReduceLogSum", 18),
    attr_axes("ReduceLogSumExp"), input_axes("ReduceLogSumExp", 18),
    attr_axes("ReduceSumSquare"), input_axes("ReduceSumSquare", 18),
    {"", "ArgMax", 1, 1, 1, 1, 1, &infer_arg},
    {"", "ArgMin", 1, 1, 1, 1, 1, &infer_arg},
};

}  // namespace

std::span<const OpSchema> reduce_schemas() { return kReduceSchemas; }

}  // namespace sy
