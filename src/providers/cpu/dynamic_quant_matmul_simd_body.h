// The one body of the DqmmSimd functions (dynamic_quant_matmul_simd.h),
// included inside a namespace of its own by each ISA's file after it sets
// kLanes to its registers' width in 32-bit lanes (16, 8, 4); it then
// defines kDqmmSimd's table from it.
//
// The products are not contracted into FMAs (CMakeLists.txt compiles these
// files with -ffp-contract=off), so that y = v * mult + bias rounds twice,
// as the unfused Mul and Add do.
// No include guard: each ISA's file includes it once, in its own namespace.
// NOLINTBEGIN(llvm-header-guard)

typedef uint32_t DqU32v __attribute__((vector_size(4 * kLanes)));
typedef int32_t DqI32v __attribute__((vector_size(4 * kLanes)));
typedef float DqF32v __attribute__((vector_size(4 * kLanes)));

static_assert(kQgemmTileCols % kLanes == 0, "a tile row is whole vectors");

// Unsigned vectors: the zero-point identity holds in wrapping arithmetic,
// which signed vector lanes do not promise.
template <bool kZeroPoint, bool kBias>
void float_tile(const int32_t* tile, int64_t m0, int64_t rows, int64_t n0, int64_t cols, const void* arg) {
  const DqmmEpilogue& e = *static_cast<const DqmmEpilogue*>(arg);
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t m = m0 + i;
    const int32_t* raw = tile + i * kQgemmTileCols;
    float* out = e.y + m * e.ldy + n0;
    const auto at = kZeroPoint ? static_cast<uint32_t>(e.a_term[m]) : 0u;
    for (int64_t j = 0; j < cols; j += kLanes) {
      const int64_t n = n0 + j;
      DqU32v v, ct;
      DqF32v mult;
      std::memcpy(&v, raw + j, sizeof(v));
      std::memcpy(&ct, e.col_term + n, sizeof(ct));
      std::memcpy(&mult, e.mult + n, sizeof(mult));
      v -= ct;
      if constexpr (kZeroPoint) {
        DqU32v zb;
        std::memcpy(&zb, e.b_zp + n, sizeof(zb));
        v -= zb * at;
      }
      DqF32v f = __builtin_convertvector(reinterpret_cast<const DqI32v&>(v), DqF32v) * mult;
      if constexpr (kBias) {
        DqF32v b;
        std::memcpy(&b, e.bias + n, sizeof(b));
        f += b;
      }
      // A whole vector is one store; a variable-length memcpy would be a
      // library call per vector.
      if (j + kLanes <= cols) {
        std::memcpy(out + j, &f, sizeof(f));
      } else {
        std::memcpy(out + j, &f, static_cast<size_t>(cols - j) * sizeof(float));
      }
    }
  }
}

// A plain loop: GCC vectorizes it for the ISA the file is compiled for.
inline int32_t sum_bytes_run(const uint8_t* p, int64_t n) {
  uint32_t s = 0;
  for (int64_t i = 0; i < n; ++i) s += p[i];
  return static_cast<int32_t>(s);
}

inline constexpr DqmmSimd kDqmmSimd = {
    {{&float_tile<false, false>, &float_tile<false, true>}, {&float_tile<true, false>, &float_tile<true, true>}},
    &sum_bytes_run};

// NOLINTEND(llvm-header-guard)
