// Reading and writing NumPy's .npy files, so that test inputs and reference
// outputs can move between Python and C++ without a protobuf in between.
//
//   auto images = sy::load_npy("test_images.npy");   // Result<Tensor>
//   SY_RETURN_IF_ERROR(sy::save_npy(logits, "logits.npy"));
//
// Supported: format versions 1.0, 2.0 and 3.0; C order; little-endian
// float16/32/64, int8/16/32/64, uint8/16/32/64 and bool. Anything else
// (Fortran order, big-endian data, object arrays, structured dtypes) is
// refused with an error that names the file and what it holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "switchyard/status.h"
#include "switchyard/tensor.h"

namespace sy {

// Loads a whole .npy file into a new host tensor that owns its memory.
Result<Tensor> load_npy(const std::string& path);

// Parses .npy bytes already in memory; `source_name` names them in errors.
Result<Tensor> parse_npy(std::span<const uint8_t> bytes, const std::string& source_name);

// Writes `tensor` (host memory, a supported dtype) as a version 1.0 file, or
// 2.0 when the header would not fit 1.0's 16-bit length.
Status save_npy(const Tensor& tensor, const std::string& path);

// The bytes save_npy would write.
Result<std::string> encode_npy(const Tensor& tensor);

}  // namespace sy
