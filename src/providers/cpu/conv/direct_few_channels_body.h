// The one body of the few-channel direct convolution
// (direct_few_channels.h). Each ISA file includes it inside a namespace of
// its own after naming `Vec`, its vector policy (simd/vec_portable.h
// describes the interface). Included at namespace scope; needs <algorithm>,
// <cstdint>.

// Output columns [ow0, ow0 + NV * L) of channels [co0, co0 + kDirectCoBlock)
// in row a.oh: NV * kDirectCoBlock accumulators, every tap one broadcast
// per channel and one load per column vector. `taps` lists the row's taps
// that fall inside the input: where their input starts in the phase rows
// and which of the packed weights they take.
template <class V, int NV>
void direct_chunk(const DirectRowArgs& a, const int64_t* src_at, const int64_t* weight_at, int64_t taps, int64_t cb,
                  int64_t ow0) {
  using T = typename V::T;
  constexpr int L = V::kLanes;
  constexpr int CB = static_cast<int>(kDirectCoBlock);
  const DirectConvShape& s = a.s;
  T acc[CB][NV];
  for (int c = 0; c < CB; ++c)
    for (int v = 0; v < NV; ++v) acc[c][v] = V::set1(0.0f);
  const float* w = a.w + cb * s.C * s.kh * s.kw * CB;
  const float* x = a.phases + ow0;
  for (int64_t t = 0; t < taps; ++t) {
    const float* src = x + src_at[t];
    const float* wt = w + weight_at[t];
    T wc[CB];
    for (int c = 0; c < CB; ++c) wc[c] = V::set1(wt[c]);
    for (int v = 0; v < NV; ++v) {
      const T xv = V::load(src + v * L);
      for (int c = 0; c < CB; ++c) acc[c][v] = V::fmadd(wc[c], xv, acc[c][v]);
    }
  }
  const T lo = V::set1(a.lo), hi = V::set1(a.hi);
  const int64_t plane = s.OH * s.OW;
  for (int c = 0; c < CB; ++c) {
    const int64_t m = cb * CB + c;
    if (m >= s.M) break;
    const T bias = V::set1(a.bias != nullptr ? a.bias[m] : 0.0f);
    float* out = a.y + m * plane + a.oh * s.OW + ow0;
    for (int v = 0; v < NV; ++v) {
      const T r = V::min(hi, V::max(lo, V::add(acc[c][v], bias)));  // the sum last: a NaN comes through
      const int64_t left = s.OW - ow0 - v * L;
      if (left >= L) {
        V::store(out + v * L, r);
      } else {
        V::store_n(out + v * L, r, static_cast<int>(left));
      }
    }
  }
}

// Vectors per chunk: 6 x 4 accumulators fill AVX-512's 32 registers with
// the 4 broadcasts and one input; AVX2's 16 hold 2 x 4.
template <class V>
constexpr int max_chunk_vectors() {
  return V::kLanes >= 16 ? 6 : (V::kLanes >= 8 ? 2 : 4);
}

template <class V>
void direct_row(const DirectRowArgs& a) {
  constexpr int L = V::kLanes;
  constexpr int kMaxNv = max_chunk_vectors<V>();
  const DirectConvShape& s = a.s;
  // The row's taps inside the input, in one flat list (rows above or below
  // the input add nothing and are left out).
  int64_t src_at[kDirectMaxTaps], weight_at[kDirectMaxTaps];
  int64_t taps = 0;
  for (int64_t ci = 0; ci < s.C; ++ci)
    for (int64_t kh = 0; kh < s.kh; ++kh) {
      const int64_t ih = a.oh * s.stride_h + kh * s.dilation_h - s.pad_top;
      if (ih < 0 || ih >= s.H) continue;
      for (int64_t kw = 0; kw < s.kw; ++kw, ++taps) {
        src_at[taps] = (ci * s.H + ih) * s.stride_w * a.row_len + a.tap_start[kw];
        weight_at[taps] = ((ci * s.kh + kh) * s.kw + kw) * kDirectCoBlock;
      }
    }
  const int64_t blocks = (s.M + kDirectCoBlock - 1) / kDirectCoBlock;
  const int64_t vectors = (s.OW + L - 1) / L;
  // Chunks of about equal width: 7 vectors go 4 + 3, not 6 + 1, whose lone
  // vector would wait on FMA latency with only 4 accumulators.
  const int64_t chunks = (vectors + kMaxNv - 1) / kMaxNv;
  const int64_t per_chunk = (vectors + chunks - 1) / chunks;
  for (int64_t cb = 0; cb < blocks; ++cb) {
    for (int64_t v0 = 0; v0 < vectors; v0 += per_chunk) {
      const int64_t ow0 = v0 * L;
      switch (std::min(per_chunk, vectors - v0)) {
        case 1: direct_chunk<V, 1>(a, src_at, weight_at, taps, cb, ow0); break;
        case 2: direct_chunk<V, std::min(2, kMaxNv)>(a, src_at, weight_at, taps, cb, ow0); break;
        case 3: direct_chunk<V, std::min(3, kMaxNv)>(a, src_at, weight_at, taps, cb, ow0); break;
        case 4: direct_chunk<V, std::min(4, kMaxNv)>(a, src_at, weight_at, taps, cb, ow0); break;
        case 5: direct_chunk<V, std::min(5, kMaxNv)>(a, src_at, weight_at, taps, cb, ow0); break;
        default: direct_chunk<V, kMaxNv>(a, src_at, weight_at, taps, cb, ow0); break;
      }
    }
  }
}
