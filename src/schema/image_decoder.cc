// Schema of ImageDecoder (20): a 1-D uint8 tensor of encoded bytes becomes a
// uint8 [H, W, C] image, C = 1 for Grayscale and 3 for RGB/BGR; H and W
// are only known once the image is decoded.
#include <string>

#include "schema/schema.h"

namespace sy {
namespace {

Status infer_image_decoder(InferenceContext& ctx) {
  SY_RETURN_IF_ERROR(check_input_dtype(ctx, 0, "encoded_stream", type_bit(DataType::kUint8)));
  const std::string format = ctx.node().attr_string("pixel_format", "RGB");
  if (format != "RGB" && format != "BGR" && format != "Grayscale")
    return ctx.error("attribute 'pixel_format' must be RGB, BGR or Grayscale, got '" + format + "'");
  const int64_t channels = format == "Grayscale" ? 1 : 3;
  ctx.output_type(0) = ValueType::tensor(DataType::kUint8, {Dim::unknown(), Dim::unknown(), Dim::known(channels)});
  return ok_status();
}

constexpr OpSchema kImageDecoderSchemas[] = {
    {"", "ImageDecoder", 20, 1, 1, 1, 1, &infer_image_decoder},
};

}  // namespace

std::span<const OpSchema> image_decoder_schemas() { return kImageDecoderSchemas; }

}  // namespace sy
