// Integer quantization: the range of each integer type QuantizeLinear can
// produce, and the round-half-to-even, saturating step it (and
// DynamicQuantizeLinear) applies to x / scale.
#pragma once

#include <cmath>
#include <cstdint>

#include "switchyard/data_type.h"

namespace sy::cpu {

struct QuantRange {
  int32_t lo;
  int32_t hi;
};

// The range of an integer quantized type; false for the others (the
// float8 and float4 types, which saturate by their own rules).
inline bool integer_quant_range(DataType t, QuantRange& r) {
  switch (t) {
    case DataType::kUint8: r = {0, 255}; return true;
    case DataType::kInt8: r = {-128, 127}; return true;
    case DataType::kUint16: r = {0, 65535}; return true;
    case DataType::kInt16: r = {-32768, 32767}; return true;
    case DataType::kUint4: r = {0, 15}; return true;
    case DataType::kInt4: r = {-8, 7}; return true;
    case DataType::kUint2: r = {0, 3}; return true;
    case DataType::kInt2: r = {-2, 1}; return true;
    default: return false;
  }
}

// saturate(round_half_even(v) + zero_point) into r; NaN gives r.lo, as the
// ONNX reference's rint, int32 cast and clip do.
inline int32_t round_saturate(double v, int32_t zero_point, QuantRange r) {
  const double q = std::nearbyint(v) + zero_point;  // the default rounding mode: to nearest, ties to even
  if (!(q > r.lo)) return r.lo;
  if (q > r.hi) return r.hi;
  return static_cast<int32_t>(q);
}

}  // namespace sy::cpu
