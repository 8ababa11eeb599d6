// Element types. The numeric values are ONNX's TensorProto.DataType values,
// so a type read from a model needs no translation table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sy {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBfloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
};

inline constexpr int kMaxDataTypeValue = 26;

// 16-bit floats are stored as their bit patterns; kernels convert.
struct Float16 {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// Bytes per element; 0 for types packed below a byte (int4, uint4, float4,
// int2), which use storage_bytes() instead, and for kUndefined.
size_t element_size(DataType t);
// Bytes needed to hold `count` elements of `t` (packed types round up).
size_t storage_bytes(DataType t, int64_t count);
bool is_valid_data_type(int32_t value);
bool is_float_type(DataType t);    // float16/32/64, bfloat16, float8/4 variants
bool is_integer_type(DataType t);  // signed or unsigned, any width
bool is_signed_integer_type(DataType t);
// ONNX's spelling: "float", "int64", "float16", "bool", "string" ...
std::string_view data_type_name(DataType t);
// "tensor(float)"
std::string tensor_type_string(DataType t);

// A bit per DataType, for type constraints: type_bit(kFloat) | type_bit(kInt64).
constexpr uint64_t type_bit(DataType t) { return uint64_t{1} << static_cast<int>(t); }

// C++ type -> DataType, for templated kernels.
template <typename T>
struct DataTypeOf;
template <> struct DataTypeOf<float> { static constexpr DataType value = DataType::kFloat; };
template <> struct DataTypeOf<double> { static constexpr DataType value = DataType::kDouble; };
template <> struct DataTypeOf<int8_t> { static constexpr DataType value = DataType::kInt8; };
template <> struct DataTypeOf<int16_t> { static constexpr DataType value = DataType::kInt16; };
template <> struct DataTypeOf<int32_t> { static constexpr DataType value = DataType::kInt32; };
template <> struct DataTypeOf<int64_t> { static constexpr DataType value = DataType::kInt64; };
template <> struct DataTypeOf<uint8_t> { static constexpr DataType value = DataType::kUint8; };
template <> struct DataTypeOf<uint16_t> { static constexpr DataType value = DataType::kUint16; };
template <> struct DataTypeOf<uint32_t> { static constexpr DataType value = DataType::kUint32; };
template <> struct DataTypeOf<uint64_t> { static constexpr DataType value = DataType::kUint64; };
template <> struct DataTypeOf<bool> { static constexpr DataType value = DataType::kBool; };
template <> struct DataTypeOf<Float16> { static constexpr DataType value = DataType::kFloat16; };
template <> struct DataTypeOf<BFloat16> { static constexpr DataType value = DataType::kBfloat16; };
template <> struct DataTypeOf<std::string> { static constexpr DataType value = DataType::kString; };

// float <-> half conversions (round to nearest even), used by Cast and I/O.
float float16_to_float(uint16_t bits);
uint16_t float_to_float16(float value);
float bfloat16_to_float(uint16_t bits);
uint16_t float_to_bfloat16(float value);

}  // namespace sy
