// The one body of the QuantizeSimd loops (quantize_simd.h), included inside
// a namespace of its own by each ISA's file, which then defines
// kQuantizeSimd's table from it. GCC vectors of kLanes floats, which the
// including file sets to its registers' width (16, 8, 4): wider generic
// vectors than the ISA has go through the stack. A run's last n % kLanes
// elements go through a padded vector, so every element takes the same
// steps.
// No include guard: each ISA's file includes it once, in its own namespace.
// NOLINTBEGIN(llvm-header-guard)

typedef float QF32v __attribute__((vector_size(4 * kLanes)));
typedef int32_t QI32v __attribute__((vector_size(4 * kLanes)));

// Runs step(in, out) over x[0, n) and y[0, n), kLanes elements a vector;
// the last n % kLanes go through a zero-padded vector. Vectors pass by reference:
// a 64-byte vector argument or return value is an ABI change GCC warns
// about in the builds without AVX-512.
template <typename InV, typename OutV, typename In, typename Out, typename Step>
void for_each_vector(const In* x, int64_t n, Out* y, Step&& step) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    InV v;
    OutV r;
    std::memcpy(&v, x + i, sizeof(v));
    step(v, r);
    std::memcpy(y + i, &r, sizeof(r));
  }
  if (i < n) {
    const auto rest = static_cast<size_t>(n - i);
    InV v = {};
    OutV r;
    std::memcpy(&v, x + i, rest * sizeof(In));
    step(v, r);
    std::memcpy(y + i, &r, rest * sizeof(Out));
  }
}

// Bytes 0, 4, 8, ... of `bytes`: the low byte of each 32-bit lane.
template <typename Out, typename Bytes, int... I>
inline Out low_bytes(const Bytes& bytes, std::integer_sequence<int, I...> /*lanes*/) {
  return __builtin_shufflevector(bytes, bytes, (I * 4)...);
}

template <typename Q>
void quantize_run(const float* x, int64_t n, float scale, int32_t zero_point, Q* y) {
  typedef Q QQv __attribute__((vector_size(kLanes)));
  typedef Q QB __attribute__((vector_size(4 * kLanes)));  // a QI32v's bytes
  // Clamping x / scale to [lo - zp, hi - zp] before rounding keeps it below
  // 2^22, where adding and removing 1.5 * 2^23 rounds to the nearest integer,
  // ties to even, in the default rounding mode (no SSE4.1 round needed).
  // NaN fails both comparisons of the first clamp and becomes the low end.
  const QF32v lo = QF32v{} + static_cast<float>(std::numeric_limits<Q>::min() - zero_point);
  const QF32v hi = QF32v{} + static_cast<float>(std::numeric_limits<Q>::max() - zero_point);
  const QF32v round = QF32v{} + 12582912.0f;
  for_each_vector<QF32v, QQv>(x, n, y, [&](const QF32v& in, QQv& out) {
    QF32v v = in / scale;
    v = v > lo ? v : lo;
    v = v < hi ? v : hi;
    v = (v + round) - round;
    // In range now, so each lane's low byte is its value: picking those
    // bytes is one shuffle, where a converting narrow goes lane by lane
    // without AVX-512.
    const QI32v q = __builtin_convertvector(v, QI32v) + zero_point;
    out = low_bytes<QQv, QB>(reinterpret_cast<const QB&>(q), std::make_integer_sequence<int, kLanes>{});
  });
}

// A plain loop: GCC widens the bytes with pmovzx / pmovsx here, where a
// converting vector cast goes lane by lane without AVX-512.
template <typename Q>
void dequantize_run(const Q* x, int64_t n, float scale, int32_t zero_point, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zero_point) * scale;
}

inline void min_max_run(const float* x, int64_t n, float& min, float& max) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // Two pairs of accumulators, so that consecutive steps do not wait on
  // each other. A NaN lane fails the comparison and leaves the accumulator.
  QF32v lo0 = QF32v{} + kInf, lo1 = lo0;
  QF32v hi0 = QF32v{} - kInf, hi1 = hi0;
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    QF32v v0, v1;
    std::memcpy(&v0, x + i, sizeof(v0));
    std::memcpy(&v1, x + i + kLanes, sizeof(v1));
    lo0 = v0 < lo0 ? v0 : lo0;
    hi0 = v0 > hi0 ? v0 : hi0;
    lo1 = v1 < lo1 ? v1 : lo1;
    hi1 = v1 > hi1 ? v1 : hi1;
  }
  if (i < n) {
    // Padding with the run's first element changes neither end.
    for (; i < n; i += kLanes) {
      QF32v v = QF32v{} + x[0];
      std::memcpy(&v, x + i, static_cast<size_t>(std::min<int64_t>(kLanes, n - i)) * sizeof(float));
      lo0 = v < lo0 ? v : lo0;
      hi0 = v > hi0 ? v : hi0;
    }
  }
  lo0 = lo1 < lo0 ? lo1 : lo0;
  hi0 = hi1 > hi0 ? hi1 : hi0;
  min = kInf;
  max = -kInf;
  for (int l = 0; l < kLanes; ++l) {
    min = lo0[l] < min ? lo0[l] : min;
    max = hi0[l] > max ? hi0[l] : max;
  }
}

inline constexpr QuantizeSimd kQuantizeSimd = {&quantize_run<uint8_t>, &quantize_run<int8_t>,
                                               &dequantize_run<uint8_t>, &dequantize_run<int8_t>, &min_max_run};

// NOLINTEND(llvm-header-guard)
