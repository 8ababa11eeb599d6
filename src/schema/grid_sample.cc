// Schema of GridSample: X [N, C, D1..Dr] sampled at grid [N, O1..Or, r]
// gives Y [N, C, O1..Or]. Opset 16 has 2-D images only and spells its
// modes bilinear / bicubic; 20 and later are N-D and spell them linear /
// cubic.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

Status check_one_of(const InferenceContext& ctx, const char* name, const std::string& value,
                    std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return ok_status();
    list += (list.empty() ? "'" : ", '") + std::string(a) + "'";
  }
  return ctx.error(std::string(name) + " '" + value + "' is not supported at opset " + std::to_string(ctx.opset()) +
                   " (expected one of " + list + ")");
}

Status infer_grid_sample(InferenceContext& ctx) {
  const bool v16 = ctx.opset() < 20;
  const std::string mode = ctx.node().attr_string("mode", v16 ? "bilinear" : "linear");
  if (v16) {
    SY_RETURN_IF_ERROR(check_one_of(ctx, "mode", mode, {"bilinear", "nearest", "bicubic"}));
  } else {
    SY_RETURN_IF_ERROR(check_one_of(ctx, "mode", mode, {"linear", "nearest", "cubic"}));
  }
  SY_RETURN_IF_ERROR(check_one_of(ctx, "padding_mode", ctx.node().attr_string("padding_mode", "zeros"),
                                  {"zeros", "border", "reflection"}));
  const int64_t align = ctx.node().attr_int("align_corners", 0);
  if (align != 0 && align != 1) return ctx.error("align_corners must be 0 or 1, got " + std::to_string(align));

  const ValueType* x = ctx.input_type(0);
  const ValueType* grid = ctx.input_type(1);
  ValueType y = ValueType::tensor(x != nullptr ? x->dtype : DataType::kUndefined);
  if (x != nullptr && x->has_shape) {
    if (v16 && x->rank() != 4)
      return ctx.error("X must have rank 4 [N, C, H, W] at opset 16, got " + x->shape_string());
    if (x->rank() < 3) return ctx.error("X must have rank 3 or more [N, C, D1, ...], got " + x->shape_string());
  }
  if (grid != nullptr && grid->has_shape) {
    if (grid->rank() < 3)
      return ctx.error("grid must have rank 3 or more [N, O1, ..., r], got " + grid->shape_string());
    const Dim& last = grid->dims.back();
    if (last.is_known() && last.value != static_cast<int64_t>(grid->rank()) - 2)
      return ctx.error("grid " + grid->shape_string() + " must end in its number of spatial dims, " +
                       std::to_string(grid->rank() - 2));
  }
  if (x != nullptr && x->has_shape && grid != nullptr && grid->has_shape) {
    if (x->rank() != grid->rank())
      return ctx.error("X " + x->shape_string() + " and grid " + grid->shape_string() + " must have one rank");
    if (x->dims[0].is_known() && grid->dims[0].is_known() && x->dims[0].value != grid->dims[0].value)
      return ctx.error("X " + x->shape_string() + " and grid " + grid->shape_string() + " must have one batch size");
    y.has_shape = true;
    y.dims = {x->dims[0], x->dims[1]};
    for (size_t d = 1; d + 1 < grid->rank(); ++d) y.dims.push_back(grid->dims[d]);
  }
  ctx.output_type(0) = y;
  return ok_status();
}

constexpr OpSchema kGridSampleSchemas[] = {
    {"", "GridSample", 16, 2, 2, 1, 1, &infer_grid_sample},
    {"", "GridSample", 20, 2, 2, 1, 1, &infer_grid_sample},
    {"", "GridSample", 22, 2, 2, 1, 1, &infer_grid_sample},
};

}  // namespace

std::span<const OpSchema> grid_sample_schemas() { return kGridSampleSchemas; }

}  // namespace sy
