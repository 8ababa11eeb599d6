// Cast and CastLike between every ONNX element type but complex.
//
// Between the ordinary types (float, double, float16, bfloat16, the
// integers, bool) each pair gets its own templated loop. Strings, the 8-bit
// and 4-bit floats, and the 4- and 2-bit integers go through a small block
// of doubles on the stack: decode a block of the source into doubles, then
// encode the block into the target. Double holds every value of those types
// exactly (and every integer up to 2^53), so only the encode step rounds.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>

#include "providers/cpu/copy_util.h"
#include "providers/cpu/elementwise_common.h"
#include "providers/cpu/minifloat.h"
#include "providers/kernel.h"

namespace sy::cpu {
namespace {

bool equals_ignoring_case(std::string_view s, const char* word) {
  size_t i = 0;
  for (; word[i] != '\0'; ++i)
    if (i >= s.size() || std::tolower(static_cast<unsigned char>(s[i])) != word[i]) return false;
  return i == s.size();
}

// The number a string holds, as the Cast spec reads strings: plain or
// scientific notation ("3.14", "-1000", "1e-5", "1E8", an optional sign),
// and "INF", "+INF", "-INF", "NaN" in any case; "True" / "False" are what
// Cast writes for bools. False for anything else ("abc", "1.5x", "", " 1",
// hex floats, "infinity"): the spec leaves those undefined and the caller
// reports them rather than inventing a 0.
bool parse_number(const std::string& s, double& out) {
  if (equals_ignoring_case(s, "true")) {
    out = 1.0;
    return true;
  }
  if (equals_ignoring_case(s, "false")) {
    out = 0.0;
    return true;
  }
  const char* first = s.data();
  const char* last = s.data() + s.size();
  double sign = 1.0;
  if (first != last && (*first == '+' || *first == '-')) {
    sign = *first == '-' ? -1.0 : 1.0;
    ++first;
  }
  const std::string_view rest(first, static_cast<size_t>(last - first));
  if (equals_ignoring_case(rest, "inf")) {
    out = sign * std::numeric_limits<double>::infinity();
    return true;
  }
  if (equals_ignoring_case(rest, "nan")) {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  // from_chars would also take "infinity" and "nan(...)"; only digits or a
  // point may start a number here.
  if (first == last || !(std::isdigit(static_cast<unsigned char>(*first)) || *first == '.')) return false;
  double v = 0.0;
  const auto r = std::from_chars(first, last, v, std::chars_format::general);
  if (r.ptr != last) return false;
  if (r.ec == std::errc::result_out_of_range) {
    // Well-formed but beyond double: strtod gives +-inf or 0, as numpy does.
    v = std::strtod(std::string(rest).c_str(), nullptr);
  } else if (r.ec != std::errc()) {
    return false;
  }
  out = sign * v;
  return true;
}

// The error for a string that holds no number.
Status not_a_number(const KernelContext& ctx, const Tensor& src, const std::string* bad) {
  const int64_t index = bad - src.data<std::string>();
  return kernel_invalid_argument(ctx, "input 0 element " + std::to_string(index) + " is \"" + *bad +
                                          "\", which is not a number (expected plain or scientific notation such "
                                          "as \"3.14\" or \"1e-5\", or INF, -INF, NaN)");
}

void format_number(double v, bool is_float32, std::string& out) {
  if (std::isnan(v)) {
    out = "NaN";
    return;
  }
  if (std::isinf(v)) {
    out = v > 0 ? "INF" : "-INF";
    return;
  }
  char buf[64];
  // Shortest text that reads back to the same value in the source's precision.
  const auto r = is_float32 ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v))
                            : std::to_chars(buf, buf + sizeof(buf), v);
  out.assign(buf, r.ptr);
}

template <typename T>
void format_integer(T v, std::string& out) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.assign(buf, r.ptr);
}

struct CastOptions {
  bool saturate = true;
  RoundMode round_mode = RoundMode::kUp;
};

