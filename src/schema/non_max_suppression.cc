// Schema of NonMaxSuppression: boxes [batches, boxes, 4] and scores
// [batches, classes, boxes] give selected_indices [selected, 3] int64, whose
// length depends on the data.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_non_max_suppression(InferenceContext& ctx) {
  const int64_t center = ctx.node().attr_int("center_point_box", 0);
  if (center != 0 && center != 1) return ctx.error("center_point_box must be 0 or 1, got " + std::to_string(center));
  const ValueType* boxes = ctx.input_type(0);
  const ValueType* scores = ctx.input_type(1);
  if (boxes != nullptr && boxes->has_shape) {
    if (boxes->rank() != 3)
      return ctx.error("boxes must have rank 3 [batches, boxes, 4], got " + boxes->shape_string());
    if (boxes->dims[2].is_known() && boxes->dims[2].value != 4)
      return ctx.error("boxes must have 4 coordinates in its last dim, got " + boxes->shape_string());
  }
  if (scores != nullptr && scores->has_shape && scores->rank() != 3)
    return ctx.error("scores must have rank 3 [batches, classes, boxes], got " + scores->shape_string());
  if (boxes != nullptr && boxes->has_shape && scores != nullptr && scores->has_shape) {
    for (size_t d : {size_t{0}, size_t{1}}) {
      const Dim& b = boxes->dims[d];
      const Dim& s = scores->dims[d == 0 ? 0 : 2];
      if (b.is_known() && s.is_known() && b.value != s.value)
        return ctx.error("boxes " + boxes->shape_string() + " and scores " + scores->shape_string() +
                         " disagree on the number of " + (d == 0 ? "batches" : "boxes"));
    }
  }
  ctx.output_type(0) = ValueType::tensor(DataType::kInt64, {Dim::unknown(), Dim::known(3)});
  return ok_status();
}

constexpr OpSchema kNonMaxSuppressionSchemas[] = {
    {"", "NonMaxSuppression", 10, 2, 5, 1, 1, &infer_non_max_suppression},
    {"", "NonMaxSuppression", 11, 2, 5, 1, 1, &infer_non_max_suppression},
};

}  // namespace

std::span<const OpSchema> non_max_suppression_schemas() { return kNonMaxSuppressionSchemas; }

}  // namespace sy
