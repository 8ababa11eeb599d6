// The one body of the 8-bit GEMM's row epilogue (qgemm_epilogue.h),
// included inside a namespace of its own by each ISA's file, which then
// defines kQgemmEpilogueSimd from it. GCC vectors of kLanes lanes, set by
// the including file to its registers' width (16, 8, 4). The last
// cols % kLanes columns go through a zero-padded vector, so every element
// takes the same steps.
// No include guard: each ISA's file includes it once, in its own namespace.
// NOLINTBEGIN(llvm-header-guard)

typedef float EF32v __attribute__((vector_size(4 * kLanes)));
typedef int32_t EI32v __attribute__((vector_size(4 * kLanes)));
typedef uint32_t EU32v __attribute__((vector_size(4 * kLanes)));

template <typename V, typename T>
inline V load_lanes(const T* p, int64_t n) {
  V v = {};
  std::memcpy(&v, p, static_cast<size_t>(n) * sizeof(T));
  return v;
}

template <typename Q, int... I>
inline void store_bytes(const EI32v& q, Q* out, int64_t n, std::integer_sequence<int, I...> /*lanes*/) {
  typedef Q QB __attribute__((vector_size(4 * kLanes)));  // q's bytes
  typedef Q QQv __attribute__((vector_size(kLanes)));
  // In range, so each lane's low byte is its value: one shuffle, where a
  // converting narrow goes lane by lane without AVX-512.
  const QB bytes = reinterpret_cast<const QB&>(q);
  const QQv low = __builtin_shufflevector(bytes, bytes, (I * 4)...);
  std::memcpy(out, &low, static_cast<size_t>(n));
}

// Lanes [j, j + n) of row i; n is kLanes except in a row's last step,
// where the copies are no longer of a constant size.
template <bool kFull>
inline void epilogue_step(const QgemmTileEpilogue& p, const int32_t* raw, int64_t i, int64_t j, int64_t n) {
  const int64_t count = kFull ? kLanes : n;
  // Wrapping arithmetic: exact whenever the true sum fits in int32.
  EU32v v = load_lanes<EU32v>(reinterpret_cast<const uint32_t*>(raw) + j, count);
  if (p.col_term != nullptr) v -= load_lanes<EU32v>(reinterpret_cast<const uint32_t*>(p.col_term) + j, count);
  if (p.row_term != nullptr) v += static_cast<uint32_t>(p.row_term[i]);
  if (p.kind == QgemmOutput::kInt32) {
    std::memcpy(static_cast<int32_t*>(p.out) + i * p.ldo + j, &v, static_cast<size_t>(count) * sizeof(int32_t));
    return;
  }
  EF32v mult;
  if (p.col_mult == nullptr) {
    mult = EF32v{} + p.row_mult[i];
  } else if (p.row_mult == nullptr) {
    mult = load_lanes<EF32v>(p.col_mult + j, count);
  } else {
    mult = (p.row_mult[i] * load_lanes<EF32v>(p.col_mult + j, count)) / p.y_scale;
  }
  EF32v f = __builtin_convertvector(reinterpret_cast<const EI32v&>(v), EF32v) * mult;
  // Clamping first keeps the rounding trick exact and sends NaN to lo.
  const EF32v clamp_lo = EF32v{} - 1024.0f, clamp_hi = EF32v{} + 1024.0f;
  f = f > clamp_lo ? f : clamp_lo;
  f = f < clamp_hi ? f : clamp_hi;
  const EF32v round = EF32v{} + 12582912.0f;  // 1.5 * 2^23: rounds to an integer, ties to even
  f = (f + round) - round;
  const EI32v lo = EI32v{} + (p.kind == QgemmOutput::kInt8 ? -128 : 0);
  const EI32v hi = EI32v{} + (p.kind == QgemmOutput::kInt8 ? 127 : 255);
  EI32v q = __builtin_convertvector(f, EI32v) + p.y_zp;
  q = q < lo ? lo : q;
  q = q > hi ? hi : q;
  if (p.kind == QgemmOutput::kInt8) {
    store_bytes(q, static_cast<int8_t*>(p.out) + i * p.ldo + j, count, std::make_integer_sequence<int, kLanes>{});
  } else {
    store_bytes(q, static_cast<uint8_t*>(p.out) + i * p.ldo + j, count, std::make_integer_sequence<int, kLanes>{});
  }
}

inline void epilogue_tile(const QgemmTileEpilogue& p, const int32_t* raw, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    const int32_t* row = raw + i * kQgemmTileCols;
    int64_t j = 0;
    for (; j + kLanes <= cols; j += kLanes) epilogue_step<true>(p, row, i, j, kLanes);
    if (j < cols) epilogue_step<false>(p, row, i, j, cols - j);
  }
}

inline constexpr QgemmEpilogueSimd kQgemmEpilogueSimd = {&epilogue_tile};

// NOLINTEND(llvm-header-guard)