// Source elements [begin, begin + n) as doubles; `bad` is set to the first
// string that holds no number.
void decode_block(const Tensor& src, int64_t begin, int64_t n, double* out, const std::string*& bad) {
  const DataType t = src.dtype();
  if (visit_type(NumericBoolTypes{}, t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* d = src.data<T>() + begin;
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(load(d[i]));
      }))
    return;
  const auto* bytes = static_cast<const uint8_t*>(src.raw_data());
  if (t == DataType::kString) {
    const auto* d = src.data<std::string>() + begin;
    for (int64_t i = 0; i < n; ++i) {
      if (!parse_number(d[i], out[i]) && bad == nullptr) bad = &d[i];
    }
  } else if (t == DataType::kFloat8E8M0) {
    for (int64_t i = 0; i < n; ++i) out[i] = e8m0_decode(bytes[begin + i]);
  } else if (const MiniFormat* f = mini_format(t); f != nullptr && packed_bits(t) == 0) {
    for (int64_t i = 0; i < n; ++i) out[i] = mini_decode(*f, bytes[begin + i]);
  } else if (t == DataType::kFloat4E2M1) {
    for (int64_t i = 0; i < n; ++i) out[i] = mini_decode(kE2M1, read_packed(bytes, begin + i, 4));
  } else {
    const int bits = packed_bits(t);
    const bool is_signed = t == DataType::kInt4 || t == DataType::kInt2;
    for (int64_t i = 0; i < n; ++i) {
      auto v = static_cast<int32_t>(read_packed(bytes, begin + i, bits));
      if (is_signed && v >= (1 << (bits - 1))) v -= 1 << bits;  // sign-extend
      out[i] = v;
    }
  }
}

// Doubles into target elements [begin, begin + n).
void encode_block(const double* in, int64_t n, DataType source, Tensor& dst, int64_t begin, const CastOptions& opt) {
  const DataType t = dst.dtype();
  if (visit_type(NumericBoolTypes{}, t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* d = dst.data<T>() + begin;
        for (int64_t i = 0; i < n; ++i) {
          if constexpr (std::is_same_v<T, bool>) {
            d[i] = in[i] != 0.0;
          } else if constexpr (kIsHalf<T>) {
            d[i] = store<T>(static_cast<float>(in[i]));
          } else if constexpr (std::is_integral_v<T>) {
            d[i] = float_to_int<T>(in[i]);
          } else {
            d[i] = static_cast<T>(in[i]);
          }
        }
      }))
    return;
  auto* bytes = static_cast<uint8_t*>(dst.raw_data());
  if (t == DataType::kString) {
    auto* d = dst.data<std::string>() + begin;
    const bool integral = is_integer_type(source) || source == DataType::kBool;
    for (int64_t i = 0; i < n; ++i) {
      if (integral) {
        format_integer(static_cast<int64_t>(in[i]), d[i]);
      } else {
        format_number(in[i], source != DataType::kDouble, d[i]);
      }
    }
  } else if (t == DataType::kFloat8E8M0) {
    for (int64_t i = 0; i < n; ++i) bytes[begin + i] = static_cast<uint8_t>(e8m0_encode(in[i], opt.saturate, opt.round_mode));
  } else if (const MiniFormat* f = mini_format(t); f != nullptr && packed_bits(t) == 0) {
    for (int64_t i = 0; i < n; ++i) bytes[begin + i] = static_cast<uint8_t>(mini_encode(*f, in[i], opt.saturate));
  } else if (t == DataType::kFloat4E2M1) {
    for (int64_t i = 0; i < n; ++i) write_packed(bytes, begin + i, 4, mini_encode(kE2M1, in[i], opt.saturate));
  } else {
    // 4- and 2-bit integers keep the low bits of the integer value, like
    // every other narrowing integer cast.
    const int bits = packed_bits(t);
    for (int64_t i = 0; i < n; ++i) {
      write_packed(bytes, begin + i, bits, static_cast<uint32_t>(float_to_int32(in[i])));
    }
  }
}

// ---- the direct path between ordinary types ------------------------------------

