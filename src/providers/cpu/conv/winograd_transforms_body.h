// The one body of the Winograd transforms (winograd_transforms.h). Each ISA
// file includes it inside a namespace of its own after naming `Vec`, its
// vector policy (simd/vec_portable.h describes the interface).
// Included at namespace scope; needs <algorithm>, <cstdint>, <cstring>.

// r = B^T d for one patch-vector of kP inputs. B^T depends only on the
// points, so each patch size serves every tile and kernel side that add up
// to it (kP = tile + kernel - 1): 4 points (0, +-1, infinity) for
// F(2x2, 3x3); 6 (0, +-1, +-2, infinity) for F(4x4, 3x3) and F(5x5, 2x2);
// 7 (+-1, +-2, +-1/2, infinity; winograd.h) for F(5x5, 3x3) and F(4x4, 4x4).
template <class V, int kP>
inline void input_1d(const typename V::T* d, typename V::T* r) {
  if constexpr (kP == 7) {
    // Points 1, -1, 2, -2, 1/2, -1/2, infinity; row j holds the
    // coefficients of the product of (x - p) over the finite points other
    // than p_j (the 1 / prod(p_j - p) goes to the weights). The rows of a pair +-p differ only in the
    // sign of the terms in d[0], d[2], d[4]: r = odd +- even, the sums of
    // the odd- and even-indexed terms (odd1, even1 for the pair +-1 ...).
    const auto odd1 = V::add(V::fmadd(V::set1(-4.25f), d[3], d[1]), d[5]);
    const auto even1 = V::add(V::fmadd(V::set1(-4.25f), d[2], d[0]), d[4]);
    r[0] = V::add(odd1, even1);
    r[1] = V::sub(odd1, even1);
    const auto odd2 = V::fmadd(V::set1(0.25f), d[1], V::fmadd(V::set1(-1.25f), d[3], d[5]));
    const auto even2 = V::fmadd(V::set1(0.5f), d[0], V::fmadd(V::set1(-2.5f), d[2], V::mul(V::set1(2.0f), d[4])));
    r[2] = V::add(odd2, even2);
    r[3] = V::sub(odd2, even2);
    const auto odd_half = V::fmadd(V::set1(4.0f), d[1], V::fmadd(V::set1(-5.0f), d[3], d[5]));
    const auto even_half = V::fmadd(V::set1(2.0f), d[0], V::fmadd(V::set1(-2.5f), d[2], V::mul(V::set1(0.5f), d[4])));
    r[4] = V::add(odd_half, even_half);
    r[5] = V::sub(odd_half, even_half);
    r[6] = V::fmadd(V::set1(5.25f), V::sub(d[2], d[4]), V::sub(d[6], d[0]));
  } else if constexpr (kP == 4) {
    r[0] = V::sub(d[0], d[2]);
    r[1] = V::add(d[1], d[2]);
    r[2] = V::sub(d[2], d[1]);
    r[3] = V::sub(d[1], d[3]);
  } else {
    const auto c4 = V::set1(4.0f), c2 = V::set1(2.0f);
    // Shared terms: rows 1 and 2 differ only in the sign of (d3 - 4 d1),
    // rows 3 and 4 in that of 2 (d3 - d1).
    const auto d4_minus_4d2 = V::sub(d[4], V::mul(c4, d[2]));
    const auto d3_minus_4d1 = V::sub(d[3], V::mul(c4, d[1]));
    const auto d4_minus_d2 = V::sub(d[4], d[2]);
    const auto d3_minus_d1 = V::sub(d[3], d[1]);
    r[0] = V::add(V::fmadd(c4, d[0], V::mul(V::set1(-5.0f), d[2])), d[4]);
    r[1] = V::add(d4_minus_4d2, d3_minus_4d1);
    r[2] = V::sub(d4_minus_4d2, d3_minus_4d1);
    r[3] = V::fmadd(c2, d3_minus_d1, d4_minus_d2);
    r[4] = V::sub(d4_minus_d2, V::mul(c2, d3_minus_d1));
    r[5] = V::add(V::fmadd(c4, d[1], V::mul(V::set1(-5.0f), d[3])), d[5]);
  }
}

