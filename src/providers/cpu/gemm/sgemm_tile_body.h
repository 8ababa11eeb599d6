// The one body of the GEMM micro-kernels (sgemm_kernels.h), written against
// a vector policy V (simd/vec_*.h) of L floats: a tile of R rows by NV
// vectors of columns. Each ISA file includes it inside a namespace of its
// own after naming `Vec` and defines its micro_kernel_* from tile_rows.
// Included at namespace scope.

// One k step: acc[i] += a_i * b for the R rows' values *a[i].
template <class V, int R, int NV>
__attribute__((always_inline)) inline void k_step(const float* const (&a)[R], const float* b,
                                                  typename V::T (&acc)[R][NV]) {
  typename V::T bv[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) bv[v] = V::load(b + V::kLanes * v);
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    const typename V::T av = V::set1(*a[i]);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = V::fmadd(av, bv[v], acc[i][v]);
  }
}

// alpha, beta, biases, residual and clamp, then the store of one finished tile. Vector
// v covers columns [v L, v L + L), which lie in block v L / 16 of 16 columns
// (c_step16 floats apart in C) at offset v L % 16.
template <class V, int R, int NV>
__attribute__((always_inline)) inline void store_tile(const MicroTile& t, typename V::T (&acc)[R][NV]) {
  using T = typename V::T;
  constexpr int L = V::kLanes;
  const T alpha = V::set1(t.alpha), beta = V::set1(t.beta);
  const T lo = V::set1(t.lo), hi = V::set1(t.hi);
  const int tail = t.nr - L * (NV - 1);
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const int n = v == NV - 1 ? tail : L;
      const int64_t offset = i * t.ldc + (v * L) / 16 * t.c_step16 + (v * L) % 16;
      float* cv = t.c + offset;
      T x = V::mul(acc[i][v], alpha);
      if (t.beta != 0.0f) x = V::fmadd(beta, n == L ? V::load(cv) : V::load_n(cv, n), x);
      if (t.row_bias != nullptr) x = V::add(x, V::set1(t.row_bias[i]));
      if (t.col_bias != nullptr) {
        const float* bias = t.col_bias + v * L;
        x = V::add(x, n == L ? V::load(bias) : V::load_n(bias, n));
      }
      if (t.residual != nullptr) {
        const float* z = t.residual + offset;
        x = V::add(x, n == L ? V::load(z) : V::load_n(z, n));
      }
      if (t.clamp) x = V::min(hi, V::max(lo, x));  // x last: a NaN comes through (vec_portable.h)
      if (n == L) {
        V::store(cv, x);
      } else {
        V::store_n(cv, x, n);
      }
    }
  }
}

// The prefetch_rate lines of group g (one group per 4 k steps) of the
// region the tile prefetches (sgemm_kernels.h); 64-byte lines, 16 floats.
__attribute__((always_inline)) inline void prefetch_lines(const MicroTile& t, int64_t g) {
  if (t.prefetch == nullptr) return;
  const float* p = t.prefetch + g * t.prefetch_rate * 16;
  __builtin_prefetch(p, 0, 3);
  if (t.prefetch_rate > 1) __builtin_prefetch(p + 16, 0, 3);
}

// B panels hold kNr = NV_max * L floats per k step.
template <class V, int R, int NV, int64_t kNr>
void tile(const MicroTile& t) {
  typename V::T acc[R][NV];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = V::set1(0.0f);

  const float* b = t.b;
  if (t.a_row_stride == 0) {
    // A packed: kMr floats per k step.
    const float* a = t.a;
#pragma GCC unroll 4
    for (int64_t k = 0; k < t.kc; ++k) {
      if ((k & 3) == 0) prefetch_lines(t, k / 4);
      const float* rows[R];
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) rows[i] = a + i;
      k_step<V, R, NV>(rows, b, acc);
      a += kMr;
      b += kNr;
    }
  } else {
    // A in place: runs of 16 k steps per row.
    const float* rows[R];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) rows[i] = t.a + i * t.a_row_stride;
    for (int64_t k0 = 0; k0 < t.kc; k0 += 16) {
      const int64_t n = t.kc - k0 < 16 ? t.kc - k0 : 16;
#pragma GCC unroll 4
      for (int64_t q = 0; q < 4; ++q) prefetch_lines(t, k0 / 4 + q);
#pragma GCC unroll 4
      for (int64_t k = 0; k < n; ++k) {
        const float* at[R];
#pragma GCC unroll 8
        for (int i = 0; i < R; ++i) at[i] = rows[i] + k;
        k_step<V, R, NV>(at, b, acc);
        b += kNr;
      }
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) rows[i] += t.a_run_stride;
    }
  }
  store_tile<V, R, NV>(t, acc);
}

// A tile of R rows: as many vectors as its columns need, up to NVMax.
template <class V, int R, int NVMax>
void tile_rows(const MicroTile& t) {
  constexpr int64_t kNr = int64_t{NVMax} * V::kLanes;
  const int vectors = (t.nr + V::kLanes - 1) / V::kLanes;
  if constexpr (NVMax >= 4) {
    if (vectors >= 4) return tile<V, R, 4, kNr>(t);
    if (vectors == 3) return tile<V, R, 3, kNr>(t);
  }
  if (vectors >= 2) return tile<V, R, 2, kNr>(t);
  tile<V, R, 1, kNr>(t);
}

template <class V, int NVMax>
void micro_kernel(const MicroTile& t) {
  switch (t.mr) {
    case 1: tile_rows<V, 1, NVMax>(t); break;
    case 2: tile_rows<V, 2, NVMax>(t); break;
    case 3: tile_rows<V, 3, NVMax>(t); break;
    case 4: tile_rows<V, 4, NVMax>(t); break;
    case 5: tile_rows<V, 5, NVMax>(t); break;
    default: tile_rows<V, 6, NVMax>(t); break;
  }
}