template <typename From, typename To>
inline To convert(const From& v) {
  if constexpr (std::is_same_v<To, bool>) {
    return load(v) != compute_t<From>{0};
  } else if constexpr (std::is_same_v<From, bool>) {
    return store<To>(static_cast<compute_t<To>>(v ? 1 : 0));
  } else if constexpr (kIsHalf<To>) {
    return store<To>(static_cast<float>(load(v)));
  } else if constexpr (kIsFloat<From> && std::is_integral_v<To>) {
    return float_to_int<To>(load(v));  // defined for NaN and out-of-range values
  } else {
    return static_cast<To>(load(v));
  }
}

template <typename From, typename To>
void cast_direct(ThreadPool& pool, const From* src, To* dst, int64_t n) {
  parallel_range(pool, n, kCheapChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = convert<From, To>(src[i]);
  });
}

// Strings to integers parse as integers, so that int64 values beyond 2^53
// survive; a fractional text falls back to the double and truncates. The
// first string that holds no number, or nullptr.
template <typename To>
const std::string* parse_integers(const std::string* src, To* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const std::string& s = src[i];
    const char* first = s.data();
    const char* last = s.data() + s.size();
    if (first != last && *first == '+' && last - first > 1 && first[1] != '-') ++first;
    To value{};
    const auto r = std::from_chars(first, last, value);
    if (r.ec == std::errc() && r.ptr == last) {
      dst[i] = value;
      continue;
    }
    double d = 0.0;
    if (!parse_number(s, d)) return &s;
    dst[i] = float_to_int<To>(d);
  }
  return nullptr;
}

Status cast_tensor(const KernelContext& ctx, const Tensor& src, Tensor& dst, const CastOptions& opt) {
  const int64_t n = src.num_elements();
  if (n == 0) return ok_status();
  const DataType from = src.dtype();
  const DataType to = dst.dtype();
  if (from == to && from != DataType::kString) {
    std::memcpy(dst.raw_data(), src.raw_data(), src.byte_size());
    return ok_status();
  }
  if (from == DataType::kString && to == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) dst.data<std::string>()[i] = src.data<std::string>()[i];
    return ok_status();
  }
  bool done = false;
  visit_type(NumericBoolTypes{}, from, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    done = visit_type(NumericBoolTypes{}, to, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      cast_direct(ctx.thread_pool(), src.data<From>(), dst.data<To>(), n);
    });
  });
  if (done) return ok_status();
  if (to == DataType::kString &&
      visit_type(NumericBoolTypes{}, from, [&](auto tag) {
        using From = typename decltype(tag)::type;
        const From* s = src.data<From>();
        std::string* d = dst.data<std::string>();
        for (int64_t i = 0; i < n; ++i) {
          if constexpr (std::is_same_v<From, bool>) {
            d[i] = s[i] ? "True" : "False";  // numpy's spelling, which the ONNX reference uses
          } else if constexpr (std::is_integral_v<From>) {
            format_integer(s[i], d[i]);
          } else {
            format_number(static_cast<double>(load(s[i])), !std::is_same_v<From, double>, d[i]);
          }
        }
      }))
    return ok_status();
  if (from == DataType::kString && is_integer_type(to) && packed_bits(to) == 0) {
    const std::string* bad = nullptr;
    visit_type(IntTypes{}, to, [&](auto tag) {
      using To = typename decltype(tag)::type;
      bad = parse_integers(src.data<std::string>(), dst.data<To>(), n);
    });
    return bad == nullptr ? ok_status() : not_a_number(ctx, src, bad);
  }
  // Everything else goes through blocks of doubles. Packed targets write
  // several elements per byte, so one thread does them all.
  constexpr int64_t kBlock = 256;
  // Only string sources can be bad, and those run on one thread.
  const std::string* bad = nullptr;
  auto run_blocks = [&](int64_t begin, int64_t end) {
    double buf[kBlock];
    const std::string* block_bad = nullptr;
    for (int64_t b = begin; b < end && block_bad == nullptr; b += kBlock) {
      const int64_t len = std::min(kBlock, end - b);
      decode_block(src, b, len, buf, block_bad);
      encode_block(buf, len, from, dst, b, opt);
    }
    if (block_bad != nullptr) bad = block_bad;
  };
  const bool threads_ok = packed_bits(to) == 0 && from != DataType::kString && to != DataType::kString;
  if (threads_ok) {
    parallel_range(ctx.thread_pool(), (n + kBlock - 1) / kBlock, kCheapChunk / kBlock,
                   [&](int64_t begin, int64_t end) { run_blocks(begin * kBlock, std::min(n, end * kBlock)); });
  } else {
    run_blocks(0, n);
  }
  return bad == nullptr ? ok_status() : not_a_number(ctx, src, bad);
}

