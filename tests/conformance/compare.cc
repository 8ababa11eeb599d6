#include "compare.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

namespace sy::conformance {
namespace {

// A float8/float4 "finite-only" or IEEE-like minifloat: sign bit on top,
// `exp_bits` of exponent with `bias`, `man_bits` of mantissa.
double decode_minifloat(uint32_t bits, int exp_bits, int man_bits, int bias) {
  const uint32_t man_mask = (1u << man_bits) - 1;
  const uint32_t exp_mask = (1u << exp_bits) - 1;
  const bool negative = ((bits >> (exp_bits + man_bits)) & 1u) != 0;
  const uint32_t e = (bits >> man_bits) & exp_mask;
  const uint32_t m = bits & man_mask;
  double v = 0.0;
  if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - bias - man_bits);
  } else {
    v = std::ldexp(1.0 + static_cast<double>(m) / static_cast<double>(1u << man_bits), static_cast<int>(e) - bias);
  }
  return negative ? -v : v;
}

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

double decode_e4m3fn(uint8_t b) {
  if ((b & 0x7f) == 0x7f) return kNan;  // no infinities; S.1111.111 is NaN
  return decode_minifloat(b, 4, 3, 7);
}
double decode_e4m3fnuz(uint8_t b) {
  if (b == 0x80) return kNan;  // the only NaN; there is no negative zero
  return decode_minifloat(b, 4, 3, 8);
}
double decode_e5m2(uint8_t b) {
  if ((b & 0x7c) == 0x7c) {
    if ((b & 0x03) != 0) return kNan;
    return (b & 0x80) != 0 ? -kInf : kInf;
  }
  return decode_minifloat(b, 5, 2, 15);
}
double decode_e5m2fnuz(uint8_t b) {
  if (b == 0x80) return kNan;
  return decode_minifloat(b, 5, 2, 16);
}
double decode_e8m0(uint8_t b) {
  if (b == 0xff) return kNan;
  return std::ldexp(1.0, static_cast<int>(b) - 127);
}

// Sub-byte types are packed low bits first: element i of a 4-bit type is
// the low nibble of byte i/2 when i is even.
uint32_t packed_bits(const Tensor& t, int64_t index, int bits) {
  const auto* p = t.data<uint8_t>();
  const int per_byte = 8 / bits;
  const uint8_t byte = p[index / per_byte];
  const int shift = static_cast<int>(index % per_byte) * bits;
  return (byte >> shift) & ((1u << bits) - 1);
}

int64_t sign_extend(uint32_t v, int bits) {
  const uint32_t sign = 1u << (bits - 1);
  return static_cast<int64_t>(v ^ sign) - static_cast<int64_t>(sign);
}

std::string format_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

// 1e-3 rather than 0.001: the way tolerances are usually written.
std::string short_number(double v) {
  if (v > 0) {
    const double l = std::log10(v);
    if (std::fabs(l - std::round(l)) < 1e-9) return "1e" + std::to_string(static_cast<int>(std::round(l)));
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string tolerance_text(const Tolerance& tol) {
  return "rtol " + short_number(tol.rtol) + ", atol " + short_number(tol.atol);
}

bool close_enough(double a, double e, const Tolerance& tol) {
  if (std::isnan(a) || std::isnan(e)) return std::isnan(a) && std::isnan(e);
  if (std::isinf(a) || std::isinf(e)) return a == e;
  return std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e);
}

std::string mismatch_text(int64_t index, const std::string& got, const std::string& expected, int64_t bad,
                          int64_t total, const std::string& suffix) {
  std::string s = "element " + std::to_string(index) + " got " + got + " expected " + expected;
  std::string extra = suffix;
  if (bad > 1) {
    if (!extra.empty()) extra += "; ";
    extra += std::to_string(bad) + " of " + std::to_string(total) + " elements differ";
  }
  if (!extra.empty()) s += " (" + extra + ")";
  return s;
}

// Compares through `get(tensor, i)`, a value that can be printed and
// compared; `same` decides equality.
template <typename Get, typename Same, typename Print>
std::string compare_elements(const Tensor& got, const Tensor& expected, Get get, Same same, Print print,
                             const std::string& suffix) {
  const int64_t n = expected.num_elements();
  int64_t first_bad = -1;
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!same(get(got, i), get(expected, i))) {
      if (first_bad < 0) first_bad = i;
      ++bad;
    }
  }
  if (bad == 0) return {};
  return mismatch_text(first_bad, print(get(got, first_bad)), print(get(expected, first_bad)), bad, n, suffix);
}

template <typename T>
std::string compare_float_typed(const Tensor& got, const Tensor& expected, const Tolerance& tol) {
  return compare_elements(
      got, expected, [](const Tensor& t, int64_t i) { return static_cast<double>(t.data<T>()[i]); },
      [&](double a, double e) { return close_enough(a, e, tol); }, format_double, tolerance_text(tol));
}

std::string compare_float_generic(const Tensor& got, const Tensor& expected, const Tolerance& tol) {
  return compare_elements(
      got, expected, float_element, [&](double a, double e) { return close_enough(a, e, tol); }, format_double,
      tolerance_text(tol));
}

template <typename T>
std::string compare_complex(const Tensor& got, const Tensor& expected, const Tolerance& tol) {
  using C = std::complex<double>;
  auto get = [](const Tensor& t, int64_t i) {
    const T* p = t.data<T>();
    return C(static_cast<double>(p[2 * i]), static_cast<double>(p[2 * i + 1]));
  };
  auto same = [&](C a, C e) {
    const bool a_nan = std::isnan(a.real()) || std::isnan(a.imag());
    const bool e_nan = std::isnan(e.real()) || std::isnan(e.imag());
    if (a_nan || e_nan) return a_nan && e_nan;
    if (std::isinf(a.real()) || std::isinf(a.imag()) || std::isinf(e.real()) || std::isinf(e.imag())) return a == e;
    return std::abs(a - e) <= tol.atol + tol.rtol * std::abs(e);
  };
  auto print = [](C v) { return "(" + format_double(v.real()) + "," + format_double(v.imag()) + ")"; };
  return compare_elements(got, expected, get, same, print, tolerance_text(tol));
}

