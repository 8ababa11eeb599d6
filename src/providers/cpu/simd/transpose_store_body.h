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
    if (a.clamp) v = V::min(V::max(v, lo), hi);
    V::store(d + i, v);
  }
  for (; i < n; ++i) {
    float v = d[i];
    if (z != nullptr) v += z[i];
    if (a.clamp) v = std::min(std::max(v, a.lo), a.hi);
    d[i] = v;
  }
}

// A block of ri x cj (ri, cj <= L) at the bottom or right edge: through an
// L x L buffer, so that it too is one register transpose.
template <class V>
void transpose_edge(const TransposeStoreArgs& a, int64_t i0, int64_t ri, int64_t j0, int64_t cj) {
  constexpr int L = V::kLanes;
  float in[L * L] = {}, out[L * L];  // rows past ri / columns past cj: zeros, never stored
  for (int64_t i = 0; i < ri; ++i) std::memcpy(in + i * L, a.src + (i0 + i) * a.ld_src + j0, static_cast<size_t>(cj) * sizeof(float));
  V::transpose(in, L, out, L);
  for (int64_t j = 0; j < cj; ++j)
    std::memcpy(a.dst + (j0 + j) * a.ld_dst + i0, out + j * L, static_cast<size_t>(ri) * sizeof(float));
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
