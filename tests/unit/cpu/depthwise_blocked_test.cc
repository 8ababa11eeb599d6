// The channel-blocked depthwise convolution (conv/depthwise_blocked.h):
// every ISA variant this CPU runs, one band at a time, and the whole
// scheduled kernel on 1 and 2 threads, against the convolution written
// here as its definition (a sum over taps that lie inside the input).
#include "providers/cpu/conv/depthwise_blocked.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "testing/isa_variants.h"
#include "testing/test_values.h"

namespace sy::cpu {
namespace {

using sy::testing::test_values;

using Variant = sy::testing::IsaVariant<void (*)(const DepthwiseBandArgs&)>;

std::vector<Variant> variants() {
  return sy::testing::isa_variants(&depthwise_detail::depthwise_band_portable, &depthwise_detail::depthwise_band_avx2,
                                   &depthwise_detail::depthwise_band_avx512);
}

DepthwiseShape make_shape(int64_t C, int64_t H, int64_t W, int64_t k_h, int64_t k_w, int64_t stride, int64_t dilation,
                          int64_t pad_top, int64_t pad_left, int64_t pad_bottom, int64_t pad_right) {
  DepthwiseShape s;
  s.N = 1;
  s.C = C;
  s.H = H;
  s.W = W;
  s.kh = k_h;
  s.kw = k_w;
  s.stride_h = s.stride_w = stride;
  s.dilation_h = s.dilation_w = dilation;
  s.pad_top = pad_top;
  s.pad_left = pad_left;
  s.OH = (H + pad_top + pad_bottom - dilation * (k_h - 1) - 1) / stride + 1;
  s.OW = (W + pad_left + pad_right - dilation * (k_w - 1) - 1) / stride + 1;
  return s;
}

// y[n][c][oh][ow] = clamp(bias[c] + sum over taps inside x of w[c][i][j] x[...], lo, hi).
std::vector<float> reference(const DepthwiseShape& s, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& bias, float lo, float hi) {
  std::vector<float> y(static_cast<size_t>(s.N * s.C * s.OH * s.OW));
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t c = 0; c < s.C; ++c)
      for (int64_t oh = 0; oh < s.OH; ++oh)
        for (int64_t ow = 0; ow < s.OW; ++ow) {
          double acc = bias[static_cast<size_t>(c)];
          for (int64_t i = 0; i < s.kh; ++i)
            for (int64_t j = 0; j < s.kw; ++j) {
              const int64_t ih = oh * s.stride_h + i * s.dilation_h - s.pad_top;
              const int64_t iw = ow * s.stride_w + j * s.dilation_w - s.pad_left;
              if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W) continue;
              acc += static_cast<double>(w[static_cast<size_t>((c * s.kh + i) * s.kw + j)]) *
                     x[static_cast<size_t>(((n * s.C + c) * s.H + ih) * s.W + iw)];
            }
          const float v = static_cast<float>(acc);
          y[static_cast<size_t>(((n * s.C + c) * s.OH + oh) * s.OW + ow)] = std::min(std::max(v, lo), hi);
        }
  return y;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_TRUE(sy::testing::near_or_same_nonfinite(got[i], want[i], 1e-4f * (1.0f + std::fabs(want[i]))))
        << "at " << i << ": " << got[i] << " want " << want[i];
}

// The variant's lanes decide the weight layout, so pack it here the way
// pack_depthwise_weights does for the variant in use.
std::vector<float> pack_for(const std::vector<float>& w, int64_t C, int64_t taps, int lanes) {
  const int64_t blocks = (C + lanes - 1) / lanes;
  std::vector<float> p(static_cast<size_t>(blocks * taps * lanes), 0.0f);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t t = 0; t < taps; ++t)
      p[static_cast<size_t>(((c / lanes) * taps + t) * lanes + c % lanes)] = w[static_cast<size_t>(c * taps + t)];
  return p;
}

