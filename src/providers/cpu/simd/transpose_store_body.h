// The body of transpose_store_f32 (simd/transpose_store.h), written once
// against a vector policy V (simd/vec_*.h) and included by the file compiled
// for each ISA, at namespace scope, after `using Vec = ...`.

// Residual and clamp over n floats of one dst row, just written.
template <class V>
void finish_row(float* d, const float* z, int64_t n, const TransposeStoreArgs& a) {
  constexpr int L = V::kLanes;
  int64_t i = 0;
  const typename V::T lo = V::set1(a.lo), hi = V::set1(a.hi);
  for (; i + L <= n; i += L) {
    typename V::T v = V::load(d + i);
    if (z != nullptr) v = V::add(v, V::load(z + i));
    if (a.clamp) v = V::min(hi, V::max(lo, v));  // v last: a NaN comes through
    V::store(d + i, v);
  }
  for (; i < n; ++i) {
    float v = d[i];
    if (z != nullptr) v += z[i];
    if (a.clamp) v = std::min(std::max(v, a.lo), a.hi);
    d[i] = v;
  }
}

// A block of ri x cj (ri, cj <= L) at the bottom or right edge. A row or
// two (a 7x7 map's 49th position) goes element by element; anything larger
// is one register transpose through an L x L stack buffer, read and written
// with masked vector moves (a memcpy per row was a library call each, and
// 13 % of a 7x7 conv's time).
template <class V>
void transpose_edge(const TransposeStoreArgs& a, int64_t i0, int64_t ri, int64_t j0, int64_t cj) {
  constexpr int L = V::kLanes;
  const float* src = a.src + i0 * a.ld_src + j0;
  float* dst = a.dst + j0 * a.ld_dst + i0;
  if (ri <= 2 || cj <= 2) {
    for (int64_t j = 0; j < cj; ++j)
      for (int64_t i = 0; i < ri; ++i) dst[j * a.ld_dst + i] = src[i * a.ld_src + j];
    return;
  }
  alignas(64) float in[L * L], out[L * L];  // rows past ri: zeros, never stored
  for (int64_t i = 0; i < L; ++i)
    V::store(in + i * L, i < ri ? V::load_n(src + i * a.ld_src, static_cast<int>(cj)) : V::set1(0.0f));
  V::transpose(in, L, out, L);
  for (int64_t j = 0; j < cj; ++j) V::store_n(dst + j * a.ld_dst, V::load(out + j * L), static_cast<int>(ri));
}

template <class V>
void transpose_store(const TransposeStoreArgs& a) {
  constexpr int L = V::kLanes;
  for (int64_t i0 = 0; i0 < a.rows; i0 += L) {
    const int64_t ri = std::min<int64_t>(L, a.rows - i0);
    for (int64_t j0 = 0; j0 < a.cols; j0 += L) {
      const int64_t cj = std::min<int64_t>(L, a.cols - j0);
      if (ri == L && cj == L) {
        V::transpose(a.src + i0 * a.ld_src + j0, a.ld_src, a.dst + j0 * a.ld_dst + i0, a.ld_dst);
      } else {
        transpose_edge<V>(a, i0, ri, j0, cj);
      }
    }
  }
  if (a.residual == nullptr && !a.clamp) return;
  for (int64_t j = 0; j < a.cols; ++j)
    finish_row<V>(a.dst + j * a.ld_dst, a.residual != nullptr ? a.residual + j * a.ld_dst : nullptr, a.rows, a);
}
