// Schema of Col2Im: input [N, C * prod(block_shape), L] with image_shape
// [D1..Dr] gives [N, C, D1..Dr]; the dims are known when image_shape and
// block_shape are constant.
#include <string>
#include <vector>

#include "core/checked_math.h"
#include "schema/schema.h"

namespace sy {
namespace {

Status infer_col2im(InferenceContext& ctx) {
  const ValueType* in = ctx.input_type(0);
  const ValueType* image = ctx.input_type(1);
  const ValueType* block = ctx.input_type(2);
  if (in != nullptr && in->has_shape && in->rank() != 3)
    return ctx.error("input must have rank 3 [N, C * prod(block_shape), L], got " + in->shape_string());
  for (const ValueType* t : {image, block})
    if (t != nullptr && t->has_shape && t->rank() != 1)
      return ctx.error("image_shape and block_shape must be 1-D, got " + t->shape_string());
  ValueType out = ValueType::tensor(in != nullptr ? in->dtype : DataType::kUndefined);
  std::vector<int64_t> image_dims, block_dims;
  const bool image_known = constant_as_int64s(ctx.input_constant(1), image_dims);
  const bool block_known = constant_as_int64s(ctx.input_constant(2), block_dims);
  if (image_known && block_known && image_dims.size() != block_dims.size())
    return ctx.error("image_shape " + ints_string(image_dims) + " and block_shape " + ints_string(block_dims) +
                     " must have one length");
  if (image_known) {
    out.has_shape = true;
    out.dims = {in != nullptr && in->has_shape ? in->dims[0] : Dim::unknown(), Dim::unknown()};
    for (int64_t d : image_dims) {
      if (d < 0) return ctx.error("image_shape must not hold negative sizes, got " + ints_string(image_dims));
      out.dims.push_back(Dim::known(d));
    }
    if (block_known && in != nullptr && in->has_shape && in->dims[1].is_known()) {
      int64_t block = 1;
      bool valid = true;
      for (int64_t b : block_dims) valid = valid && b > 0 && checked_mul(block, b, block);
      if (valid && in->dims[1].value % block == 0) out.dims[1] = Dim::known(in->dims[1].value / block);
    }
  } else if (image != nullptr && image->has_shape && image->dims[0].is_known()) {
    out.has_shape = true;
    out.dims.assign(static_cast<size_t>(image->dims[0].value) + 2, Dim::unknown());
  }
  ctx.output_type(0) = out;
  return ok_status();
}

constexpr OpSchema kCol2ImSchemas[] = {
    {"", "Col2Im", 18, 3, 3, 1, 1, &infer_col2im},
};

}  // namespace

std::span<const OpSchema> col2im_schemas() { return kCol2ImSchemas; }

}  // namespace sy
