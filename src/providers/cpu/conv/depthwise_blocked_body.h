// The one body of the channel-blocked depthwise convolution
// (depthwise_blocked.h). Each ISA file includes it inside a namespace of its
// own after naming `Vec`, its vector policy (simd/vec_portable.h describes
// the interface). Included at namespace scope; needs <algorithm>, <cstdint>,
// <cstring>.

// Output rows [oh0, oh1) of the block into staging [position][lane], from
// rows of `width` positions, kStep floats each: row_of(oh, i) is the row
// that tap row i of output row oh reads (a zero row where that lies
// outside x), and output column ow's tap j reads its column
// ow * sw - pad_left + j * dw. A plane holds x's padding (pad_left 0,
// every tap inside); read in place, a blocked x does not, and the output
// columns whose taps leave its rows go one at a time with each tap
// checked. K, S > 0 fix a square kernel and its stride at compile time
// (dilation 1), which lets the compiler keep the weights in registers and
// share the loads that neighbouring outputs have in common; 0 reads them
// from the shape. kStep, the floats per position, is fixed too, so that
// the loads' offsets are constants.
template <class V, int K, int S, int kStep, class RowOf>
void convolve_band(const DepthwiseBandArgs& a, RowOf row_of, int64_t width, int64_t pad_left) {
  using T = typename V::T;
  constexpr int L = V::kLanes;
  // Output positions per step: enough independent FMA chains, while the
  // accumulators, weights and inputs still fit the registers.
  constexpr int U = L >= 16 ? 8 : 4;
  const DepthwiseShape& s = a.s;
  const int64_t kh = K > 0 ? K : s.kh, kw = K > 0 ? K : s.kw;
  // row_of applies the row stride and dilation.
  const int64_t sw = S > 0 ? S : s.stride_w, dw = K > 0 ? 1 : s.dilation_w;
  float bias_lanes[L];  // zeros past C and without a bias
  for (int c = 0; c < L; ++c) bias_lanes[c] = a.bias != nullptr && a.c0 + c < s.C ? a.bias[a.c0 + c] : 0.0f;
  const T bias = V::load(bias_lanes);
  const T lo = V::set1(a.lo), hi = V::set1(a.hi);
  const int64_t OW = s.OW;
  // A fixed-size kernel's weights stay in registers (the stores to staging
  // could alias a.w, so the compiler would not hoist the loads itself).
  constexpr int kFixedTaps = K > 0 ? K * K : 1;
  T wreg[kFixedTaps];
  if constexpr (K > 0)
    for (int t = 0; t < kFixedTaps; ++t) wreg[t] = V::load(a.w + t * L);
  auto weight = [&](int64_t t) { return K > 0 ? wreg[t] : V::load(a.w + t * L); };
  // Output columns [ow_lo, ow_hi) have every tap inside the rows.
  const int64_t span = (kw - 1) * dw + 1;
  const int64_t ow_lo = std::min(OW, (pad_left + sw - 1) / sw);
  const int64_t ow_hi =
      width - span + pad_left < 0 ? ow_lo : std::max(ow_lo, std::min(OW, (width - span + pad_left) / sw + 1));
  for (int64_t oh = a.oh0; oh < a.oh1; ++oh) {
    float* out = a.staging + (oh - a.oh0) * OW * L;
    // A fixed kernel's tap rows, looked up once per output row.
    const float* fixed_rows[K > 0 ? K : 1];
    if constexpr (K > 0)
      for (int i = 0; i < K; ++i) fixed_rows[i] = row_of(oh, i);
    auto tap_row = [&](int64_t i) {
      if constexpr (K > 0) {
        return fixed_rows[i];
      } else {
        return row_of(oh, i);
      }
    };
    auto one = [&](int64_t ow) {
      T acc = bias;
      for (int64_t i = 0; i < kh; ++i) {
        const float* r = tap_row(i);
        for (int64_t j = 0; j < kw; ++j) {
          const int64_t iw = ow * sw - pad_left + j * dw;
          if (iw >= 0 && iw < width) acc = V::fmadd(V::load(r + iw * kStep), weight(i * kw + j), acc);
        }
      }
      V::store(out + ow * L, V::min(hi, V::max(lo, acc)));  // acc last: a NaN comes through
    };
    int64_t ow = 0;
    for (; ow < ow_lo; ++ow) one(ow);
    for (; ow + U <= ow_hi; ow += U) {
      T acc[U];
      for (int u = 0; u < U; ++u) acc[u] = bias;
      for (int64_t i = 0; i < kh; ++i) {
        const float* r = tap_row(i) + (ow * sw - pad_left) * kStep;
        for (int64_t j = 0; j < kw; ++j) {
          const T wv = weight(i * kw + j);
          for (int u = 0; u < U; ++u) acc[u] = V::fmadd(V::load(r + (u * sw + j * dw) * kStep), wv, acc[u]);
        }
      }
      for (int u = 0; u < U; ++u) V::store(out + (ow + u) * L, V::min(hi, V::max(lo, acc[u])));
    }
    for (; ow < OW; ++ow) one(ow);
  }
}