// Runs every block of one image through `band` in bands of `band_rows` rows.
std::vector<float> run_bands(const Variant& v, const DepthwiseShape& s, const std::vector<float>& x,
                             const std::vector<float>& w, const std::vector<float>& bias, float lo, float hi,
                             int64_t band_rows) {
  const int64_t taps = s.kh * s.kw, L = v.lanes;
  const std::vector<float> packed = pack_for(w, s.C, taps, v.lanes);
  std::vector<float> y(static_cast<size_t>(s.C * s.OH * s.OW), std::numeric_limits<float>::quiet_NaN());
  const int64_t pw = (s.OW - 1) * s.stride_w + (s.kw - 1) * s.dilation_w + 1;
  const int64_t rows = (band_rows - 1) * s.stride_h + (s.kh - 1) * s.dilation_h + 1;
  // NaN-filled scratch: a plane element the kernel reads without writing shows up.
  std::vector<float> plane(static_cast<size_t>(rows * pw * L), std::numeric_limits<float>::quiet_NaN());
  std::vector<float> staging(static_cast<size_t>(band_rows * s.OW * L), std::numeric_limits<float>::quiet_NaN());
  for (int64_t c0 = 0; c0 < s.C; c0 += L)
    for (int64_t oh0 = 0; oh0 < s.OH; oh0 += band_rows) {
      DepthwiseBandArgs a;
      a.s = s;
      a.x = x.data();
      a.y = y.data();
      a.w = packed.data() + (c0 / L) * taps * L;
      a.bias = bias.data();
      a.lo = lo;
      a.hi = hi;
      a.c0 = c0;
      a.oh0 = oh0;
      a.oh1 = std::min(s.OH, oh0 + band_rows);
      a.plane = plane.data();
      a.staging = staging.data();
      v.fn(a);
    }
  return y;
}

// [C][positions] to NCHW16c (C a multiple of 16).
std::vector<float> to_blocked(const std::vector<float>& v, int64_t C, int64_t positions) {
  std::vector<float> out(v.size());
  for (int64_t c = 0; c < C; ++c)
    for (int64_t p = 0; p < positions; ++p)
      out[static_cast<size_t>((c / 16 * positions + p) * 16 + c % 16)] = v[static_cast<size_t>(c * positions + p)];
  return out;
}

struct Case {
  const char* name;
  DepthwiseShape s;
  int64_t band_rows;
};

// C = 20 leaves a partial block for 8 and 16 lanes; widths below, at and
// above 16 take the narrow (flat) and wide (row transpose, overlapping
// last block) interleave paths; 3x3 and 5x5 at strides 1 and 2 take the
// fixed-size loops, the rest the generic one.
std::vector<Case> cases() {
  return {
      {"3x3 s1 narrow", make_shape(20, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1), 7},
      {"3x3 s1 wide, bands", make_shape(32, 9, 21, 3, 3, 1, 1, 1, 1, 1, 1), 4},
      {"3x3 s2 even map", make_shape(16, 14, 14, 3, 3, 2, 1, 1, 1, 1, 1), 3},
      {"3x3 s2 wide, asymmetric pads", make_shape(20, 11, 35, 3, 3, 2, 1, 0, 1, 1, 0), 2},
      {"5x5 s1", make_shape(24, 10, 17, 5, 5, 1, 1, 2, 2, 2, 2), 10},
      {"5x5 s2", make_shape(16, 12, 12, 5, 5, 2, 1, 2, 2, 1, 1), 6},
      {"3x3 dilated", make_shape(20, 12, 18, 3, 3, 1, 2, 2, 2, 2, 2), 5},
      {"3x3 dilated, whole blocks", make_shape(16, 12, 18, 3, 3, 1, 2, 2, 1, 2, 3), 5},
      {"5x3 s1 no padding", make_shape(17, 8, 16, 5, 3, 1, 1, 0, 0, 0, 0), 3},
      {"unused input columns and rows", make_shape(16, 9, 20, 3, 3, 2, 1, 0, 0, 0, 0), 4},
      {"pads wider than the kernel", make_shape(8, 3, 4, 3, 3, 1, 1, 3, 3, 3, 3), 4},
  };
}

