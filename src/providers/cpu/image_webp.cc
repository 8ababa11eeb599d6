// ImageDecoder's WebP reader (libwebp). Lossy and lossless WebP decode
// straight into the RGB target; an alpha channel is dropped, as PIL's
// convert("RGB") drops it, since the op's outputs have 3 or 1 channels.

#include <webp/decode.h>

#include <cstdint>
#include <string>

#include "providers/cpu/image_decoder.h"

namespace sy::cpu::image {

Status decode_webp(Bytes data, ImageTarget& target) {
  int width = 0;
  int height = 0;
  // WebPGetInfo reads only the headers, so the size is checked against the
  // limits before any pixel buffer exists.
  if (!WebPGetInfo(data.data(), data.size(), &width, &height))
    return target.fail("malformed WebP: bad or truncated header");
  uint8_t* rgb = target.begin(height, width);
  if (!rgb) return target.status;
  const size_t size = static_cast<size_t>(target.pixels) * 3;
  if (!WebPDecodeRGBInto(data.data(), data.size(), rgb, size, width * 3))
    return target.fail("malformed WebP: the image data does not decode");
  return ok_status();
}

}  // namespace sy::cpu::image
