// The one body of the channel-blocked depthwise convolution
// (depthwise_blocked.h). Each ISA file includes it inside a namespace of its
// own after naming `Vec`, its vector policy (simd/vec_portable.h describes
// the interface). Included at namespace scope; needs <algorithm>, <cstdint>,
// <cstring>.

// Output rows [oh0, oh1) of the block into staging [position][lane]. KH, KW,
// SH, SW > 0 fix the kernel and strides at compile time (dilation 1), which
// lets the compiler keep the weights in registers and share the loads that
// neighbouring outputs have in common; 0 reads them from the shape.
template <class V, int KH, int KW, int SH, int SW>
void convolve_band(const DepthwiseBandArgs& a, int64_t pw) {
  using T = typename V::T;
  constexpr int L = V::kLanes;
  // Output positions per step: enough independent FMA chains, while the
  // accumulators, weights and inputs still fit the registers.
  constexpr int U = L >= 16 ? 8 : 4;
  const DepthwiseShape& s = a.s;
  const int64_t kh = KH > 0 ? KH : s.kh, kw = KW > 0 ? KW : s.kw;
  const int64_t sh = SH > 0 ? SH : s.stride_h, sw = SW > 0 ? SW : s.stride_w;
  const int64_t dh = KH > 0 ? 1 : s.dilation_h, dw = KW > 0 ? 1 : s.dilation_w;
  float bias_lanes[L];  // zeros past C and without a bias
  for (int c = 0; c < L; ++c) bias_lanes[c] = a.bias != nullptr && a.c0 + c < s.C ? a.bias[a.c0 + c] : 0.0f;
  const T bias = V::load(bias_lanes);
  const T lo = V::set1(a.lo), hi = V::set1(a.hi);
  const int64_t row_step = pw * L;
  const int64_t OW = s.OW;
  // A fixed-size kernel's weights stay in registers (the stores to staging
  // could alias a.w, so the compiler would not hoist the loads itself).
  constexpr int kFixedTaps = KH > 0 ? KH * KW : 1;
  T wreg[kFixedTaps];
  if constexpr (KH > 0)
    for (int t = 0; t < kFixedTaps; ++t) wreg[t] = V::load(a.w + t * L);
  auto weight = [&](int64_t t) { return KH > 0 ? wreg[t] : V::load(a.w + t * L); };
  for (int64_t oh = a.oh0; oh < a.oh1; ++oh) {
    const float* prow = a.plane + (oh - a.oh0) * sh * row_step;
    float* out = a.staging + (oh - a.oh0) * OW * L;
    int64_t ow = 0;
    for (; ow + U <= OW; ow += U) {
      T acc[U];
      for (int u = 0; u < U; ++u) acc[u] = bias;
      for (int64_t i = 0; i < kh; ++i) {
        const float* r = prow + i * dh * row_step + ow * sw * L;
        for (int64_t j = 0; j < kw; ++j) {
          const T wv = weight(i * kw + j);
          for (int u = 0; u < U; ++u) acc[u] = V::fmadd(V::load(r + (u * sw + j * dw) * L), wv, acc[u]);
        }
      }
      for (int u = 0; u < U; ++u) V::store(out + (ow + u) * L, V::min(V::max(acc[u], lo), hi));
    }
    for (; ow < OW; ++ow) {
      T acc = bias;
      for (int64_t i = 0; i < kh; ++i) {
        const float* r = prow + i * dh * row_step + ow * sw * L;
        for (int64_t j = 0; j < kw; ++j) acc = V::fmadd(V::load(r + j * dw * L), weight(i * kw + j), acc);
      }
      V::store(out + ow * L, V::min(V::max(acc, lo), hi));
    }
  }
}