// convolve_band with the kernel and strides fixed where they are common.
template <class V, int kStep, class RowOf>
void convolve_band_any(const DepthwiseBandArgs& a, RowOf row_of, int64_t width, int64_t pad_left) {
  const DepthwiseShape& s = a.s;
  const bool fixed = s.dilation_h == 1 && s.dilation_w == 1 && s.kh == s.kw && s.stride_h == s.stride_w;
  if (fixed && s.kh == 3 && s.stride_h == 1) {
    convolve_band<V, 3, 1, kStep>(a, row_of, width, pad_left);
  } else if (fixed && s.kh == 3 && s.stride_h == 2) {
    convolve_band<V, 3, 2, kStep>(a, row_of, width, pad_left);
  } else if (fixed && s.kh == 5 && s.stride_h == 1) {
    convolve_band<V, 5, 1, kStep>(a, row_of, width, pad_left);
  } else if (fixed && s.kh == 5 && s.stride_h == 2) {
    convolve_band<V, 5, 2, kStep>(a, row_of, width, pad_left);
  } else {
    convolve_band<V, 0, 0, kStep>(a, row_of, width, pad_left);
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

template <class V>
void depthwise_band(const DepthwiseBandArgs& args) {
  constexpr int L = V::kLanes;
  const DepthwiseShape& s = args.s;
  // With 16 lanes the band's outputs, [position][lane], are exactly its
  // part of one block of a channel-blocked y: computed there, in place.
  constexpr bool kLanesAreABlock = L == 16;
  DepthwiseBandArgs a = args;
  if (s.y_blocked16 && kLanesAreABlock) a.staging = a.y + a.c0 * s.OH * s.OW + a.oh0 * s.OW * 16;
  const int64_t pr0 = a.oh0 * s.stride_h;
  const int64_t rows = (a.oh1 - a.oh0 - 1) * s.stride_h + (s.kh - 1) * s.dilation_h + 1;
  const int64_t pw = (s.OW - 1) * s.stride_w + (s.kw - 1) * s.dilation_w + 1;
  if (s.x_blocked16 && L >= 8 && rows * pw * L >= (s.W + 1) * 16) {
    // A blocked x is read in place, 16 floats a position. Copying its rows
    // into the plane first, a load and a store per input vector, was 40 %
    // of MobileNetV2's depthwise time. The plane holds the zero row.
    std::fill(a.plane, a.plane + (s.W + 1) * 16, 0.0f);
    const int64_t lane0 = a.c0 % 16;  // the block's lanes within x's block of 16
    const float* xb = a.x + a.c0 / 16 * s.H * s.W * 16 + lane0;
    const float* zeros = a.plane + lane0;
    auto row_of = [&](int64_t oh, int64_t i) {
      const int64_t ih = oh * s.stride_h - s.pad_top + i * s.dilation_h;
      return ih >= 0 && ih < s.H ? xb + ih * s.W * 16 : zeros;
    };
    convolve_band_any<V, 16>(a, row_of, s.W, s.pad_left);
  } else {
    // x's rows (transposed, or copied when blocked) into a zero-bordered
    // interleaved plane, with x's padding.
    if (s.x_blocked16) {
      simd::interleave_blocked_channels<V>(a.x, s.H, s.W, a.c0, pr0 - s.pad_top, rows, s.pad_left, pw, a.plane);
    } else {
      simd::interleave_channels<V>(a.x, s.C, s.H, s.W, a.c0, pr0 - s.pad_top, rows, s.pad_left, pw, a.plane);
    }
    auto row_of = [&](int64_t oh, int64_t i) {
      return a.plane + ((oh - a.oh0) * s.stride_h + i * s.dilation_h) * pw * L;
    };
    convolve_band_any<V, L>(a, row_of, pw, 0);
  }
  if (s.y_blocked16) {
    if (!kLanesAreABlock) store_blocked_band<V>(a);
  } else {
    deinterleave_band<V>(a);
  }
}
