// The one body of the QuantizeSimd loops (quantize_simd.h), included inside
// a namespace of its own by each ISA's file, which then defines
// kQuantizeSimd's table from it. 16-lane GCC vectors; a run's last n % 16
// elements go through a padded vector, so every element takes the same
// steps.
// No include guard: each ISA's file includes it once, in its own namespace.
// NOLINTBEGIN(llvm-header-guard)

typedef float QF32x16 __attribute__((vector_size(64)));
typedef int32_t QI32x16 __attribute__((vector_size(64)));

// Runs step(in, out) over x[0, n) and y[0, n), 16 elements a vector; the
// last n % 16 go through a zero-padded vector. Vectors pass by reference:
// a 64-byte vector argument or return value is an ABI change GCC warns
// about in the builds without AVX-512.
template <typename InV, typename OutV, typename In, typename Out, typename Step>
void for_each_vector(const In* x, int64_t n, Out* y, Step&& step) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
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

template <typename Q>
void quantize_run(const float* x, int64_t n, float scale, int32_t zero_point, Q* y) {
  typedef Q QQx16 __attribute__((vector_size(16)));
  // Clamping x / scale to [lo - zp, hi - zp] before rounding keeps it below
  // 2^22, where adding and removing 1.5 * 2^23 rounds to the nearest integer,
  // ties to even, in the default rounding mode (no SSE4.1 round needed).
  // NaN fails both comparisons of the first clamp and becomes the low end.
  const QF32x16 lo = QF32x16{} + static_cast<float>(std::numeric_limits<Q>::min() - zero_point);
  const QF32x16 hi = QF32x16{} + static_cast<float>(std::numeric_limits<Q>::max() - zero_point);
  const QF32x16 round = QF32x16{} + 12582912.0f;
  for_each_vector<QF32x16, QQx16>(x, n, y, [&](const QF32x16& in, QQx16& out) {
    QF32x16 v = in / scale;
    v = v > lo ? v : lo;
    v = v < hi ? v : hi;
    v = (v + round) - round;
    out = __builtin_convertvector(__builtin_convertvector(v, QI32x16) + zero_point, QQx16);
  });
}

template <typename Q>
void dequantize_run(const Q* x, int64_t n, float scale, int32_t zero_point, float* y) {
  typedef Q QQx16 __attribute__((vector_size(16)));
  for_each_vector<QQx16, QF32x16>(x, n, y, [&](const QQx16& q, QF32x16& out) {
    out = __builtin_convertvector(__builtin_convertvector(q, QI32x16) - zero_point, QF32x16) * scale;
  });
}

inline void min_max_run(const float* x, int64_t n, float& min, float& max) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // Two pairs of accumulators, so that consecutive steps do not wait on
  // each other. A NaN lane fails the comparison and leaves the accumulator.
  QF32x16 lo[2] = {QF32x16{} + kInf, QF32x16{} + kInf};
  QF32x16 hi[2] = {QF32x16{} - kInf, QF32x16{} - kInf};
  auto take = [&](const QF32x16& v, int k) {
    lo[k] = v < lo[k] ? v : lo[k];
    hi[k] = v > hi[k] ? v : hi[k];
  };
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    QF32x16 v[2];
    std::memcpy(v, x + i, sizeof(v));
    take(v[0], 0);
    take(v[1], 1);
  }
  for (; i + 16 <= n; i += 16) {
    QF32x16 v;
    std::memcpy(&v, x + i, sizeof(v));
    take(v, 0);
  }
  if (i < n) {
    // Padding with the run's first element changes neither end.
    QF32x16 v = QF32x16{} + x[0];
    std::memcpy(&v, x + i, static_cast<size_t>(n - i) * sizeof(float));
    take(v, 1);
  }
  min = kInf;
  max = -kInf;
  for (int k = 0; k < 2; ++k)
    for (int l = 0; l < 16; ++l) {
      min = lo[k][l] < min ? lo[k][l] : min;
      max = hi[k][l] > max ? hi[k][l] : max;
    }
}

inline constexpr QuantizeSimd kQuantizeSimd = {&quantize_run<uint8_t>, &quantize_run<int8_t>,
                                               &dequantize_run<uint8_t>, &dequantize_run<int8_t>, &min_max_run};

// NOLINTEND(llvm-header-guard)