// convolve_band for a channel-blocked x, a KxK kernel at stride S (dilation
// 1), read straight from x's rows (16 floats per position) instead of from
// a copied plane: the copy, a load and a store per input vector, was 40 %
// of MobileNetV2's depthwise time, its input rows fresh from memory either
// way. A tap row outside x reads `zeros` (at least W * 16 + 16 zero
// floats); the output columns whose taps leave x at either side go one at
// a time with their taps checked.
template <class V, int K, int S>
void convolve_band_blocked(const DepthwiseBandArgs& a, const float* zeros) {
  using T = typename V::T;
  constexpr int L = V::kLanes;
  constexpr int U = L >= 16 ? 8 : 4;
  const DepthwiseShape& s = a.s;
  const int64_t H = s.H, W = s.W, OW = s.OW;
  const int64_t lane0 = a.c0 % 16;  // the block's lanes within x's block of 16
  const float* xb = a.x + a.c0 / 16 * H * W * 16 + lane0;
  zeros += lane0;
  float bias_lanes[L];  // zeros past C and without a bias
  for (int c = 0; c < L; ++c) bias_lanes[c] = a.bias != nullptr && a.c0 + c < s.C ? a.bias[a.c0 + c] : 0.0f;
  const T bias = V::load(bias_lanes);
  const T lo = V::set1(a.lo), hi = V::set1(a.hi);
  T wreg[K * K];
  for (int t = 0; t < K * K; ++t) wreg[t] = V::load(a.w + t * L);
  // Output columns [ow_lo, ow_hi) have every tap inside x.
  const int64_t pl = s.pad_left;
  const int64_t ow_lo = std::min(OW, (pl + S - 1) / S);
  const int64_t ow_hi = W - K + pl < 0 ? ow_lo : std::max(ow_lo, std::min(OW, (W - K + pl) / S + 1));
  for (int64_t oh = a.oh0; oh < a.oh1; ++oh) {
    const float* rows[K];
    for (int i = 0; i < K; ++i) {
      const int64_t ih = oh * S - s.pad_top + i;
      rows[i] = ih >= 0 && ih < H ? xb + ih * W * 16 : zeros;
    }
    float* out = a.staging + (oh - a.oh0) * OW * L;
    auto one = [&](int64_t ow) {
      T acc = bias;
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < K; ++j) {
          const int64_t iw = ow * S - pl + j;
          if (iw >= 0 && iw < W) acc = V::fmadd(V::load(rows[i] + iw * 16), wreg[i * K + j], acc);
        }
      V::store(out + ow * L, V::min(V::max(acc, lo), hi));
    };
    int64_t ow = 0;
    for (; ow < ow_lo; ++ow) one(ow);
    for (; ow + U <= ow_hi; ow += U) {
      T acc[U];
      for (int u = 0; u < U; ++u) acc[u] = bias;
      for (int i = 0; i < K; ++i) {
        const float* r = rows[i] + (ow * S - pl) * 16;
        for (int j = 0; j < K; ++j)
          for (int u = 0; u < U; ++u) acc[u] = V::fmadd(V::load(r + (u * S + j) * 16), wreg[i * K + j], acc[u]);
      }
      for (int u = 0; u < U; ++u) V::store(out + (ow + u) * L, V::min(V::max(acc[u], lo), hi));
    }
    for (; ow < OW; ++ow) one(ow);
  }
}

// Staging [position][lane] back to channels [c0, c0 + L) of y, positions
// [oh0 * OW, oh1 * OW) of each plane (one flat run, like the input).
template <class V>
void deinterleave_band(const DepthwiseBandArgs& a) {
  constexpr int L = V::kLanes;
  const DepthwiseShape& s = a.s;
  const int64_t plane = s.OH * s.OW;
  const int64_t p0 = a.oh0 * s.OW, n = (a.oh1 - a.oh0) * s.OW;
  float* dst = a.y + a.c0 * plane + p0;
  int64_t k = 0;
  if (a.c0 + L <= s.C)
    for (; k + L <= n; k += L) V::transpose(a.staging + k * L, L, dst + k, plane);
  for (; k < n; ++k)
    for (int c = 0; c < L && a.c0 + c < s.C; ++c) dst[c * plane + k] = a.staging[k * L + c];
}

