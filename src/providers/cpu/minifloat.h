// The small float formats ONNX defines (float8 e4m3fn / e4m3fnuz / e5m2 /
// e5m2fnuz, float4e2m1, float8e8m0): decoding to double and encoding with
// round-to-nearest-even and the saturate rules of the Cast spec. Cast,
// QuantizeLinear and DequantizeLinear share them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "switchyard/data_type.h"

namespace sy::cpu {

// A small float format. kind says how it spends its top codes.
enum class MiniKind {
  kIeee,  // inf and NaN in the top exponent (float8e5m2)
  kFn,    // no inf; all-ones is NaN (float8e4m3fn)
  kFnuz,  // no inf, no -0; 0x80 is NaN (float8e4m3fnuz, float8e5m2fnuz)
  kNone,  // no inf, no NaN (float4e2m1)
};

struct MiniFormat {
  int exp_bits;
  int mant_bits;
  int bias;
  MiniKind kind;
  double max;  // largest finite value
};

inline constexpr MiniFormat kE4M3FN{4, 3, 7, MiniKind::kFn, 448.0};
inline constexpr MiniFormat kE4M3FNUZ{4, 3, 8, MiniKind::kFnuz, 240.0};
inline constexpr MiniFormat kE5M2{5, 2, 15, MiniKind::kIeee, 57344.0};
inline constexpr MiniFormat kE5M2FNUZ{5, 2, 16, MiniKind::kFnuz, 57344.0};
inline constexpr MiniFormat kE2M1{2, 1, 1, MiniKind::kNone, 6.0};

inline double mini_decode(const MiniFormat& f, uint32_t bits) {
  const uint32_t sign_bit = 1u << (f.exp_bits + f.mant_bits);
  const uint32_t exp_mask = (1u << f.exp_bits) - 1;
  const uint32_t mant_mask = (1u << f.mant_bits) - 1;
  const bool negative = (bits & sign_bit) != 0;
  const uint32_t e = (bits >> f.mant_bits) & exp_mask;
  const uint32_t m = bits & mant_mask;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.kind) {
    case MiniKind::kIeee:
      if (e == exp_mask) return m != 0 ? nan : (negative ? -HUGE_VAL : HUGE_VAL);
      break;
    case MiniKind::kFn:
      if (e == exp_mask && m == mant_mask) return nan;
      break;
    case MiniKind::kFnuz:
      if (bits == sign_bit) return nan;
      break;
    case MiniKind::kNone: break;
  }
  const double v = e == 0 ? std::ldexp(static_cast<double>(m), 1 - f.bias - f.mant_bits)
                          : std::ldexp(static_cast<double>(m | (mant_mask + 1)), static_cast<int>(e) - f.bias - f.mant_bits);
  return negative ? -v : v;
}

// Round to nearest even on the format's grid; out-of-range values saturate
// to +-max or become NaN / inf, as the Cast spec's tables say.
inline uint32_t mini_encode(const MiniFormat& f, double x, bool saturate) {
  const uint32_t sign_bit = 1u << (f.exp_bits + f.mant_bits);
  const uint32_t exp_mask = (1u << f.exp_bits) - 1;
  const uint32_t mant_mask = (1u << f.mant_bits) - 1;
  const bool negative = std::signbit(x);
  const uint32_t sign = negative ? sign_bit : 0u;
  const uint32_t max_code = [&] {
    switch (f.kind) {
      case MiniKind::kIeee: return ((exp_mask - 1) << f.mant_bits) | mant_mask;
      case MiniKind::kFn: return (exp_mask << f.mant_bits) | (mant_mask - 1);
      default: return (exp_mask << f.mant_bits) | mant_mask;
    }
  }();
  auto nan_code = [&]() -> uint32_t {
    switch (f.kind) {
      case MiniKind::kIeee: return sign | (exp_mask << f.mant_bits) | mant_mask;
      case MiniKind::kFn: return sign | (exp_mask << f.mant_bits) | mant_mask;
      case MiniKind::kFnuz: return sign_bit;
      case MiniKind::kNone: return sign_bit;  // no NaN: the reference writes -0
    }
    return sign_bit;
  };
  auto overflow_code = [&]() -> uint32_t {
    if (saturate || f.kind == MiniKind::kNone) return sign | max_code;
    if (f.kind == MiniKind::kIeee) return sign | (exp_mask << f.mant_bits);  // inf
    return nan_code();
  };
  if (std::isnan(x)) return nan_code();
  if (std::isinf(x)) return overflow_code();
  const double a = std::fabs(x);
  if (a == 0.0) return f.kind == MiniKind::kFnuz ? 0u : sign;
  int e2 = 0;
  std::frexp(a, &e2);  // a = frac * 2^e2, frac in [0.5, 1)
  const int exponent = std::max(e2 - 1, 1 - f.bias);  // subnormals share the smallest exponent
  const double quantum = std::ldexp(1.0, exponent - f.mant_bits);
  const double rounded = std::nearbyint(a / quantum) * quantum;
  if (rounded > f.max) return overflow_code();
  if (rounded == 0.0) return f.kind == MiniKind::kFnuz ? 0u : sign;
  std::frexp(rounded, &e2);
  const int biased = e2 - 1 + f.bias;
  uint32_t code;
  if (biased <= 0) {
    code = static_cast<uint32_t>(std::ldexp(rounded, f.bias - 1 + f.mant_bits));  // subnormal mantissa
  } else {
    const double mant = std::ldexp(rounded, f.mant_bits - (e2 - 1)) - static_cast<double>(mant_mask + 1);
    code = (static_cast<uint32_t>(biased) << f.mant_bits) | static_cast<uint32_t>(mant);
  }
  return sign | code;
}

// float8e8m0: a bare power of two, 2^(bits - 127); 0xFF is NaN.
enum class RoundMode { kUp, kDown, kNearest };

inline double e8m0_decode(uint32_t bits) {
  if (bits == 0xFF) return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, static_cast<int>(bits) - 127);
}

inline uint32_t e8m0_encode(double x, bool saturate, RoundMode mode) {
  if (std::isnan(x)) return 0xFF;
  const double a = std::fabs(x);  // negative input is unspecified: use |x|
  if (std::isinf(a)) return saturate ? 0xFE : 0xFF;
  if (a == 0.0) return saturate ? 0x00 : 0xFF;
  int e2 = 0;
  const double frac = std::frexp(a, &e2);  // a = frac * 2^e2
  int e = e2 - 1;                          // a = (2 frac) * 2^e, 2 frac in [1, 2)
  if (frac > 0.5) {
    if (mode == RoundMode::kUp || (mode == RoundMode::kNearest && frac >= 0.75)) ++e;
  }
  if (e > 127) return saturate ? 0xFE : 0xFF;
  if (e < -127) return saturate ? 0x00 : 0xFF;
  return static_cast<uint32_t>(e + 127);
}

inline const MiniFormat* mini_format(DataType t) {
  switch (t) {
    case DataType::kFloat8E4M3FN: return &kE4M3FN;
    case DataType::kFloat8E4M3FNUZ: return &kE4M3FNUZ;
    case DataType::kFloat8E5M2: return &kE5M2;
    case DataType::kFloat8E5M2FNUZ: return &kE5M2FNUZ;
    case DataType::kFloat4E2M1: return &kE2M1;
    default: return nullptr;
  }
}

}  // namespace sy::cpu
