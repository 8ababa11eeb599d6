// The rules QuantizeLinear and DequantizeLinear put on the shapes of their
// scale and zero point, shared by the schemas (static shapes, at load) and
// the CPU kernels (the shapes a run brings).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "switchyard/data_type.h"

namespace sy {

// int8 or uint8: the types of the QLinear ops and the 8-bit GEMM.
inline bool is_8bit_type(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

// What the scale's shape makes of the quantization.
enum class QuantGranularity {
  kPerTensor,  // a scalar (or a 1-element 1-D tensor, as ONNX Runtime accepts)
  kPerAxis,    // 1-D, the length of x's dim `axis`
  kBlocked,    // x's rank; dim `axis` is ceil(x dim / block_size), the rest x's
};

struct QuantParamShape {
  QuantGranularity granularity = QuantGranularity::kPerTensor;
  int64_t axis = 0;  // in [0, rank of x); 0 for per-tensor
};

// Checks a scale of shape `scale` against x of shape `x` (dims -1 where
// unknown, which pass) for attributes `axis` and `block_size`. On success
// fills `out`; else returns the problem, naming the scale `scale_label`
// ("input 1 (y_scale)"), for the caller to prefix with the node.
std::string check_quant_scale_shape(std::span<const int64_t> x, std::span<const int64_t> scale, int64_t axis,
                                    int64_t block_size, const std::string& scale_label, QuantParamShape& out);

// The zero point's shape must be the scale's; the problem, or "".
std::string check_zero_point_shape(std::span<const int64_t> scale, std::span<const int64_t> zero_point,
                                   const std::string& scale_label, const std::string& zero_point_label);

}  // namespace sy
