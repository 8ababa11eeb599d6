// Schema of RoiAlign: X [N, C, H, W], rois [R, 4] and batch_indices [R]
// give Y [R, C, output_height, output_width].
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_roi_align(InferenceContext& ctx) {
  const Node& node = ctx.node();
  const std::string mode = node.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") return ctx.error("mode '" + mode + "' is not supported (expected avg or max)");
  if (ctx.opset() >= 16) {
    const std::string ctm = node.attr_string("coordinate_transformation_mode", "half_pixel");
    if (ctm != "half_pixel" && ctm != "output_half_pixel")
      return ctx.error("coordinate_transformation_mode '" + ctm +
                       "' is not supported (expected half_pixel or output_half_pixel)");
  }
  const int64_t out_h = node.attr_int("output_height", 1);
  const int64_t out_w = node.attr_int("output_width", 1);
  if (out_h < 1 || out_w < 1)
    return ctx.error("output_height and output_width must be 1 or more, got " + std::to_string(out_h) + " and " +
                     std::to_string(out_w));
  const int64_t sampling_ratio = node.attr_int("sampling_ratio", 0);
  if (sampling_ratio < 0) return ctx.error("sampling_ratio must be 0 or more, got " + std::to_string(sampling_ratio));

  const ValueType* x = ctx.input_type(0);
  const ValueType* rois = ctx.input_type(1);
  const ValueType* indices = ctx.input_type(2);
  if (x != nullptr && x->has_shape && x->rank() != 4)
    return ctx.error("X must have rank 4 [N, C, H, W], got " + x->shape_string());
  if (rois != nullptr && rois->has_shape &&
      (rois->rank() != 2 || (rois->dims[1].is_known() && rois->dims[1].value != 4)))
    return ctx.error("rois must have shape [num_rois, 4], got " + rois->shape_string());
  if (indices != nullptr && indices->has_shape && indices->rank() != 1)
    return ctx.error("batch_indices must have rank 1 [num_rois], got " + indices->shape_string());
  Dim num_rois = Dim::unknown();
  if (rois != nullptr && rois->has_shape) num_rois = rois->dims[0];
  if (indices != nullptr && indices->has_shape) {
    const Dim& d = indices->dims[0];
    if (num_rois.is_known() && d.is_known() && num_rois.value != d.value)
      return ctx.error("rois " + rois->shape_string() + " and batch_indices " + indices->shape_string() +
                       " disagree on the number of RoIs");
    if (!num_rois.is_known()) num_rois = d;
  }
  const Dim channels = x != nullptr && x->has_shape ? x->dims[1] : Dim::unknown();
  ctx.output_type(0) = ValueType::tensor(x != nullptr ? x->dtype : DataType::kUndefined,
                                         {num_rois, channels, Dim::known(out_h), Dim::known(out_w)});
  return ok_status();
}

constexpr OpSchema kRoiAlignSchemas[] = {
    {"", "RoiAlign", 10, 3, 3, 1, 1, &infer_roi_align},
    {"", "RoiAlign", 16, 3, 3, 1, 1, &infer_roi_align},
    {"", "RoiAlign", 22, 3, 3, 1, 1, &infer_roi_align},
};

}  // namespace

std::span<const OpSchema> roi_align_schemas() { return kRoiAlignSchemas; }

}  // namespace sy
