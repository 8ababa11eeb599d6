// Moving a block of channels from NCHW planes into the interleaved layout
// [row][column][lane] that kernels vectorised across channels read (the
// Winograd input transform, the depthwise convolution). A template on the
// vector policy V (simd/vec_*.h): include it at namespace scope in the
// files compiled for each ISA, which then instantiate it with their own V.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace sy::cpu::simd {

// Channels [c0, c0 + L) of x (C planes of H x W) into `plane`, rows x pw
// positions of L lanes: plane row r holds input row row0 + r (row0 may be
// negative: rows above the input), plane column q input column q - pad_left.
// Zeros outside the input and for the channels past C.
template <class V>
void interleave_channels(const float* x, int64_t C, int64_t H, int64_t W, int64_t c0, int64_t row0, int64_t rows,
                         int64_t pad_left, int64_t pw, float* plane) {
  constexpr int L = V::kLanes;
  const int64_t hw = H * W;
  const int64_t cols = std::clamp<int64_t>(pw - pad_left, 0, W);  // input columns [0, cols) land in the plane
  const int64_t left = std::min(pad_left, pw);                     // plane columns before input column 0
  const int64_t right = std::max<int64_t>(0, pw - (pad_left + W));
  int64_t in_lo = -1, in_hi = -1;  // input rows the plane holds
  for (int64_t r = 0; r < rows; ++r) {
    float* row = plane + r * pw * L;
    const int64_t ih = row0 + r;
    if (ih < 0 || ih >= H) {
      std::memset(row, 0, static_cast<size_t>(pw * L) * sizeof(float));
      continue;
    }
    if (in_lo < 0) in_lo = ih;
    in_hi = ih + 1;
    std::memset(row, 0, static_cast<size_t>(left * L) * sizeof(float));
    std::memset(row + (pw - right) * L, 0, static_cast<size_t>(right * L) * sizeof(float));
  }
  if (in_lo < 0 || cols == 0) return;
  const float* const src = x + c0 * hw;
  auto dst_of = [&](int64_t ih, int64_t iw) { return plane + ((ih - row0) * pw + iw + pad_left) * L; };
  const bool full = c0 + L <= C;
  if (full && cols >= L) {
    // Rows of at least L columns: L x L transposes straight into the row,
    // the last one overlapping the one before when L does not divide cols.
    for (int64_t ih = in_lo; ih < in_hi; ++ih) {
      const float* srow = src + ih * W;
      float* drow = dst_of(ih, 0);
      int64_t iw = 0;
      for (; iw + L <= cols; iw += L) V::transpose(srow + iw, hw, drow + iw * L, L);
      if (iw < cols) V::transpose(srow + cols - L, hw, drow + (cols - L) * L, L);
    }
    return;
  }
  // Narrow rows (a 14x14 or 7x7 map): the rows are one flat run of
  // positions per channel, transposed L positions at a time, each
  // position's vector then sent to its place.
  const int64_t p_end = in_hi * W;
  int64_t p = in_lo * W;
  int64_t ih = in_lo, iw = 0;  // position p as (row, column)
  alignas(64) float tmp[L * L];
  if (full) {
    for (; p + L <= p_end; p += L) {
      V::transpose(src + p, hw, tmp, L);  // tmp[k * L + c]: channel c at position p + k
      for (int k = 0; k < L; ++k) {
        if (iw < cols) V::store(dst_of(ih, iw), V::load(tmp + k * L));
        if (++iw == W) iw = 0, ++ih;
      }
    }
  }
  for (; p < p_end; ++p) {
    if (iw < cols) {
      float* dst = dst_of(ih, iw);
      for (int c = 0; c < L; ++c) dst[c] = c0 + c < C ? src[c * hw + p] : 0.0f;
    }
    if (++iw == W) iw = 0, ++ih;
  }
}

}  // namespace sy::cpu::simd
