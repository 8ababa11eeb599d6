// Schema of AffineGrid: theta [N, 2, 3] and size [N, C, H, W] give a grid
// [N, H, W, 2]; theta [N, 3, 4] and size [N, C, D, H, W] give
// [N, D, H, W, 3]. The dims are known when size is constant.
#include <string>
#include <vector>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_affine_grid(InferenceContext& ctx) {
  const int64_t align = ctx.node().attr_int("align_corners", 0);
  if (align != 0 && align != 1) return ctx.error("align_corners must be 0 or 1, got " + std::to_string(align));
  const ValueType* theta = ctx.input_type(0);
  const ValueType* size = ctx.input_type(1);
  ValueType grid = ValueType::tensor(theta != nullptr ? theta->dtype : DataType::kUndefined);
  int64_t spatial = -1;  // 2 or 3 once known
  if (theta != nullptr && theta->has_shape) {
    if (theta->rank() != 3)
      return ctx.error("theta must have rank 3 [N, 2, 3] or [N, 3, 4], got " + theta->shape_string());
    const Dim& rows = theta->dims[1];
    const Dim& cols = theta->dims[2];
    if ((rows.is_known() && rows.value != 2 && rows.value != 3) ||
        (rows.is_known() && cols.is_known() && cols.value != rows.value + 1))
      return ctx.error("theta must have shape [N, 2, 3] or [N, 3, 4], got " + theta->shape_string());
    if (rows.is_known()) spatial = rows.value;
  }
  if (size != nullptr && size->has_shape) {
    if (size->rank() != 1) return ctx.error("size must be a 1-D tensor, got " + size->shape_string());
    const Dim& n = size->dims[0];
    if (n.is_known() && n.value != 4 && n.value != 5)
      return ctx.error("size must hold 4 values [N, C, H, W] or 5 [N, C, D, H, W], got " + size->shape_string());
    if (n.is_known() && spatial >= 0 && n.value - 2 != spatial)
      return ctx.error("theta " + theta->shape_string() + " and size " + size->shape_string() +
                       " disagree on 2-D or 3-D");
    if (n.is_known()) spatial = n.value - 2;
  }
  std::vector<int64_t> dims;
  if (constant_as_int64s(ctx.input_constant(1), dims) && (dims.size() == 4 || dims.size() == 5)) {
    for (int64_t d : dims)
      if (d < 0) return ctx.error("size must not hold negative values, got " + ints_string(dims));
    grid.has_shape = true;
    grid.dims.push_back(Dim::known(dims[0]));
    for (size_t d = 2; d < dims.size(); ++d) grid.dims.push_back(Dim::known(dims[d]));
    grid.dims.push_back(Dim::known(static_cast<int64_t>(dims.size()) - 2));
  } else if (spatial >= 0) {
    grid.has_shape = true;
    grid.dims.assign(static_cast<size_t>(spatial) + 1, Dim::unknown());
    if (theta != nullptr && theta->has_shape) grid.dims[0] = theta->dims[0];
    grid.dims.push_back(Dim::known(spatial));
  }
  ctx.output_type(0) = grid;
  return ok_status();
}

constexpr OpSchema kAffineGridSchemas[] = {
    {"", "AffineGrid", 20, 2, 2, 1, 1, &infer_affine_grid},
};

}  // namespace

std::span<const OpSchema> affine_grid_schemas() { return kAffineGridSchemas; }

}  // namespace sy