TEST(DepthwiseBlockedTest, EveryVariantMatchesDefinition) {
  for (const Case& tc : cases()) {
    SCOPED_TRACE(tc.name);
    const DepthwiseShape& s = tc.s;
    const std::vector<float> x = test_values(static_cast<size_t>(s.C * s.H * s.W), 1);
    const std::vector<float> w = test_values(static_cast<size_t>(s.C * s.kh * s.kw), 2);
    const float inf = std::numeric_limits<float>::infinity();
    // No clamp, then Relu6; each with plain biases, then with NaN, +-inf,
    // -0 and denormal ones, whose channels the clamp must carry through as
    // the reference's std::min / std::max do.
    for (int mode = 0; mode < 4; ++mode) {
      const float lo = mode % 2 == 0 ? -inf : 0.0f, hi = mode % 2 == 0 ? inf : 6.0f;
      std::vector<float> bias = test_values(static_cast<size_t>(s.C), 3);
      if (mode >= 2) sy::testing::sprinkle_nonfinite(bias, 2, 0);
      const std::vector<float> want = reference(s, x, w, bias, lo, hi);
      for (const Variant& v : variants()) {
        SCOPED_TRACE(v.name);
        expect_near(run_bands(v, s, x, w, bias, lo, hi, tc.band_rows), want);
      }
      if (s.C % 16 != 0) continue;
      // y channel-blocked (NCHW16c) for a 1x1 conv that reads it so.
      DepthwiseShape blocked = s;
      blocked.y_blocked16 = true;
      const std::vector<float> want_blocked = to_blocked(want, s.C, s.OH * s.OW);
      for (const Variant& v : variants()) {
        SCOPED_TRACE(std::string(v.name) + " blocked y");
        expect_near(run_bands(v, blocked, x, w, bias, lo, hi, tc.band_rows), want_blocked);
      }
      // x channel-blocked too: read in place with 8 and 16 lanes, through
      // a plane with 1.
      const std::vector<float> x_blocked = to_blocked(x, s.C, s.H * s.W);
      for (const bool y_blocked : {false, true}) {
        DepthwiseShape both = s;
        both.x_blocked16 = true;
        both.y_blocked16 = y_blocked;
        for (const Variant& v : variants()) {
          SCOPED_TRACE(std::string(v.name) + " blocked x" + (y_blocked ? ", blocked y" : ""));
          expect_near(run_bands(v, both, x_blocked, w, bias, lo, hi, tc.band_rows), y_blocked ? want_blocked : want);
        }
      }
    }
  }
}

TEST(DepthwiseBlockedTest, ScheduledKernelOnOneAndTwoThreads) {
  // 45 x 50 outputs: several bands by size; 14 x 14: one band by size, cut
  // into one per thread (the maps split by rows among the threads).
  for (auto [H, W] : {std::pair<int64_t, int64_t>{45, 50}, std::pair<int64_t, int64_t>{14, 14}}) {
    DepthwiseShape s = make_shape(40, H, W, 3, 3, 1, 1, 1, 1, 1, 1);
    s.N = 2;
    const std::vector<float> x = test_values(static_cast<size_t>(s.N * s.C * s.H * s.W), 4);
    const std::vector<float> w = test_values(static_cast<size_t>(s.C * 9), 5);
    const std::vector<float> bias = test_values(static_cast<size_t>(s.C), 6);
    const std::vector<float> want = reference(s, x, w, bias, 0.0f, std::numeric_limits<float>::infinity());
    const std::vector<float> packed = pack_depthwise_weights(w.data(), s.C, 9);
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(std::to_string(H) + "x" + std::to_string(W) + " threads " + std::to_string(threads));
      ThreadPool pool(threads);
      std::vector<float> scratch(static_cast<size_t>(depthwise_blocked_scratch_floats(s, pool)));
      std::vector<float> y(want.size(), std::numeric_limits<float>::quiet_NaN());
      depthwise_blocked(s, x.data(), packed.data(), bias.data(), 0.0f, std::numeric_limits<float>::infinity(),
                        y.data(), scratch.data(), pool);
      expect_near(y, want);
    }
  }
}

}  // namespace
}  // namespace sy::cpu
