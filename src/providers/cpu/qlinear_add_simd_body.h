// The one body of the QLinearAddSimd loop (qlinear_add_simd.h), included
// inside a namespace of its own by each ISA's file, which then defines
// kQLinearAddSimd from it. GCC vectors of kLanes floats, which the
// including file sets to its registers' width (16, 8, 4).
//
// A run goes in blocks that stay in L1: plain loops widen each block's
// bytes to float and scale them (GCC vectorizes those with pmovzx / pmovsx,
// where a converting vector cast of bytes goes lane by lane without
// AVX-512), then vectors add, divide, round and narrow. A block's last
// m % kLanes elements are computed in zero-padded lanes, so every element
// takes the same steps.
// No include guard: each ISA's file includes it once, in its own namespace.
// NOLINTBEGIN(llvm-header-guard)

typedef float AddF32v __attribute__((vector_size(4 * kLanes)));
typedef int32_t AddI32v __attribute__((vector_size(4 * kLanes)));

inline constexpr int64_t kAddBlock = 256;  // elements; a multiple of every kLanes

// Bytes 0, 4, 8, ... of `bytes`: the low byte of each 32-bit lane.
template <typename Out, typename Bytes, int... I>
inline Out add_low_bytes(const Bytes& bytes, std::integer_sequence<int, I...> /*lanes*/) {
  return __builtin_shufflevector(bytes, bytes, (I * 4)...);
}

// out[i] = (x[i] - zero_point) * scale, as DequantizeLinear computes it.
template <typename Q>
inline void widen_scaled(const Q* x, int64_t m, int32_t zero_point, float scale, float* out) {
  for (int64_t i = 0; i < m; ++i) out[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zero_point) * scale;
}

template <bool kBMoves, typename Q>
void add_blocks(const Q* a, const Q* b, int64_t n, const QLinearAddParams& p, Q* c) {
  typedef Q QQv __attribute__((vector_size(kLanes)));
  typedef Q QB __attribute__((vector_size(4 * kLanes)));  // an AddI32v's bytes
  alignas(64) float fa[kAddBlock];
  alignas(64) float fb[kAddBlock];
  // Clamping the quotient to [lo - zp, hi - zp] before rounding (the bounds
  // are integers, so this commutes with rounding) keeps it below 2^22,
  // where adding and removing 1.5 * 2^23 rounds to the nearest integer,
  // ties to even, in the default rounding mode. NaN fails both comparisons
  // of the first clamp and becomes the low end.
  const AddF32v lo = AddF32v{} + static_cast<float>(p.lo - p.c_zero_point);
  const AddF32v hi = AddF32v{} + static_cast<float>(p.hi - p.c_zero_point);
  const AddF32v round = AddF32v{} + 12582912.0f;
  const float b_fixed =
      kBMoves ? 0.0f : static_cast<float>(static_cast<int32_t>(b[0]) - p.b_zero_point) * p.b_scale;
  for (int64_t i0 = 0; i0 < n; i0 += kAddBlock) {
    const int64_t m = std::min(kAddBlock, n - i0);
    const int64_t padded = (m + kLanes - 1) / kLanes * kLanes;
    widen_scaled(a + i0, m, p.a_zero_point, p.a_scale, fa);
    if (kBMoves) widen_scaled(b + i0, m, p.b_zero_point, p.b_scale, fb);
    for (int64_t i = m; i < padded; ++i) fa[i] = fb[i] = 0.0f;
    for (int64_t i = 0; i < padded; i += kLanes) {
      AddF32v s;
      std::memcpy(&s, fa + i, sizeof(s));
      if (kBMoves) {
        AddF32v vb;
        std::memcpy(&vb, fb + i, sizeof(vb));
        s = s + vb;
      } else {
        s = s + b_fixed;
      }
      AddF32v v = s / p.c_scale;
      v = v > lo ? v : lo;
      v = v < hi ? v : hi;
      v = (v + round) - round;
      // In range now, so each lane's low byte is its value.
      const AddI32v q = __builtin_convertvector(v, AddI32v) + p.c_zero_point;
      const QQv out = add_low_bytes<QQv, QB>(reinterpret_cast<const QB&>(q), std::make_integer_sequence<int, kLanes>{});
      // A constant-size copy for whole vectors: a variable one goes byte by
      // byte through the stack.
      if (m - i >= kLanes) {
        std::memcpy(c + i0 + i, &out, sizeof(out));
      } else {
        std::memcpy(c + i0 + i, &out, static_cast<size_t>(m - i) * sizeof(Q));
      }
    }
  }
}

template <typename Q>
void add_run(const Q* a, const Q* b, bool b_moves, int64_t n, const QLinearAddParams& p, Q* c) {
  if (b_moves)
    add_blocks<true>(a, b, n, p, c);
  else
    add_blocks<false>(a, b, n, p, c);
}

inline constexpr QLinearAddSimd kQLinearAddSimd = {&add_run<uint8_t>, &add_run<int8_t>};

// NOLINTEND(llvm-header-guard)