template <typename T>
std::string compare_integer(const Tensor& got, const Tensor& expected) {
  auto get = [](const Tensor& t, int64_t i) { return t.data<T>()[i]; };
  auto same = [](T a, T e) { return a == e; };
  auto print = [](T v) { return std::to_string(v); };
  return compare_elements(got, expected, get, same, print, "");
}

std::string compare_packed_integer(const Tensor& got, const Tensor& expected, int bits, bool is_signed) {
  auto get = [bits, is_signed](const Tensor& t, int64_t i) {
    const uint32_t v = packed_bits(t, i, bits);
    return is_signed ? sign_extend(v, bits) : static_cast<int64_t>(v);
  };
  auto same = [](int64_t a, int64_t e) { return a == e; };
  auto print = [](int64_t v) { return std::to_string(v); };
  return compare_elements(got, expected, get, same, print, "");
}

std::string compare_bool(const Tensor& got, const Tensor& expected) {
  auto get = [](const Tensor& t, int64_t i) { return t.data<uint8_t>()[i] != 0; };
  auto same = [](bool a, bool e) { return a == e; };
  auto print = [](bool v) { return std::string(v ? "true" : "false"); };
  return compare_elements(got, expected, get, same, print, "");
}

std::string quote(const std::string& s) {
  constexpr size_t kMax = 40;
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMax) out += "...";
  return out + "\"";
}

std::string compare_string(const Tensor& got, const Tensor& expected) {
  auto get = [](const Tensor& t, int64_t i) -> const std::string& { return t.data<std::string>()[i]; };
  auto same = [](const std::string& a, const std::string& e) { return a == e; };
  return compare_elements(got, expected, get, same, quote, "");
}

}  // namespace

double float_element(const Tensor& t, int64_t index) {
  switch (t.dtype()) {
    case DataType::kFloat:
      return t.data<float>()[index];
    case DataType::kDouble:
      return t.data<double>()[index];
    case DataType::kFloat16:
      return float16_to_float(t.data<uint16_t>()[index]);
    case DataType::kBfloat16:
      return bfloat16_to_float(t.data<uint16_t>()[index]);
    case DataType::kFloat8E4M3FN:
      return decode_e4m3fn(t.data<uint8_t>()[index]);
    case DataType::kFloat8E4M3FNUZ:
      return decode_e4m3fnuz(t.data<uint8_t>()[index]);
    case DataType::kFloat8E5M2:
      return decode_e5m2(t.data<uint8_t>()[index]);
    case DataType::kFloat8E5M2FNUZ:
      return decode_e5m2fnuz(t.data<uint8_t>()[index]);
    case DataType::kFloat8E8M0:
      return decode_e8m0(t.data<uint8_t>()[index]);
    case DataType::kFloat4E2M1:
      return decode_minifloat(packed_bits(t, index, 4), 2, 1, 1);
    default:
      return kNan;
  }
}

std::string compare_tensors(const Tensor& got, const Tensor& expected, const Tolerance& tolerance) {
  if (got.dtype() != expected.dtype())
    return "dtype " + std::string(data_type_name(got.dtype())) + " expected " +
           std::string(data_type_name(expected.dtype()));
  if (got.shape() != expected.shape())
    return "shape " + got.shape().to_string() + " expected " + expected.shape().to_string();
  if (expected.num_elements() == 0) return {};
  if (got.raw_data() == nullptr) return "output has no data";
  switch (expected.dtype()) {
    case DataType::kFloat:
      return compare_float_typed<float>(got, expected, tolerance);
    case DataType::kDouble:
      return compare_float_typed<double>(got, expected, tolerance);
    case DataType::kFloat16:
    case DataType::kBfloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
    case DataType::kFloat4E2M1:
      return compare_float_generic(got, expected, tolerance);
    case DataType::kComplex64:
      return compare_complex<float>(got, expected, tolerance);
    case DataType::kComplex128:
      return compare_complex<double>(got, expected, tolerance);
    case DataType::kInt8:
      return compare_integer<int8_t>(got, expected);
    case DataType::kInt16:
      return compare_integer<int16_t>(got, expected);
    case DataType::kInt32:
      return compare_integer<int32_t>(got, expected);
    case DataType::kInt64:
      return compare_integer<int64_t>(got, expected);
    case DataType::kUint8:
      return compare_integer<uint8_t>(got, expected);
    case DataType::kUint16:
      return compare_integer<uint16_t>(got, expected);
    case DataType::kUint32:
      return compare_integer<uint32_t>(got, expected);
    case DataType::kUint64:
      return compare_integer<uint64_t>(got, expected);
    case DataType::kInt4:
      return compare_packed_integer(got, expected, 4, true);
    case DataType::kUint4:
      return compare_packed_integer(got, expected, 4, false);
    case DataType::kInt2:
      return compare_packed_integer(got, expected, 2, true);
    case DataType::kUint2:
      return compare_packed_integer(got, expected, 2, false);
    case DataType::kBool:
      return compare_bool(got, expected);
    case DataType::kString:
      return compare_string(got, expected);
    case DataType::kUndefined:
      break;
  }
  return "cannot compare tensors of dtype " + std::string(data_type_name(expected.dtype()));
}

}  // namespace sy::conformance
