// The Winograd F(4x4, 3x3), F(2x2, 3x3), F(5x5, 3x3) and F(4x4, 4x4) data transforms
// (conv/winograd_transforms.h), every ISA variant this CPU runs, against the
// transforms written here as plain matrix products with Lavin and Gray's
// B^T and A^T.
#include "providers/cpu/conv/winograd_transforms.h"

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

using Matrix = std::vector<std::vector<double>>;

// The variants: F(tile x tile, kernel x kernel), patches of tile + kernel - 1.
struct Variant {
  int tile, kernel;
  int patch() const { return tile + kernel - 1; }
};
constexpr Variant kVariants[] = {{4, 3}, {2, 3}, {5, 3}, {4, 4}};

// B^T (patch x patch) and A^T (tile x patch) for each variant. The 7-point
// ones (F(5x5, 3x3), F(4x4, 4x4)) are Toom-Cook's for the points 1, -1, 2,
// -2, 1/2, -1/2 and infinity: row j of B^T the coefficients (constant
// first) of the product of (x - p) over the finite points other than p_j,
// the last row that over all six; A^T[i][j] = p_j^i, and 1 for infinity in
// the last row.
Matrix bt_of(Variant v) {
  if (v.patch() == 4) return {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  if (v.patch() == 7)
    return {{1, 1, -4.25, -4.25, 1, 1, 0},   {-1, 1, 4.25, -4.25, -1, 1, 0}, {0.5, 0.25, -2.5, -1.25, 2, 1, 0},
            {-0.5, 0.25, 2.5, -1.25, -2, 1, 0}, {2, 4, -2.5, -5, 0.5, 1, 0},   {-2, 4, 2.5, -5, -0.5, 1, 0},
            {-1, 0, 5.25, 0, -5.25, 0, 1}};
  return {{4, 0, -5, 0, 1, 0}, {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
          {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
}
Matrix at_of(Variant v) {
  if (v.tile == 2) return {{1, 1, 1, 0}, {0, 1, -1, -1}};
  if (v.tile == 4 && v.kernel == 4)
    return {{1, 1, 1, 1, 1, 1, 0},
            {1, -1, 2, -2, 0.5, -0.5, 0},
            {1, 1, 4, 4, 0.25, 0.25, 0},
            {1, -1, 8, -8, 0.125, -0.125, 1}};
  if (v.tile == 5)
    return {{1, 1, 1, 1, 1, 1, 0},
            {1, -1, 2, -2, 0.5, -0.5, 0},
            {1, 1, 4, 4, 0.25, 0.25, 0},
            {1, -1, 8, -8, 0.125, -0.125, 0},
            {1, 1, 16, 16, 0.0625, 0.0625, 1}};
  return {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
}

using sy::testing::isa_variants;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The arguments for transforming all of x [C][H][W] (NCHW) into v, and p
// back into y [M][OH][OW], whole: `lanes` per channel block.
struct InputSide {
  const std::vector<float>* x;
  int64_t C, H, W, pad_top, pad_left;
};
WinogradInputArgs input_args(int tile, int kernel, int stride, const InputSide& in, std::vector<float>& planes,
                             int64_t ph, int64_t pw, int64_t tiles_x, int64_t tiles, std::vector<float>& v,
                             int64_t c_pad, int lanes) {
  WinogradInputArgs a;
  a.tile = tile;
  a.kernel = kernel;
  a.stride = stride;
  a.x = in.x->data();
  a.C = in.C;
  a.H = in.H;
  a.W = in.W;
  a.pad_top = in.pad_top;
  a.pad_left = in.pad_left;
  a.block_begin = 0;
  a.block_end = ceil_div(in.C, lanes);
  a.planes = planes.data();
  a.plane_height = ph;
  a.plane_width = pw;
  a.tiles_x = tiles_x;
  a.tiles = tiles;
  a.v = v.data();
  a.v_ld = c_pad;
  a.point_stride = tiles * c_pad;
  return a;
}
WinogradOutputArgs output_args(int tile, int kernel, int stride, const std::vector<float>& prod, int64_t m_pad,
                               int64_t M, int64_t OH, int64_t OW, int64_t tiles_x, int64_t tiles,
                               std::vector<float>& staging, std::vector<float>& y, const std::vector<float>& bias,
                               int lanes) {
  WinogradOutputArgs a;
  a.tile = tile;
  a.kernel = kernel;
  a.stride = stride;
  a.prod = prod.data();
  a.prod_ld = m_pad;
  a.point_stride = tiles * m_pad;
  a.M = M;
  a.block_begin = 0;
  a.block_end = ceil_div(M, lanes);
  a.tiles_x = tiles_x;
  a.tiles = tiles;
  a.OH = OH;
  a.OW = OW;
  a.staging = staging.data();
  a.y = y.data();
  a.bias = bias.data();
  return a;
}

// C = 20 and M = 19 leave a partial block for every lane count above 1;
// the odd map sizes leave partial tiles at the right and bottom.
TEST(WinogradTransformsTest, InputMatchesBtDB) {
  const int64_t C = 20, H = 13, W = 15, pad_top = 1, pad_left = 2, OH = 13, OW = 16;
  const int64_t c_pad = ceil_div(C, 16) * 16;
  const std::vector<float> x = test_values(static_cast<size_t>(C * H * W), 1);
  for (const Variant variant : kVariants) {
    const int tile = variant.tile, patch = variant.patch(), points = patch * patch;
    const Matrix bt = bt_of(variant);
    const int64_t tiles_x = ceil_div(OW, tile), tiles_y = ceil_div(OH, tile), tiles = tiles_x * tiles_y;
    for (const auto& var : isa_variants(&winograd_detail::input_transform_portable,
                                        &winograd_detail::input_transform_avx2,
                                        &winograd_detail::input_transform_avx512)) {
      SCOPED_TRACE(var.name + " tile " + std::to_string(tile) + " kernel " + std::to_string(variant.kernel));
      const int64_t ph = tiles_y * tile + patch - tile, pw = tiles_x * tile + patch - tile;
      std::vector<float> planes(static_cast<size_t>(c_pad * ph * pw));
      std::vector<float> v(static_cast<size_t>(points * tiles * c_pad), std::nanf(""));
      const WinogradInputArgs a = input_args(tile, variant.kernel, 1, {&x, C, H, W, pad_top, pad_left}, planes, ph,
                                             pw, tiles_x, tiles, v, c_pad, var.lanes);
      var.fn(a);
      for (int64_t c = 0; c < C; ++c) {
        for (int64_t t = 0; t < tiles; ++t) {
          Matrix d(static_cast<size_t>(patch), std::vector<double>(static_cast<size_t>(patch)));
          for (int k = 0; k < patch; ++k) {
            for (int l = 0; l < patch; ++l) {
              const int64_t iy = (t / tiles_x) * tile + k - pad_top, ix = (t % tiles_x) * tile + l - pad_left;
              d[k][l] = iy >= 0 && iy < H && ix >= 0 && ix < W ? x[static_cast<size_t>((c * H + iy) * W + ix)] : 0.0;
            }
          }
          for (int i = 0; i < patch; ++i) {
            for (int j = 0; j < patch; ++j) {
              double want = 0;
              for (int k = 0; k < patch; ++k)
                for (int l = 0; l < patch; ++l) want += bt[i][k] * d[k][l] * bt[j][l];
              const float got = v[static_cast<size_t>((i * patch + j) * tiles * c_pad + t * c_pad + c)];
              ASSERT_NEAR(got, want, 1e-4 * std::max(1.0, std::fabs(want)))
                  << "c " << c << " tile " << t << " point " << i * patch + j;
            }
          }
        }
      }
    }
  }
}

TEST(WinogradTransformsTest, OutputMatchesAtPAWithBiasAndActivation) {
  const int64_t M = 19, OH = 9, OW = 14;
  const int64_t m_pad = ceil_div(M, 16) * 16;
  // NaN, +-inf, -0 and denormal biases in some channels, which the clamp
  // must carry through as the reference's std::min / std::max do.
  std::vector<float> bias = test_values(static_cast<size_t>(M), 3);
  sy::testing::sprinkle_nonfinite(bias, 3, 1);
  for (const Variant variant : kVariants) {
    const int tile = variant.tile, patch = variant.patch(), points = patch * patch;
    const Matrix at = at_of(variant);
    const int64_t tiles_x = ceil_div(OW, tile), tiles_y = ceil_div(OH, tile), tiles = tiles_x * tiles_y;
    const std::vector<float> prod = test_values(static_cast<size_t>(points * tiles * m_pad), 2);
    for (const auto& var : isa_variants(&winograd_detail::output_transform_portable,
                                        &winograd_detail::output_transform_avx2,
                                        &winograd_detail::output_transform_avx512)) {
      for (bool clamp : {false, true}) {
        SCOPED_TRACE(var.name + " tile " + std::to_string(tile) + " kernel " + std::to_string(variant.kernel) +
                     (clamp ? " clip [-1, 2]" : " no activation"));
        std::vector<float> staging(static_cast<size_t>(m_pad * tiles * tile * tile));
        std::vector<float> y(static_cast<size_t>(M * OH * OW), std::nanf(""));
        WinogradOutputArgs a =
            output_args(tile, variant.kernel, 1, prod, m_pad, M, OH, OW, tiles_x, tiles, staging, y, bias, var.lanes);
        a.clamp = clamp;
        a.lo = -1.0f;
        a.hi = 2.0f;
        var.fn(a);
        for (int64_t m = 0; m < M; ++m) {
          for (int64_t oy = 0; oy < OH; ++oy) {
            for (int64_t ox = 0; ox < OW; ++ox) {
              const int64_t t = (oy / tile) * tiles_x + ox / tile;
              const int i = static_cast<int>(oy % tile), j = static_cast<int>(ox % tile);
              double want = bias[static_cast<size_t>(m)];
              for (int k = 0; k < patch; ++k)
                for (int l = 0; l < patch; ++l)
                  want += at[i][k] * prod[static_cast<size_t>((k * patch + l) * tiles * m_pad + t * m_pad + m)] *
                          at[j][l];
              if (clamp) want = std::min(std::max(want, -1.0), 2.0);
              const float got = y[static_cast<size_t>((m * OH + oy) * OW + ox)];
              ASSERT_TRUE(sy::testing::near_or_same_nonfinite(got, want, 1e-4 * std::max(1.0, std::fabs(want))))
                  << got << " want " << want << " m " << m << " y " << oy << " x " << ox;
            }
          }
        }
      }
    }
  }
}

// The phase-split stride-2 3x3 (winograd.h) lays its points out in GEMM
// slots of several rows per tile; the Conv tests hold the variant the CPU
// runs best to the direct convolution, and this holds the others to the
// portable one, input (V) and output (Y) alike. C = 20 and M = 19 leave
// partial blocks; the odd map, partial tiles.
TEST(WinogradTransformsTest, SplitStrideTwoAgreesAcrossIsas) {
  const int64_t C = 20, H = 17, W = 19, pad_top = 1, pad_left = 0, OH = 9, OW = 9, M = 19;
  const int64_t c_pad = ceil_div(C, 16) * 16, m_pad = ceil_div(M, 16) * 16;
  const std::vector<float> x = test_values(static_cast<size_t>(C * H * W), 4);
  const std::vector<float> bias = test_values(static_cast<size_t>(M), 5);
  for (const int tile : {2, 4}) {
    const int64_t tiles_x = ceil_div(OW, tile), tiles_y = ceil_div(OH, tile), tiles = tiles_x * tiles_y;
    const int64_t slots = (2 * tile + 1) * (2 * tile + 1);
    const int64_t ph = 2 * tile * tiles_y + 1, pw = 2 * tile * tiles_x + 1;
    const std::vector<float> prod = test_values(static_cast<size_t>(slots * tiles * m_pad), 6);
    std::vector<float> v0, y0;  // the portable variant's
    const auto inputs = isa_variants(&winograd_detail::input_transform_portable,
                                     &winograd_detail::input_transform_avx2, &winograd_detail::input_transform_avx512);
    const auto outputs = isa_variants(&winograd_detail::output_transform_portable,
                                      &winograd_detail::output_transform_avx2,
                                      &winograd_detail::output_transform_avx512);
    for (size_t k = 0; k < inputs.size(); ++k) {
      SCOPED_TRACE(inputs[k].name + " tile " + std::to_string(tile));
      std::vector<float> planes(static_cast<size_t>(c_pad * ph * pw));
      std::vector<float> v(static_cast<size_t>(slots * tiles * c_pad), 0.0f);
      const WinogradInputArgs in = input_args(tile, 3, 2, {&x, C, H, W, pad_top, pad_left}, planes, ph, pw, tiles_x,
                                              tiles, v, c_pad, inputs[k].lanes);
      inputs[k].fn(in);
      std::vector<float> staging(static_cast<size_t>(m_pad * tiles * tile * tile));
      std::vector<float> y(static_cast<size_t>(M * OH * OW), std::nanf(""));
      const WinogradOutputArgs out =
          output_args(tile, 3, 2, prod, m_pad, M, OH, OW, tiles_x, tiles, staging, y, bias, outputs[k].lanes);
      outputs[k].fn(out);
      for (float f : y) ASSERT_FALSE(std::isnan(f));
      if (k == 0) {
        v0 = v;
        y0 = y;
        continue;
      }
      for (size_t i = 0; i < v.size(); ++i) {
        if (static_cast<int64_t>(i) % c_pad >= C) continue;  // lanes past C: whatever the block held
        ASSERT_NEAR(v[i], v0[i], 1e-5 * std::max(1.0f, std::fabs(v0[i]))) << i;
      }
      for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], y0[i], 1e-5 * std::max(1.0f, std::fabs(y0[i]))) << i;
    }
  }
}

}  // namespace
}  // namespace sy::cpu
