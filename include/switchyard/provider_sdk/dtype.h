// Element types as the ABI numbers them (sy_tensor::dtype, ONNX's
// TensorProto.DataType): their names and sizes, header-only. Part of the
// provider SDK (see axis.h). data_type.h declares the core's versions of
// these, but they live in the core library, which a provider does not
// link; the core's data_type_name() and element_size() read these tables,
// so a provider's messages spell types as the core's do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "switchyard/data_type.h"

namespace sy::provider_sdk {

// ONNX's spelling: "float", "int64", "float16", "bfloat16", "bool" ...;
// "unknown" for a number outside the table.
inline const char* dtype_name(int32_t dtype) {
  static constexpr const char* kNames[] = {
      "undefined", "float", "uint8", "int8", "uint16", "int16", "int32",  // 0-6
      "int64", "string", "bool", "float16", "double", "uint32", "uint64",  // 7-13
      "complex64", "complex128", "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",  // 14-19
      "float8e5m2fnuz", "uint4", "int4", "float4e2m1", "float8e8m0", "uint2", "int2",  // 20-26
  };
  static_assert(sizeof kNames / sizeof kNames[0] == kMaxDataTypeValue + 1, "a name for every DataType");
  return dtype >= 0 && dtype <= kMaxDataTypeValue ? kNames[dtype] : "unknown";
}

// Bytes per element of a type stored one element to a whole number of
// bytes; 0 for strings (a provider cannot hold the core's), for the types
// packed below a byte (int4, uint4, float4e2m1, int2, uint2) and for
// undefined or unknown numbers.
inline size_t dtype_size(int32_t dtype) {
  switch (static_cast<DataType>(dtype)) {
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kBool:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0: return 1;
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kFloat16:
    case DataType::kBfloat16: return 2;
    case DataType::kFloat:
    case DataType::kInt32:
    case DataType::kUint32: return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kDouble:
    case DataType::kComplex64: return 8;
    case DataType::kComplex128: return 16;
    default: return 0;
  }
}

// The types whose bits (type_bit in data_type.h) are set in a kernel
// table's type mask, in number order: "float, int64".
inline std::string describe_type_mask(uint64_t mask) {
  std::string s;
  for (int32_t t = 1; t <= kMaxDataTypeValue; ++t) {
    if ((mask & (uint64_t{1} << t)) == 0) continue;
    if (!s.empty()) s += ", ";
    s += dtype_name(t);
  }
  return s;
}

}  // namespace sy::provider_sdk