// The band's outputs into a channel-blocked y (16 channels per position),
// for variants of fewer lanes (with 16 the band is computed in place).
template <class V>
void store_blocked_band(const DepthwiseBandArgs& a) {
  constexpr int L = V::kLanes;
  const DepthwiseShape& s = a.s;
  const int64_t plane = s.OH * s.OW;
  const int64_t p0 = a.oh0 * s.OW, n = (a.oh1 - a.oh0) * s.OW;
  for (int c = 0; c < L && a.c0 + c < s.C; ++c) {
    const int64_t ch = a.c0 + c;
    float* dst = a.y + ch / 16 * plane * 16 + p0 * 16 + ch % 16;
    for (int64_t k = 0; k < n; ++k) dst[k * 16] = a.staging[k * L + c];
  }
}

// The band through an interleaved plane: x's rows (transposed, or copied
// when blocked) into a zero-bordered plane, then convolve_band.
template <class V>
void convolve_plane(const DepthwiseBandArgs& a, int64_t pr0, int64_t rows, int64_t pw, bool dilated, bool square) {
  const DepthwiseShape& s = a.s;
  if (s.x_blocked16) {
    simd::interleave_blocked_channels<V>(a.x, s.H, s.W, a.c0, pr0 - s.pad_top, rows, s.pad_left, pw, a.plane);
  } else {
    simd::interleave_channels<V>(a.x, s.C, s.H, s.W, a.c0, pr0 - s.pad_top, rows, s.pad_left, pw, a.plane);
  }
  if (!dilated && square && s.kh == 3 && s.stride_h == 1) {
    convolve_band<V, 3, 3, 1, 1>(a, pw);
  } else if (!dilated && square && s.kh == 3 && s.stride_h == 2) {
    convolve_band<V, 3, 3, 2, 2>(a, pw);
  } else if (!dilated && square && s.kh == 5 && s.stride_h == 1) {
    convolve_band<V, 5, 5, 1, 1>(a, pw);
  } else if (!dilated && square && s.kh == 5 && s.stride_h == 2) {
    convolve_band<V, 5, 5, 2, 2>(a, pw);
  } else {
    convolve_band<V, 0, 0, 0, 0>(a, pw);
  }
}

template <class V>
void depthwise_band(const DepthwiseBandArgs& args) {
  const DepthwiseShape& s = args.s;
  // With 16 lanes the band's outputs, [position][lane], are exactly its
  // part of one block of a channel-blocked y: computed there, in place.
  constexpr bool kLanesAreABlock = V::kLanes == 16;
  DepthwiseBandArgs a = args;
  if (s.y_blocked16 && kLanesAreABlock) a.staging = a.y + a.c0 * s.OH * s.OW + a.oh0 * s.OW * 16;
  const int64_t pr0 = a.oh0 * s.stride_h;
  const int64_t rows = (a.oh1 - a.oh0 - 1) * s.stride_h + (s.kh - 1) * s.dilation_h + 1;
  const int64_t pw = (s.OW - 1) * s.stride_w + (s.kw - 1) * s.dilation_w + 1;
  const bool dilated = s.dilation_h != 1 || s.dilation_w != 1;
  const bool square = s.kh == s.kw && s.stride_h == s.stride_w;
  // A blocked x under a 3x3 kernel is read in place; the plane, at least
  // 3 rows of pw >= W positions of L >= 8 lanes, holds the zero row.
  if (s.x_blocked16 && V::kLanes >= 8 && !dilated && square && s.kh == 3 && (s.stride_h == 1 || s.stride_h == 2) &&
      rows * pw * V::kLanes >= (s.W + 1) * 16) {
    std::fill(a.plane, a.plane + (s.W + 1) * 16, 0.0f);
    if (s.stride_h == 1) {
      convolve_band_blocked<V, 3, 1>(a, a.plane);
    } else {
      convolve_band_blocked<V, 3, 2>(a, a.plane);
    }
  } else {
    convolve_plane<V>(a, pr0, rows, pw, dilated, square);
  }
  if (s.y_blocked16) {
    if (!kLanesAreABlock) store_blocked_band<V>(a);
  } else {
    deinterleave_band<V>(a);
  }
}
