// The few-channel direct convolution (conv/direct_few_channels.h): every
// ISA variant this CPU runs, on 1 and 2 threads, against the convolution
// written here as its definition (a sum over the taps that lie inside the
// input), for strides, dilations, asymmetric padding, widths that are not
// a multiple of any vector, and output channels that are not a multiple of
// the register block.
#include "providers/cpu/conv/direct_few_channels.h"

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

using Variant = sy::testing::IsaVariant<void (*)(const DirectRowArgs&)>;

std::vector<Variant> variants() {
  return sy::testing::isa_variants(&direct_detail::direct_row_portable, &direct_detail::direct_row_avx2,
                                   &direct_detail::direct_row_avx512);
}

struct Case {
  int64_t C, H, W, M, kh, kw, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left, pad_bottom, pad_right;
};

DirectConvShape shape_of(const Case& c) {
  DirectConvShape s;
  s.C = c.C;
  s.H = c.H;
  s.W = c.W;
  s.M = c.M;
  s.kh = c.kh;
  s.kw = c.kw;
  s.stride_h = c.stride_h;
  s.stride_w = c.stride_w;
  s.dilation_h = c.dilation_h;
  s.dilation_w = c.dilation_w;
  s.pad_top = c.pad_top;
  s.pad_left = c.pad_left;
  s.OH = (c.H + c.pad_top + c.pad_bottom - c.dilation_h * (c.kh - 1) - 1) / c.stride_h + 1;
  s.OW = (c.W + c.pad_left + c.pad_right - c.dilation_w * (c.kw - 1) - 1) / c.stride_w + 1;
  return s;
}

// y[m][oh][ow] = clamp(bias[m] + sum over c and taps inside x of w x, lo, hi).
std::vector<float> reference(const DirectConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& bias, float lo, float hi) {
  std::vector<float> y(static_cast<size_t>(s.M * s.OH * s.OW));
  for (int64_t m = 0; m < s.M; ++m)
    for (int64_t oh = 0; oh < s.OH; ++oh)
      for (int64_t ow = 0; ow < s.OW; ++ow) {
        double acc = bias[static_cast<size_t>(m)];
        for (int64_t c = 0; c < s.C; ++c)
          for (int64_t i = 0; i < s.kh; ++i)
            for (int64_t j = 0; j < s.kw; ++j) {
              const int64_t ih = oh * s.stride_h + i * s.dilation_h - s.pad_top;
              const int64_t iw = ow * s.stride_w + j * s.dilation_w - s.pad_left;
              if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W) continue;
              acc += static_cast<double>(w[static_cast<size_t>(((m * s.C + c) * s.kh + i) * s.kw + j)]) *
                     x[static_cast<size_t>((c * s.H + ih) * s.W + iw)];
            }
        const float v = static_cast<float>(acc);
        y[static_cast<size_t>((m * s.OH + oh) * s.OW + ow)] = std::min(std::max(v, lo), hi);
      }
  return y;
}

const Case kCases[] = {
    // MobileNetV2's stem, smaller: 3 -> 32, 3x3 stride 2, pads 1.
    {3, 30, 34, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
    // A 7x7 kernel with stride 2 and pads 3 (ResNet's stem on one channel), 6 output channels.
    {1, 21, 40, 6, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3},
    // ResNet's whole stem, smaller: 3 -> 10 channels, 147 taps.
    {3, 23, 26, 10, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3},
    // Stride 1, dilation, asymmetric pads, width 37 (no multiple of 8 or 16), 5 output channels.
    {1, 11, 37, 5, 3, 5, 1, 1, 2, 1, 1, 2, 0, 3},
    // Stride 3 across, 1 down, no padding.
    {4, 9, 50, 9, 2, 4, 1, 3, 1, 1, 0, 0, 0, 0},
    // An output row of one vector or less.
    {3, 8, 9, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
};

TEST(DirectFewChannelsTest, EveryVariantMatchesTheDefinition) {
  for (const Variant& v : variants()) {
    for (const Case& c : kCases) {
      ASSERT_TRUE(direct_few_channels_suits(c.C, c.kh, c.kw));
      const DirectConvShape s = shape_of(c);
      const int64_t K = s.C * s.kh * s.kw;
      const std::vector<float> x = test_values(static_cast<size_t>(s.C * s.H * s.W), 1);
      const std::vector<float> w = test_values(static_cast<size_t>(s.M * K), 2);
      std::vector<float> bias = test_values(static_cast<size_t>(s.M), 3);
      const std::vector<float> packed = pack_direct_weights(w.data(), s.M, K);
      for (int threads : {1, 2}) {
        // Two threads: NaN, +-inf, -0 and denormal biases, whose channels
        // the clamp must carry through as the reference's std::min / max do.
        if (threads == 2) sy::testing::sprinkle_nonfinite(bias, 2, 0);
        for (bool clamp : {false, true}) {
          const float lo = clamp ? -0.5f : -std::numeric_limits<float>::infinity();
          const float hi = clamp ? 0.75f : std::numeric_limits<float>::infinity();
          ThreadPool pool(threads);
          std::vector<float> scratch(static_cast<size_t>(direct_detail::scratch_floats(s, v.lanes)),
                                     std::numeric_limits<float>::quiet_NaN());
          // One float past Y, to catch a store beyond the last row.
          std::vector<float> y(static_cast<size_t>(s.M * s.OH * s.OW + 1), std::numeric_limits<float>::quiet_NaN());
          direct_detail::run(v.fn, v.lanes, s, x.data(), packed.data(), bias.data(), lo, hi, y.data(),
                             scratch.data(), pool);
          const std::vector<float> want = reference(s, x, w, bias, lo, hi);
          for (size_t i = 0; i < want.size(); ++i)
            ASSERT_TRUE(sy::testing::near_or_same_nonfinite(y[i], want[i], 1e-4f * (1.0f + std::fabs(want[i]))))
                << y[i] << " want " << want[i] << " " << v.name << " case C=" << c.C << " W=" << c.W << " threads " << threads << " at " << i;
          EXPECT_TRUE(std::isnan(y.back())) << v.name << ": wrote past Y";
        }
      }
    }
  }
}

}  // namespace
}  // namespace sy::cpu
