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
  } else if constexpr (kP == 3) {
    // Points 0, 1, infinity (F(2, 2)).
    r[0] = V::sub(d[0], d[1]);
    r[1] = d[1];
    r[2] = V::sub(d[2], d[1]);
  } else if constexpr (kP == 5) {
    // Points 0, 1, -1, 2, infinity (F(4, 2)), rows scaled to integers.
    const auto c2 = V::set1(2.0f);
    r[0] = V::sub(V::fmadd(c2, V::sub(d[0], d[2]), d[3]), d[1]);
    r[1] = V::sub(V::fmadd(c2, d[1], d[2]), d[3]);
    r[2] = V::sub(V::mul(V::set1(3.0f), d[2]), V::fmadd(c2, d[1], d[3]));
    r[3] = V::sub(d[3], d[1]);
    r[4] = V::sub(V::fmadd(c2, V::sub(d[1], d[3]), d[4]), d[2]);
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
  } else if constexpr (kP == 3) {
    o[0] = V::add(m[0], m[1]);
    o[1] = V::add(m[1], m[2]);
  } else if constexpr (kP == 5) {
    const auto s12 = V::add(m[1], m[2]), d12 = V::sub(m[1], m[2]);
    o[0] = V::add(V::add(m[0], s12), m[3]);
    o[1] = V::fmadd(V::set1(2.0f), m[3], d12);
    o[2] = V::fmadd(V::set1(4.0f), m[3], s12);
    o[3] = V::add(V::fmadd(V::set1(8.0f), m[3], d12), m[4]);
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
// and F(4x4, 4x4), and the F(2, 2) and F(4, 2) inside a stride-2 3x3
// (winograd.h; WinogradConv only makes those; anything else runs
// F(4x4, 3x3)). The one place a new variant is added.
template <class F>
void with_variant(int tile, int kernel, F&& f) {
  if (kernel == 2) {
    if (tile == 2) {
      f.template operator()<2, 3>();
    } else {
      f.template operator()<4, 5>();
    }
  } else if (kernel == 4 && tile == 4) {
    f.template operator()<4, 7>();
  } else if (tile == 2) {
    f.template operator()<2, 4>();
  } else if (tile == 5) {
    f.template operator()<5, 7>();
  } else {
    f.template operator()<4, 6>();
  }
}

// per_tile(patch, t, block_v) for every tile t of every channel block:
// patch is the tile's first input in the block's zero-bordered interleaved
// plane ([row][column][lane], plane_width columns), block_v is V at the
// block's first channel (slot 0, tile 0). Tiles step kT * stride inputs.
template <class V, class PerTile>
void input_blocks(const WinogradInputArgs& a, int kT, PerTile&& per_tile) {
  constexpr int L = V::kLanes;
  const int64_t pw = a.plane_width, step = static_cast<int64_t>(kT) * a.stride;
  const int64_t row0 = a.first_row * a.stride - a.pad_top;  // the plane's first row in X
  for (int64_t b = a.block_begin; b < a.block_end; ++b) {
    float* plane = a.planes + b * a.plane_height * pw * L;
    if (a.x_blocked) {
      simd::interleave_blocked_channels<V>(a.x, a.H, a.W, b * L, row0, a.plane_height, a.pad_left, a.plane_width,
                                           plane);
    } else {
      simd::interleave_channels<V>(a.x, a.C, a.H, a.W, b * L, row0, a.plane_height, a.pad_left, a.plane_width, plane);
    }
    for (int64_t t = 0; t < a.tiles; ++t)
      per_tile(plane + ((t / a.tiles_x) * step * pw + (t % a.tiles_x) * step) * L, t, a.v + b * L);
  }
}

// kT outputs per tile side, from patches of kP inputs.
template <class V, int kT, int kP>
void input_tiles(const WinogradInputArgs& a) {
  using T = typename V::T;
  constexpr int L = V::kLanes;
  const int64_t pw = a.plane_width;
  input_blocks<V>(a, kT, [&](const float* patch, int64_t t, float* block_v) {
    float* dst = block_v + t * a.v_ld;
    T cols[kP][kP];  // B^T d, column j in cols[j]
    for (int j = 0; j < kP; ++j) {
      T d[kP];
      for (int i = 0; i < kP; ++i) d[i] = V::load(patch + (i * pw + j) * L);
      input_1d<V, kP>(d, cols[j]);
    }
    for (int i = 0; i < kP; ++i) {
      T row[kP];
      for (int j = 0; j < kP; ++j) row[j] = cols[j][i];
      T r[kP];
      input_1d<V, kP>(row, r);  // (B^T d) B, row i
      for (int j = 0; j < kP; ++j) V::store(dst + (i * kP + j) * a.point_stride, r[j]);
    }
  });
}

// The phase-split stride-2 3x3 (winograd.h): a tile of kT x kT outputs
// reads 2 kT + 1 inputs a side. Its even rows and columns (kN = kT + 1 of
// them) meet kernel rows and columns 0 and 2, the odd ones row or column 1.
// Where a side has two taps it goes through F(kT, 2)'s B^T, where it has
// one it stays as it is (F(kT, 1) is the identity). The slots, each the
// rows of one GEMM (winograd_transforms.h): EE (i, j) at (i kN + j) S,
// EO (i, q) at EO + i kT S, row t kT + q, OE (p, j) at OE + j kT S, row
// t kT + p, and OO (p, q) at OO, row (t kT + p) kT + q, where S is
// point_stride and EO, OE, OO are winograd_split_groups' starts times S.
template <int kT>
struct SplitSlots {
  static constexpr int kN = kT + 1;
  int64_t S, ld, eo, oe, oo;
  SplitSlots(int64_t point_stride, int64_t row_ld) : S(point_stride), ld(row_ld) {
    const WinogradSplitGroups g = winograd_split_groups(kT);
    eo = g.eo * S;
    oe = g.oe * S;
    oo = g.oo * S;
  }
  int64_t ee_at(int i, int j) const { return (i * kN + j) * S; }
  int64_t eo_at(int64_t t, int i, int q) const { return eo + i * kT * S + (t * kT + q) * ld; }
  int64_t oe_at(int64_t t, int p, int j) const { return oe + j * kT * S + (t * kT + p) * ld; }
  int64_t oo_at(int64_t t, int p, int q) const { return oo + ((t * kT + p) * kT + q) * ld; }
};

template <class V, int kT>
void input_tiles_split(const WinogradInputArgs& a) {
  using T = typename V::T;
  constexpr int L = V::kLanes, kN = kT + 1;
  const int64_t pw = a.plane_width;
  const SplitSlots<kT> at(a.point_stride, a.v_ld);
  input_blocks<V>(a, kT, [&](const float* patch, int64_t t, float* dst) {
    auto in = [&](int r, int c) { return V::load(patch + (r * pw + c) * L); };
    T cols[kN][kN];  // EE: B^T d down the even columns, then along the rows
    for (int j = 0; j < kN; ++j) {
      T d[kN];
      for (int i = 0; i < kN; ++i) d[i] = in(2 * i, 2 * j);
      input_1d<V, kN>(d, cols[j]);
    }
    for (int i = 0; i < kN; ++i) {
      T row[kN], r[kN];
      for (int j = 0; j < kN; ++j) row[j] = cols[j][i];
      input_1d<V, kN>(row, r);
      for (int j = 0; j < kN; ++j) V::store(dst + at.ee_at(i, j) + t * a.v_ld, r[j]);
    }
    for (int q = 0; q < kT; ++q) {  // EO: down the even rows of odd column q
      T d[kN], r[kN];
      for (int i = 0; i < kN; ++i) d[i] = in(2 * i, 2 * q + 1);
      input_1d<V, kN>(d, r);
      for (int i = 0; i < kN; ++i) V::store(dst + at.eo_at(t, i, q), r[i]);
    }
    for (int p = 0; p < kT; ++p) {  // OE: along the even columns of odd row p
      T d[kN], r[kN];
      for (int j = 0; j < kN; ++j) d[j] = in(2 * p + 1, 2 * j);
      input_1d<V, kN>(d, r);
      for (int j = 0; j < kN; ++j) V::store(dst + at.oe_at(t, p, j), r[j]);
    }
    for (int p = 0; p < kT; ++p)  // OO: as they are
      for (int q = 0; q < kT; ++q) V::store(dst + at.oo_at(t, p, q), in(2 * p + 1, 2 * q + 1));
  });
}

template <class V>
void input_transform(const WinogradInputArgs& a) {
  if (a.stride == 2) {
    with_variant(a.tile, 2, [&]<int kT, int kP>() { input_tiles_split<V, kT>(a); });
    return;
  }
  with_variant(a.tile, a.kernel, [&]<int kT, int kP>() { input_tiles<V, kT, kP>(a); });
}

// tile_outputs(block_p, t, out) gives tile t's kT x kT outputs before the
// bias, block_p P at the block's first channel (slot 0, tile 0); this adds
// bias and activation and writes them to Y, through the staging plane.
template <class V, int kT, class TileOutputs>
void output_blocks(const WinogradOutputArgs& a, TileOutputs&& tile_outputs) {
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
      T out[kT][kT];
      tile_outputs(a.prod + m0, t, out);
      float* dst = staging + ((t / a.tiles_x) * kT * sw + (t % a.tiles_x) * kT) * L;
      for (int i = 0; i < kT; ++i)
        for (int j = 0; j < kT; ++j) {
          T val = V::add(out[i][j], bias);
          if (a.clamp) val = V::min(hi, V::max(lo, val));  // val last: a NaN comes through
          V::store(dst + (i * sw + j) * L, val);
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

template <class V, int kT, int kP>
void output_tiles(const WinogradOutputArgs& a) {
  using T = typename V::T;
  output_blocks<V, kT>(a, [&](const float* block_p, int64_t t, T(&out)[kT][kT]) {
    const float* src = block_p + t * a.prod_ld;
    T rows[kP][kT];  // A^T P, column j of the patch in rows[j]
    for (int j = 0; j < kP; ++j) {
      T col[kP];
      for (int i = 0; i < kP; ++i) col[i] = V::load(src + (i * kP + j) * a.point_stride);
      output_1d<V, kT, kP>(col, rows[j]);
    }
    for (int i = 0; i < kT; ++i) {
      T row[kP];
      for (int j = 0; j < kP; ++j) row[j] = rows[j][i];
      output_1d<V, kT, kP>(row, out[i]);
    }
  });
}

// The phase-split stride-2 3x3: the four parts' outputs summed, each back
// through A^T where its input went through B^T (SplitSlots).
template <class V, int kT>
void output_tiles_split(const WinogradOutputArgs& a) {
  using T = typename V::T;
  constexpr int kN = kT + 1;
  const SplitSlots<kT> at(a.point_stride, a.prod_ld);
  output_blocks<V, kT>(a, [&](const float* src, int64_t t, T(&out)[kT][kT]) {
    T rows[kN][kT];  // EE
    for (int j = 0; j < kN; ++j) {
      T col[kN];
      for (int i = 0; i < kN; ++i) col[i] = V::load(src + at.ee_at(i, j) + t * a.prod_ld);
      output_1d<V, kT, kN>(col, rows[j]);
    }
    for (int i = 0; i < kT; ++i) {
      T row[kN];
      for (int j = 0; j < kN; ++j) row[j] = rows[j][i];
      output_1d<V, kT, kN>(row, out[i]);
    }
    for (int q = 0; q < kT; ++q) {  // EO: down the rows
      T col[kN], o[kT];
      for (int i = 0; i < kN; ++i) col[i] = V::load(src + at.eo_at(t, i, q));
      output_1d<V, kT, kN>(col, o);
      for (int i = 0; i < kT; ++i) out[i][q] = V::add(out[i][q], o[i]);
    }
    for (int p = 0; p < kT; ++p) {  // OE: along the columns
      T row[kN], o[kT];
      for (int j = 0; j < kN; ++j) row[j] = V::load(src + at.oe_at(t, p, j));
      output_1d<V, kT, kN>(row, o);
      for (int j = 0; j < kT; ++j) out[p][j] = V::add(out[p][j], o[j]);
    }
    for (int p = 0; p < kT; ++p)  // OO
      for (int q = 0; q < kT; ++q) out[p][q] = V::add(out[p][q], V::load(src + at.oo_at(t, p, q)));
  });
}

template <class V>
void output_transform(const WinogradOutputArgs& a) {
  if (a.stride == 2) {
    with_variant(a.tile, 2, [&]<int kT, int kP>() { output_tiles_split<V, kT>(a); });
    return;
  }
  with_variant(a.tile, a.kernel, [&]<int kT, int kP>() { output_tiles<V, kT, kP>(a); });
}