bool castable(DataType t) {
  return t != DataType::kUndefined && t != DataType::kComplex64 && t != DataType::kComplex128 &&
         is_valid_data_type(static_cast<int32_t>(t));
}

Status read_cast_options(const KernelCreateContext& ctx, CastOptions& opt) {
  opt.saturate = ctx.node().attr_int("saturate", 1) != 0;
  const std::string mode = ctx.node().attr_string("round_mode", "up");
  if (mode == "up") {
    opt.round_mode = RoundMode::kUp;
  } else if (mode == "down") {
    opt.round_mode = RoundMode::kDown;
  } else if (mode == "nearest") {
    opt.round_mode = RoundMode::kNearest;
  } else {
    return ctx.error("attribute round_mode must be \"up\", \"down\" or \"nearest\", got \"" + mode + "\"");
  }
  return ok_status();
}

class CastKernel final : public Kernel {
 public:
  CastKernel(const KernelCreateContext& ctx, Status& status) {
    const Attribute* to = ctx.node().attr("to");
    if (to == nullptr) {
      status = ctx.error("attribute 'to' is required");
      return;
    }
    if (!is_valid_data_type(static_cast<int32_t>(to->i)) || !castable(static_cast<DataType>(to->i))) {
      status = ctx.error("attribute 'to' is " + std::to_string(to->i) + ", not a type Cast supports");
      return;
    }
    to_ = static_cast<DataType>(to->i);
    status = read_cast_options(ctx, options_);
  }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return kernel_error(ctx, "input 0 is missing");
    if (!castable(x->dtype()))
      return kernel_error(ctx, "cannot cast from " + std::string(data_type_name(x->dtype())));
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, to_, x->shape()));
    return cast_tensor(ctx, *x, *y, options_);
  }

 private:
  DataType to_ = DataType::kUndefined;
  CastOptions options_;
};

class CastLikeKernel final : public Kernel {
 public:
  CastLikeKernel(const KernelCreateContext& ctx, Status& status) { status = read_cast_options(ctx, options_); }

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* like = ctx.input(1);
    if (x == nullptr || like == nullptr) return kernel_error(ctx, "inputs 0 and 1 are required");
    if (!castable(x->dtype()) || !castable(like->dtype()))
      return kernel_error(ctx, "cannot cast from " + std::string(data_type_name(x->dtype())) + " to " +
                                   std::string(data_type_name(like->dtype())));
    SY_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, like->dtype(), x->shape()));
    return cast_tensor(ctx, *x, *y, options_);
  }

 private:
  CastOptions options_;
};

constexpr uint64_t kCastTypes =
    type_mask(NumericBoolTypes{}) | type_bit(DataType::kString) | type_bit(DataType::kFloat8E4M3FN) |
    type_bit(DataType::kFloat8E4M3FNUZ) | type_bit(DataType::kFloat8E5M2) | type_bit(DataType::kFloat8E5M2FNUZ) |
    type_bit(DataType::kFloat8E8M0) | type_bit(DataType::kFloat4E2M1) | type_bit(DataType::kInt4) |
    type_bit(DataType::kUint4) | type_bit(DataType::kInt2) | type_bit(DataType::kUint2);

constexpr KernelDef kCastKernels[] = {
    {"", "Cast", 6, kLatestVersion, 0, kCastTypes, &make_kernel<CastKernel>},
    {"", "CastLike", 15, kLatestVersion, 0, kCastTypes, &make_kernel<CastLikeKernel>},
};

}  // namespace

std::span<const KernelDef> cast_kernels() { return kCastKernels; }

}  // namespace sy::cpu
