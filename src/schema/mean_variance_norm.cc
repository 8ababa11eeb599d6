// Schema of MeanVarianceNormalization: Y has X's type and shape; the axes
// (default [0, 2, 3]; an empty list, as in the ReduceMean of the op's
// function body, means every dim) must be distinct dims of X.
#include <string>
#include <vector>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_mean_variance_norm(InferenceContext& ctx) {
  SY_ASSIGN_OR_RETURN(const ValueType* x, required_input(ctx, 0));
  if (x->has_shape) {
    const auto rank = static_cast<int64_t>(x->rank());
    const std::vector<int64_t> axes =
        ctx.node().has_attr("axes") ? ctx.node().attr_ints("axes") : std::vector<int64_t>{0, 2, 3};
    std::vector<bool> seen(x->rank(), false);
    for (int64_t a : axes) {
      SY_RETURN_IF_ERROR(normalize_axis(ctx, a, rank, "axes value"));
      if (seen[static_cast<size_t>(a)]) return ctx.error("axes " + ints_string(axes) + " repeat a dim");
      seen[static_cast<size_t>(a)] = true;
    }
  }
  return infer_same_as_input0(ctx);
}

// 13 adds bfloat16.
constexpr OpSchema kMeanVarianceNormSchemas[] = {
    {"", "MeanVarianceNormalization", 9, 1, 1, 1, 1, &infer_mean_variance_norm},
    {"", "MeanVarianceNormalization", 13, 1, 1, 1, 1, &infer_mean_variance_norm},
};

}  // namespace

std::span<const OpSchema> mean_variance_norm_schemas() { return kMeanVarianceNormSchemas; }

}  // namespace sy
