// Moving a block of channels from NCHW planes (or from a channel-blocked
// NCHW16c tensor) into the interleaved layout [row][column][lane] that
// kernels vectorised across channels read (the Winograd input transform,
// the depthwise convolution). A template on the
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
// The plane's frame, shared by both ways of filling it: plane rows outside
// the input are zeroed whole, the others' columns left and right of the
// input too. Sets `cols` (input columns [0, cols) land in the plane, from
// plane column `left`) and the input rows [in_lo, in_hi) the plane holds
// (in_lo < 0: none). A template on V like the rest of this header: each
// ISA's files get a copy of their own, so the linker never hands AVX2 code
// an AVX-512 one.
template <class V>
void clear_plane_borders(int64_t H, int64_t W, int64_t row0, int64_t rows, int64_t pad_left, int64_t pw,
                         float* plane, int64_t* left, int64_t* cols, int64_t* in_lo, int64_t* in_hi) {
  constexpr int L = V::kLanes;
  *cols = std::clamp<int64_t>(pw - pad_left, 0, W);
  *left = std::min(pad_left, pw);
  const int64_t right = std::max<int64_t>(0, pw - (pad_left + W));
  *in_lo = -1;
  *in_hi = -1;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = plane + r * pw * L;
    const int64_t ih = row0 + r;
    if (ih < 0 || ih >= H) {
      std::memset(row, 0, static_cast<size_t>(pw * L) * sizeof(float));
      continue;
    }
    if (*in_lo < 0) *in_lo = ih;
    *in_hi = ih + 1;
    std::memset(row, 0, static_cast<size_t>(*left * L) * sizeof(float));
    std::memset(row + (pw - right) * L, 0, static_cast<size_t>(right * L) * sizeof(float));
  }
}

template <class V>
void interleave_channels(const float* x, int64_t C, int64_t H, int64_t W, int64_t c0, int64_t row0, int64_t rows,
                         int64_t pad_left, int64_t pw, float* plane) {
  constexpr int L = V::kLanes;
  const int64_t hw = H * W;
  int64_t left = 0, cols = 0, in_lo = -1, in_hi = -1;
  clear_plane_borders<V>(H, W, row0, rows, pad_left, pw, plane, &left, &cols, &in_lo, &in_hi);
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

// The same plane from x already channel-blocked (conv/blocked_layout.h's
// NCHW16c, the block holding channels [c0, c0 + L)): each position's L lanes
// are L consecutive floats of its 16-channel block, so a row is a run of
// copies, with no transpose.
template <class V>
void interleave_blocked_channels(const float* x, int64_t H, int64_t W, int64_t c0, int64_t row0, int64_t rows,
                                 int64_t pad_left, int64_t pw, float* plane) {
  constexpr int L = V::kLanes;
  int64_t left = 0, cols = 0, in_lo = -1, in_hi = -1;
  clear_plane_borders<V>(H, W, row0, rows, pad_left, pw, plane, &left, &cols, &in_lo, &in_hi);
  if (in_lo < 0) return;
  const float* block = x + c0 / 16 * H * W * 16 + c0 % 16;
  for (int64_t ih = in_lo; ih < in_hi; ++ih) {
    const float* src = block + ih * W * 16;
    float* dst = plane + ((ih - row0) * pw + left) * L;
    for (int64_t iw = 0; iw < cols; ++iw) V::store(dst + iw * L, V::load(src + iw * 16));
  }
}

}  // namespace sy::cpu::simd
