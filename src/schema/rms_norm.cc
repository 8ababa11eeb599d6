// Schema of RMSNormalization: Y has X's shape and Scale's element type.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

// Scale must broadcast to X without growing it: no more dims than X, and
// each known dim 1 or X's.
Status check_scale_shape(const InferenceContext& ctx, const ValueType& x, const ValueType& scale) {
  if (!x.has_shape || !scale.has_shape) return ok_status();
  if (scale.rank() > x.rank())
    return ctx.error("Scale " + scale.shape_string() + " has more dims than X " + x.shape_string());
  const size_t offset = x.rank() - scale.rank();
  for (size_t i = 0; i < scale.rank(); ++i) {
    const Dim& s = scale.dims[i];
    const Dim& d = x.dims[offset + i];
    if (s.is_known() && d.is_known() && s.value != 1 && s.value != d.value)
      return ctx.error("Scale " + scale.shape_string() + " does not broadcast to X " + x.shape_string());
  }
  return ok_status();
}

Status infer_rms_norm(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  SY_ASSIGN_OR_RETURN(const ValueType* scale, required_input(ctx, 1));
  SY_RETURN_IF_ERROR(check_stash_type(ctx));
  if (x->has_shape) {
    if (x->rank() == 0) return ctx.error("X must have rank 1 or more, got a scalar");
    int64_t axis = ctx.node().attr_int("axis", -1);
    SY_RETURN_IF_ERROR(normalize_axis(ctx, axis, static_cast<int64_t>(x->rank())));
  }
  SY_RETURN_IF_ERROR(check_scale_shape(ctx, *x, *scale));
  ValueType y = *x;
  y.dtype = scale->dtype;
  ctx.output_type(0) = std::move(y);
  return ok_status();
}

constexpr OpSchema kRmsNormSchemas[] = {
    {"", "RMSNormalization", 23, 2, 2, 1, 1, &infer_rms_norm},
};

}  // namespace

std::span<const OpSchema> rms_norm_schemas() { return kRmsNormSchemas; }

}  // namespace sy
