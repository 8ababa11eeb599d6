#include "switchyard/data_type.h"

#include <cstring>

#include "switchyard/provider_sdk/dtype.h"

namespace sy {

// The provider SDK's table (switchyard/provider_sdk/dtype.h), which the
// plugins use too; strings are the core's std::string, which no provider
// holds.
size_t element_size(DataType t) {
  if (t == DataType::kString) return sizeof(std::string);
  return provider_sdk::dtype_size(static_cast<int32_t>(t));
}

size_t storage_bytes(DataType t, int64_t count) {
  if (count <= 0) return 0;
  const auto n = static_cast<size_t>(count);
  switch (t) {
    case DataType::kUint4:
    case DataType::kInt4:
    case DataType::kFloat4E2M1: return (n + 1) / 2;
    case DataType::kUint2:
    case DataType::kInt2: return (n + 3) / 4;
    default: return n * element_size(t);
  }
}

bool is_valid_data_type(int32_t value) { return value >= 1 && value <= kMaxDataTypeValue; }

bool is_float_type(DataType t) {
  switch (t) {
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kFloat16:
    case DataType::kBfloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
    case DataType::kFloat4E2M1: return true;
    default: return false;
  }
}

bool is_signed_integer_type(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kInt4:
    case DataType::kInt2: return true;
    default: return false;
  }
}

bool is_integer_type(DataType t) {
  switch (t) {
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
    case DataType::kUint64:
    case DataType::kUint4:
    case DataType::kUint2: return true;
    default: return is_signed_integer_type(t);
  }
}

// The provider SDK's spelling, so that the core's messages and the
// plugins' name types alike.
std::string_view data_type_name(DataType t) { return provider_sdk::dtype_name(static_cast<int32_t>(t)); }

std::string tensor_type_string(DataType t) {
  return "tensor(" + std::string(data_type_name(t)) + ")";
}

float float16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_float16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (abs < 0x38800000u) {  // result is subnormal or zero
    if (abs < 0x33000000u) return sign;
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    // shift so that the implicit bit lands at 2^-14 * 2^-10 units
    const uint32_t shift = 126 - exp;
    uint32_t result = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (result & 1u))) ++result;
    return static_cast<uint16_t>(sign | result);
  }
  uint32_t result = ((abs - 0x38000000u) >> 13);
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (result & 1u))) ++result;
  return static_cast<uint16_t>(sign | result);
}

float bfloat16_to_float(uint16_t bits) {
  const uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t float_to_bfloat16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

}  // namespace sy