// o = A^T m for one patch-vector of kP points, kT outputs: A^T[i][j] =
// p_j^i, and the point at infinity counts in the last output only.
template <class V, int kT, int kP>
inline void output_1d(const typename V::T* m, typename V::T* o) {
  if constexpr (kP == 7) {
    // Points in input_1d's order: 1, -1, 2, -2, 1/2, -1/2, infinity.
    const auto s1 = V::add(m[0], m[1]), d1 = V::sub(m[0], m[1]);
    const auto s2 = V::add(m[2], m[3]), d2 = V::sub(m[2], m[3]);
    const auto s_half = V::add(m[4], m[5]), d_half = V::sub(m[4], m[5]);
    o[0] = V::add(V::add(s1, s_half), s2);
    o[1] = V::fmadd(V::set1(2.0f), d2, V::fmadd(V::set1(0.5f), d_half, d1));
    o[2] = V::fmadd(V::set1(4.0f), s2, V::fmadd(V::set1(0.25f), s_half, s1));
    if constexpr (kT == 4) {
      o[3] = V::add(V::fmadd(V::set1(8.0f), d2, V::fmadd(V::set1(0.125f), d_half, d1)), m[6]);
    } else {
      o[3] = V::fmadd(V::set1(8.0f), d2, V::fmadd(V::set1(0.125f), d_half, d1));
      o[4] = V::add(V::fmadd(V::set1(16.0f), s2, V::fmadd(V::set1(0.0625f), s_half, s1)), m[6]);
    }
  } else if constexpr (kP == 4) {
    o[0] = V::add(V::add(m[0], m[1]), m[2]);
    o[1] = V::sub(V::sub(m[1], m[2]), m[3]);
  } else {
    const auto s12 = V::add(m[1], m[2]), d12 = V::sub(m[1], m[2]);
    const auto s34 = V::add(m[3], m[4]), d34 = V::sub(m[3], m[4]);
    o[0] = V::add(V::add(m[0], s12), s34);
    o[1] = V::fmadd(V::set1(2.0f), d34, d12);
    o[2] = V::fmadd(V::set1(4.0f), s34, s12);
    o[3] = V::add(V::fmadd(V::set1(8.0f), d34, d12), m[5]);
  }
}

// f.template operator()<kT, kP>() for the tile side `tile` and kernel side
// `kernel`, kP = tile + kernel - 1: F(2x2, 3x3), F(4x4, 3x3), F(5x5, 3x3)
// and F(4x4, 4x4) (WinogradConv only makes those; anything else runs
// F(4x4, 3x3)). The one place a new variant is added.
template <class F>
void with_variant(int tile, int kernel, F&& f) {
  if (kernel == 4 && tile == 4) {
    f.template operator()<4, 7>();
  } else if (tile == 2) {
    f.template operator()<2, 4>();
  } else if (tile == 5) {
    f.template operator()<5, 7>();
  } else {
    f.template operator()<4, 6>();
  }
}

// kT outputs per tile side, from patches of kP inputs.
template <class V, int kT, int kP>
void input_tiles(const WinogradInputArgs& a) {
  using T = typename V::T;
  constexpr int L = V::kLanes;
  const int64_t pw = a.plane_width;
  for (int64_t b = a.block_begin; b < a.block_end; ++b) {
    float* plane = a.planes + b * a.plane_height * pw * L;
    if (a.x_blocked) {
      simd::interleave_blocked_channels<V>(a.x, a.H, a.W, b * L, a.first_row - a.pad_top, a.plane_height, a.pad_left,
                                           a.plane_width, plane);
    } else {
      simd::interleave_channels<V>(a.x, a.C, a.H, a.W, b * L, a.first_row - a.pad_top, a.plane_height, a.pad_left,
                                   a.plane_width,
                                   plane);
    }
    for (int64_t t = 0; t < a.tiles; ++t) {
      const float* patch = plane + ((t / a.tiles_x) * kT * pw + (t % a.tiles_x) * kT) * L;
      T cols[kP][kP];  // B^T d, column j in cols[j]
      for (int j = 0; j < kP; ++j) {
        T d[kP];
        for (int i = 0; i < kP; ++i) d[i] = V::load(patch + (i * pw + j) * L);
        input_1d<V, kP>(d, cols[j]);
      }
      float* dst = a.v + t * a.v_ld + b * L;
      for (int i = 0; i < kP; ++i) {
        T row[kP];
        for (int j = 0; j < kP; ++j) row[j] = cols[j][i];
        T r[kP];
        input_1d<V, kP>(row, r);  // (B^T d) B, row i
        for (int j = 0; j < kP; ++j) V::store(dst + (i * kP + j) * a.point_stride, r[j]);
      }
    }
  }
}

template <class V>
void input_transform(const WinogradInputArgs& a) {
  with_variant(a.tile, a.kernel, [&]<int kT, int kP>() { input_tiles<V, kT, kP>(a); });
}

template <class V, int kT, int kP>
void output_tiles(const WinogradOutputArgs& a) {
  using T = typename V::T;
  constexpr int L = V::kLanes;
  const int64_t sw = a.tiles_x * kT;                   // staging row length, in positions
  const int64_t sh = (a.tiles / a.tiles_x) * kT;
  const int64_t plane = a.OH * a.OW;
  const int64_t rows = std::min(sh, a.OH - a.first_row);  // Y rows first_row, ... of these tiles
  for (int64_t b = a.block_begin; b < a.block_end; ++b) {
    const int64_t m0 = b * L;
    float* staging = a.staging + b * sh * sw * L;
    float bias_lanes[L];  // zeros past M: the loads below never leave the array
    for (int k = 0; k < L; ++k) bias_lanes[k] = a.bias != nullptr && m0 + k < a.M ? a.bias[m0 + k] : 0.0f;
    const T bias = V::load(bias_lanes);
    const T lo = V::set1(a.lo), hi = V::set1(a.hi);
    for (int64_t t = 0; t < a.tiles; ++t) {
      // Lanes past M read the padding of P's rows (prod_ld >= M rounded up
      // to 16); they are never written out.
      const float* src = a.prod + t * a.prod_ld + m0;
      T rows[kP][kT];  // A^T P, column j of the patch in rows[j]
      for (int j = 0; j < kP; ++j) {
        T col[kP];
        for (int i = 0; i < kP; ++i) col[i] = V::load(src + (i * kP + j) * a.point_stride);
        output_1d<V, kT, kP>(col, rows[j]);
      }
      float* dst = staging + ((t / a.tiles_x) * kT * sw + (t % a.tiles_x) * kT) * L;
      for (int i = 0; i < kT; ++i) {
        T row[kP];
        for (int j = 0; j < kP; ++j) row[j] = rows[j][i];
        T o[kT];
        output_1d<V, kT, kP>(row, o);
        for (int j = 0; j < kT; ++j) {
          T val = V::add(o[j], bias);
          if (a.clamp) val = V::min(V::max(val, lo), hi);
          V::store(dst + (i * sw + j) * L, val);
        }
      }
    }
    if (a.y_blocked) {
      // Staging [oy][ox][lane] to rows of the 16-channel block holding m0.
      float* block = a.y + m0 / 16 * plane * 16 + m0 % 16;
      for (int64_t oy = 0; oy < rows; ++oy) {
        const float* src = staging + oy * sw * L;
        float* dst = block + (a.first_row + oy) * a.OW * 16;
        for (int64_t ox = 0; ox < a.OW; ++ox) V::store(dst + ox * 16, V::load(src + ox * L));
      }
      continue;
    }
    // Staging [oy][ox][lane] back to y[m][oy][ox].
    const bool full = m0 + L <= a.M;
    for (int64_t oy = 0; oy < rows; ++oy) {
      const float* src = staging + oy * sw * L;
      float* dst = a.y + m0 * plane + (a.first_row + oy) * a.OW;
      int64_t ox = 0;
      if (full)
        for (; ox + L <= a.OW; ox += L) V::transpose(src + ox * L, L, dst + ox, plane);
      for (; ox < a.OW; ++ox)
        for (int k = 0; k < L && m0 + k < a.M; ++k) dst[k * plane + ox] = src[ox * L + k];
    }
  }
}

template <class V>
void output_transform(const WinogradOutputArgs& a) {
  with_variant(a.tile, a.kernel, [&]<int kT, int kP>() { output_tiles<V, kT, kP>(a); });
}
