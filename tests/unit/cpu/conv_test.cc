// Conv against a direct N-D convolution written here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "schema/schema.h"
#include "testing/node_test.h"

namespace sy::testing {
namespace {

std::vector<float> values(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = static_cast<uint32_t>(seed) * 747796405u + 1;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>((s >> 10) % 201) - 100) / 50.0f;
  }
  return v;
}

struct ConvSpec {
  std::vector<int64_t> x;  // N, C, spatial...
  int64_t m = 1;           // output channels
  std::vector<int64_t> kernel;
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads;  // empty: defaults
  std::string auto_pad;                            // empty: not set
  bool bias = false;
  bool constant_w = true;
  std::string activation;
  std::vector<float> activation_params;
  int threads = 1;
  // Winograd's transforms round at the scale of the whole output, so its
  // tolerance is 1e-4 of the largest output rather than of each element.
  bool tolerance_of_max = false;
  // FusedConv's output_layout / input_layout = NCHW16c: Y is compared, or X
  // fed, channel-blocked (providers/cpu/conv/blocked_layout.h).
  bool blocked_output = false;
  bool blocked_input = false;
  // FusedConv's input 3 (residual_value(i) at element i of Y) is added
  // before the activation.
  bool residual = false;
  // residual_layout = NCHW16c: the residual is fed channel-blocked.
  bool blocked_residual = false;
  // X declared with unknown dims: the kernel sees the map's size at run
  // time only.
  bool dynamic = false;

  // Whether the node is a FusedConv (com.switchyard) rather than a Conv.
  bool fused() const {
    return !activation.empty() || blocked_output || blocked_input || residual || blocked_residual;
  }
};

// A Conv node, or the FusedConv that carries an epilogue or layouts.
NodeTest conv_or_fused(bool fused) { return fused ? NodeTest("FusedConv", 1, "com.switchyard") : NodeTest("Conv", 11); }

float residual_value(int64_t i) { return static_cast<float>(i * 37 % 23 - 11) / 8.0f; }

// [N, C, positions] from NCHW to NCHW16c (C a multiple of 16).
std::vector<float> to_blocked(const std::vector<float>& v, int64_t N, int64_t C, int64_t positions) {
  std::vector<float> out(v.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < positions; ++p)
        out[static_cast<size_t>(((n * C / 16 + c / 16) * positions + p) * 16 + c % 16)] =
            v[static_cast<size_t>((n * C + c) * positions + p)];
  return out;
}

int64_t product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

// Direct convolution; pads here are explicit [begins..., ends...].
std::vector<float> reference(const ConvSpec& s, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& b, std::vector<int64_t>& y_shape) {
  const size_t r = s.kernel.size();
  int64_t st[8], dl[8], pb[8], pe[8], out[8];
  for (size_t i = 0; i < r; ++i) {
    st[i] = 1;
    dl[i] = 1;
    pb[i] = 0;
    pe[i] = 0;
    if (!s.strides.empty()) st[i] = s.strides[i];
    if (!s.dilations.empty()) dl[i] = s.dilations[i];
    const int64_t in = s.x[i + 2];
    const int64_t ek = (s.kernel[i] - 1) * dl[i] + 1;
    if (s.auto_pad == "SAME_UPPER" || s.auto_pad == "SAME_LOWER") {
      out[i] = (in + st[i] - 1) / st[i];
      const int64_t total = std::max<int64_t>(0, (out[i] - 1) * st[i] + ek - in);
      pb[i] = s.auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
      pe[i] = total - pb[i];
    } else {
      if (!s.pads.empty() && s.auto_pad != "VALID") {
        pb[i] = s.pads[i];
        pe[i] = s.pads[i + r];
      }
      out[i] = (in + pb[i] + pe[i] - ek) / st[i] + 1;
    }
  }
  const int64_t N = s.x[0], C = s.x[1], M = s.m, cg = C / s.group, mg = M / s.group;
  y_shape = {N, M};
  for (size_t i = 0; i < r; ++i) y_shape.push_back(out[i]);
  const int64_t out_size = product(std::vector<int64_t>(y_shape.begin() + 2, y_shape.end())), in_size = product(s.x, 2), ksize = product(s.kernel);
  std::vector<float> y(static_cast<size_t>(N * M * out_size));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t g = m / mg;
      for (int64_t q = 0; q < out_size; ++q) {
        int64_t o[8] = {};
        for (int64_t rem = q, i = static_cast<int64_t>(r) - 1; i >= 0; --i) {
          o[static_cast<size_t>(i)] = rem % out[static_cast<size_t>(i)];
          rem /= out[static_cast<size_t>(i)];
        }
        double acc = s.bias ? b[static_cast<size_t>(m)] : 0.0;
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t kq = 0; kq < ksize; ++kq) {
            int64_t idx = 0;
            bool inside = true;
            int64_t kk[8] = {};
            for (int64_t rem = kq, i = static_cast<int64_t>(r) - 1; i >= 0; --i) {
              kk[static_cast<size_t>(i)] = rem % s.kernel[static_cast<size_t>(i)];
              rem /= s.kernel[static_cast<size_t>(i)];
            }
            for (size_t d = 0; d < r; ++d) {
              const int64_t pos = o[d] * st[d] - pb[d] + kk[d] * dl[d];
              if (pos < 0 || pos >= s.x[d + 2]) inside = false;
              idx = idx * s.x[d + 2] + pos;
            }
            if (!inside) continue;
            acc += static_cast<double>(x[static_cast<size_t>((n * C + g * cg + c) * in_size + idx)]) *
                   w[static_cast<size_t>((m * cg + c) * ksize + kq)];
          }
        if (s.residual) acc += residual_value((n * M + m) * out_size + q);
        float v = static_cast<float>(acc);
        if (s.activation == "Relu") v = std::max(v, 0.0f);
        if (s.activation == "Clip") v = std::min(std::max(v, s.activation_params[0]), s.activation_params[1]);
        y[static_cast<size_t>((n * M + m) * out_size + q)] = v;
      }
    }
  return y;
}

void check_conv(const ConvSpec& s) {
  std::vector<int64_t> w_shape = {s.m, s.x[1] / s.group};
  for (int64_t k : s.kernel) w_shape.push_back(k);
  const auto x = values(product(s.x), 1);
  const auto w = values(product(w_shape), 2);
  const auto b = values(s.m, 3);
  std::vector<int64_t> y_shape;
  auto expect = reference(s, x, w, b, y_shape);
  if (s.blocked_output) expect = to_blocked(expect, y_shape[0], y_shape[1], product(y_shape, 2));
  NodeTest t = conv_or_fused(s.fused());
  t.input(make_tensor<float>(Shape(s.x), s.blocked_input ? to_blocked(x, s.x[0], s.x[1], product(s.x, 2)) : x));
  if (s.blocked_output) t.attr("output_layout", std::string("NCHW16c"));
  if (s.blocked_input) t.attr("input_layout", std::string("NCHW16c"));
  if (s.constant_w) {
    t.constant_input(make_tensor<float>(Shape(w_shape), w));
  } else {
    t.input(make_tensor<float>(Shape(w_shape), w));
  }
  if (s.bias || s.residual) {
    if (s.bias) {
      t.constant_input(make_tensor<float>({s.m}, b));
    } else {
      t.missing_input();
    }
  }
  if (s.residual) {
    std::vector<float> z(static_cast<size_t>(product(y_shape)));
    for (size_t i = 0; i < z.size(); ++i) z[i] = residual_value(static_cast<int64_t>(i));
    if (s.blocked_residual) {
      z = to_blocked(z, y_shape[0], y_shape[1], product(y_shape, 2));
      t.attr("residual_layout", std::string("NCHW16c"));
    }
    t.input(make_tensor<float>(Shape(y_shape), z));
  }
  if (s.group != 1) t.attr("group", s.group);
  if (!s.strides.empty()) t.attr("strides", s.strides);
  if (!s.dilations.empty()) t.attr("dilations", s.dilations);
  if (!s.pads.empty()) t.attr("pads", s.pads);
  if (!s.auto_pad.empty()) t.attr("auto_pad", s.auto_pad);
  if (!s.activation.empty()) t.attr("activation", s.activation);
  if (!s.activation_params.empty()) t.attr("activation_params", s.activation_params);
  if (s.dynamic) t.dynamic_shapes();
  auto out = t.threads(s.threads).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  double largest = 0;
  for (float v : expect) largest = std::max(largest, static_cast<double>(std::fabs(v)));
  expect_tensor_near(out->at(0), make_tensor<float>(Shape(y_shape), expect), s.tolerance_of_max ? 0.0 : 1e-4,
                     s.tolerance_of_max ? 1e-4 * largest : 1e-4);
  if (s.dynamic) return;
  // Inferred shape matches the computed one.
  const Graph& g = t.graph();
  const ValueType& yt = g.values[static_cast<size_t>(g.outputs[0])].type;
  ASSERT_TRUE(yt.has_shape);
  ASSERT_EQ(yt.rank(), y_shape.size());
  for (size_t i = 0; i < y_shape.size(); ++i) EXPECT_EQ(yt.dims[i].value, y_shape[i]) << "dim " << i;
}

TEST(ConvTest, HandComputed) {
  // 3x3 ones kernel over 0..24, pads 1: the ONNX doc example.
  std::vector<float> x(25);
  for (int i = 0; i < 25; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  auto out = NodeTest("Conv", 11)
                 .input(make_tensor<float>({1, 1, 5, 5}, x))
                 .constant_input(make_tensor<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f)))
                 .attr("kernel_shape", std::vector<int64_t>{3, 3})
                 .attr("pads", std::vector<int64_t>{1, 1, 1, 1})
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_tensor_near(out->at(0), make_tensor<float>({1, 1, 5, 5}, {12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108,
                                                                   117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84}));
}

TEST(ConvTest, Basic3x3WithBias) {
  check_conv({.x = {1, 3, 7, 9}, .m = 5, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true});
  check_conv({.x = {2, 3, 7, 9}, .m = 5, .kernel = {3, 3}, .bias = true, .constant_w = false});
}

TEST(ConvTest, StridesDilationsAsymmetricPads) {
  check_conv({.x = {1, 2, 11, 10}, .m = 3, .kernel = {3, 2}, .strides = {2, 3}, .pads = {1, 0, 2, 1}});
  check_conv({.x = {1, 2, 12, 12}, .m = 4, .kernel = {3, 3}, .dilations = {2, 3}, .pads = {2, 1, 0, 3}, .bias = true});
  check_conv({.x = {2, 3, 9, 9}, .m = 2, .kernel = {2, 2}, .strides = {2, 2}, .dilations = {2, 2}});
}

TEST(ConvTest, Groups) {
  check_conv({.x = {1, 4, 6, 6}, .m = 6, .kernel = {3, 3}, .group = 2, .pads = {1, 1, 1, 1}, .bias = true});
  check_conv({.x = {2, 6, 5, 7}, .m = 3, .kernel = {1, 3}, .group = 3, .strides = {1, 2}, .constant_w = false});
}

TEST(ConvTest, Depthwise) {
  check_conv({.x = {2, 8, 9, 10}, .m = 8, .kernel = {3, 3}, .group = 8, .pads = {1, 1, 1, 1}, .bias = true});
  check_conv({.x = {1, 5, 12, 11}, .m = 5, .kernel = {5, 3}, .group = 5, .strides = {2, 2}, .dilations = {1, 2},
              .pads = {2, 0, 1, 2}, .bias = true, .activation = "Relu"});
  // channel multiplier 2 is grouped, not depthwise-direct
  check_conv({.x = {1, 4, 6, 6}, .m = 8, .kernel = {3, 3}, .group = 4, .pads = {1, 1, 1, 1}});
}

TEST(ConvTest, Pointwise) {
  check_conv({.x = {2, 16, 7, 5}, .m = 9, .kernel = {1, 1}, .bias = true});
  check_conv({.x = {1, 16, 7, 5}, .m = 9, .kernel = {1, 1}, .strides = {2, 2}});  // strided: im2col
  check_conv({.x = {1, 16, 7, 5}, .m = 9, .kernel = {1, 1}, .bias = true, .constant_w = false});
}

TEST(ConvTest, AutoPad) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    check_conv({.x = {1, 2, 5, 6}, .m = 3, .kernel = {3, 3}, .strides = {2, 2}, .auto_pad = mode});
    check_conv({.x = {1, 2, 8, 7}, .m = 2, .kernel = {4, 2}, .auto_pad = mode, .bias = true});
  }
  check_conv({.x = {1, 2, 8, 7}, .m = 2, .kernel = {3, 3}, .strides = {2, 1}, .auto_pad = "VALID"});
}

TEST(ConvTest, OneAndThreeDimensional) {
  check_conv({.x = {2, 3, 17}, .m = 4, .kernel = {3}, .strides = {2}, .pads = {1, 2}, .bias = true});
  check_conv({.x = {1, 2, 10}, .m = 2, .kernel = {2}, .dilations = {3}});
  check_conv({.x = {1, 2, 5, 6, 7}, .m = 3, .kernel = {2, 3, 3}, .strides = {1, 2, 1}, .pads = {1, 0, 1, 0, 1, 2},
              .bias = true});
  check_conv({.x = {1, 4, 4, 5, 6}, .m = 4, .kernel = {3, 3, 3}, .group = 4, .pads = {1, 1, 1, 1, 1, 1}});
}

TEST(ConvTest, LargeChunkedAndThreaded) {
  // K = 576, 48x48 outputs: the im2col buffer is filled in more than one chunk.
  check_conv({.x = {1, 64, 48, 48}, .m = 8, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true, .threads = 2});
  check_conv({.x = {2, 32, 20, 20}, .m = 40, .kernel = {3, 3}, .strides = {2, 2}, .bias = true, .threads = 3});
  check_conv({.x = {2, 32, 20, 20}, .m = 32, .kernel = {3, 3}, .group = 32, .pads = {1, 1, 1, 1}, .threads = 2});
}

TEST(ConvTest, FewPositionsTransposedProductThreaded) {
  // Maps under 128 positions run Y^T = X^T W^T; Y^T goes into place block by
  // block (16x16 transposes and the ragged edges), on several threads.
  check_conv({.x = {2, 40, 7, 7}, .m = 96, .kernel = {1, 1}, .bias = true, .activation = "Clip",
              .activation_params = {-0.5f, 1.0f}, .threads = 2});
  // 3x2, not 3x3: a 3x3 stride-1 Conv over 7x7 and up takes Winograd.
  check_conv({.x = {1, 35, 9, 9}, .m = 150, .kernel = {3, 2}, .pads = {1, 1, 1, 0}, .bias = true,
              .activation = "Relu", .threads = 3});
  check_conv({.x = {1, 300, 5, 5}, .m = 17, .kernel = {1, 1}, .threads = 2});
}

TEST(ConvTest, NarrowMapsOfUnknownSizeRunTheTransposedProduct) {
  // A map whose size is unknown at creation: under 16 positions the kernel
  // takes the transposed product with the W^T it packed as well; from 16 on
  // the plain one. A streaming model's Conv1d stack, then 2-D maps.
  check_conv({.x = {1, 129, 4}, .m = 128, .kernel = {3}, .pads = {1, 1}, .bias = true, .activation = "Relu",
              .dynamic = true});
  check_conv({.x = {1, 128, 4}, .m = 64, .kernel = {3}, .strides = {2}, .pads = {1, 1}, .bias = true, .dynamic = true});
  check_conv({.x = {2, 64, 1}, .m = 128, .kernel = {3}, .pads = {1, 1}, .threads = 2, .dynamic = true});
  check_conv({.x = {1, 20, 3, 3}, .m = 24, .kernel = {3, 2}, .pads = {1, 1, 1, 0}, .bias = true, .residual = true,
              .dynamic = true});
  check_conv({.x = {1, 20, 5, 5}, .m = 24, .kernel = {3, 2}, .pads = {1, 1, 1, 0}, .bias = true, .threads = 2,
              .dynamic = true});
}

TEST(ConvTest, FewInputChannelsDirect) {
  // C * kh * kw up to 160 and at least 128 output positions: the direct
  // kernel (an image stem), its weights packed at creation.
  check_conv({.x = {2, 3, 40, 36}, .m = 32, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .bias = true,
              .activation = "Clip", .activation_params = {0.0f, 6.0f}, .threads = 2});
  check_conv({.x = {1, 1, 24, 29}, .m = 7, .kernel = {5, 3}, .dilations = {1, 2}, .pads = {2, 0, 1, 3},
              .activation = "Relu"});
  // ResNet's stem, smaller: 7x7 stride 2 over 3 channels, 147 taps.
  check_conv({.x = {1, 3, 33, 30}, .m = 16, .kernel = {7, 7}, .strides = {2, 2}, .pads = {3, 3, 3, 3}, .bias = true,
              .activation = "Relu", .threads = 2});
}

TEST(ConvTest, ChannelBlockedHandOff) {
  // The producer's GEMM stores Y straight into NCHW16c: a 1x1 conv on maps
  // under and over 128 positions, and a 3x3 one through im2col.
  check_conv({.x = {2, 24, 9, 11}, .m = 32, .kernel = {1, 1}, .bias = true, .activation = "Clip",
              .activation_params = {0.0f, 6.0f}, .threads = 2, .blocked_output = true});
  check_conv({.x = {1, 16, 20, 20}, .m = 48, .kernel = {1, 1}, .activation = "Relu", .threads = 3,
              .blocked_output = true});
  check_conv({.x = {1, 5, 12, 12}, .m = 16, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true,
              .blocked_output = true});
  // The depthwise reads X from NCHW16c: stride 1 and 2, odd sizes.
  check_conv({.x = {2, 32, 13, 11}, .m = 32, .kernel = {3, 3}, .group = 32, .pads = {1, 1, 1, 1}, .bias = true,
              .activation = "Clip", .activation_params = {0.0f, 6.0f}, .threads = 2, .blocked_input = true});
  check_conv({.x = {1, 16, 15, 14}, .m = 16, .kernel = {3, 3}, .group = 16, .strides = {2, 2},
              .pads = {1, 1, 1, 1}, .blocked_input = true});
  check_conv({.x = {1, 48, 7, 7}, .m = 48, .kernel = {5, 5}, .group = 48, .pads = {2, 2, 2, 2}, .bias = true,
              .threads = 2, .blocked_input = true});
  // The depthwise stores Y in NCHW16c, both ways in and out, several images.
  check_conv({.x = {2, 32, 13, 11}, .m = 32, .kernel = {3, 3}, .group = 32, .pads = {1, 1, 1, 1}, .bias = true,
              .activation = "Clip", .activation_params = {0.0f, 6.0f}, .threads = 2, .blocked_output = true});
  check_conv({.x = {1, 48, 15, 14}, .m = 48, .kernel = {3, 3}, .group = 48, .strides = {2, 2}, .pads = {1, 1, 1, 1},
              .blocked_output = true, .blocked_input = true});
  // The 1x1 projection reads X from NCHW16c: maps under 128 positions (the
  // transposed product, packing A from blocks) and over (the plain one,
  // packing B from blocks), with bias, residual and activation, channels
  // past one K block (two of 400).
  check_conv({.x = {2, 32, 7, 7}, .m = 24, .kernel = {1, 1}, .bias = true, .activation = "Relu", .threads = 2,
              .blocked_input = true, .residual = true});
  check_conv({.x = {1, 800, 9, 9}, .m = 40, .kernel = {1, 1}, .bias = true, .threads = 3, .blocked_input = true});
  check_conv({.x = {2, 48, 14, 13}, .m = 20, .kernel = {1, 1}, .bias = true, .activation = "Clip",
              .activation_params = {-1.0f, 1.0f}, .threads = 2, .blocked_input = true, .residual = true});
  check_conv({.x = {1, 288, 12, 12}, .m = 16, .kernel = {1, 1}, .constant_w = false, .blocked_input = true});
  // Both at once on a 1x1 (a ResNet bottleneck's), with the blocked residual.
  check_conv({.x = {1, 32, 6, 6}, .m = 48, .kernel = {1, 1}, .bias = true, .blocked_output = true,
              .blocked_input = true});
  check_conv({.x = {2, 32, 10, 9}, .m = 64, .kernel = {1, 1}, .bias = true, .activation = "Relu", .threads = 2,
              .blocked_output = true, .blocked_input = true, .residual = true, .blocked_residual = true});
}

TEST(ConvTest, ChannelBlockedChains) {
  // Winograd reading and writing blocks (3x3 stride 1, maps >= 7x7), odd sizes.
  check_conv({.x = {1, 32, 11, 9}, .m = 48, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true,
              .activation = "Relu", .threads = 2, .tolerance_of_max = true, .blocked_output = true,
              .blocked_input = true});
  check_conv({.x = {2, 16, 8, 8}, .m = 16, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .tolerance_of_max = true,
              .blocked_input = true});
  check_conv({.x = {1, 32, 14, 13}, .m = 48, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true,
              .threads = 2, .tolerance_of_max = true, .blocked_output = true, .blocked_input = true});  // F(5x5, 3x3)
  check_conv({.x = {1, 16, 9, 7}, .m = 32, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true,
              .tolerance_of_max = true, .blocked_output = true});
  // A region's last Conv: NCHW Y, blocked residual (Winograd, and the
  // transposed product).
  check_conv({.x = {1, 32, 8, 8}, .m = 32, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true,
              .activation = "Relu", .threads = 2, .tolerance_of_max = true, .blocked_input = true, .residual = true,
              .blocked_residual = true});
  check_conv({.x = {1, 64, 7, 7}, .m = 32, .kernel = {1, 1}, .bias = true, .activation = "Relu",
              .blocked_input = true, .residual = true, .blocked_residual = true});
  // Strided and spatial Convs reading blocks through im2row_blocked (ResNet's
  // downsample and stride-2 3x3), padding at every edge, dilation too.
  check_conv({.x = {1, 32, 15, 15}, .m = 64, .kernel = {1, 1}, .strides = {2, 2}, .bias = true, .threads = 2,
              .blocked_output = true, .blocked_input = true, .residual = true, .blocked_residual = true});
  check_conv({.x = {2, 32, 13, 12}, .m = 16, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1},
              .bias = true, .activation = "Relu", .threads = 2, .blocked_output = true, .blocked_input = true});
  check_conv({.x = {1, 16, 10, 11}, .m = 16, .kernel = {3, 2}, .dilations = {2, 1}, .pads = {2, 0, 1, 1},
              .blocked_input = true});
}

// A FusedConv over X of shape x with a constant W of shape w, attributes to
// follow.
NodeTest fused_conv_node(const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
  NodeTest t = conv_or_fused(true);
  t.input(make_tensor<float>(Shape(x), values(product(x), 1)));
  t.constant_input(make_tensor<float>(Shape(w), values(product(w), 2)));
  return t;
}

// Running t fails with an error that says `needle`.
void expect_error_naming(NodeTest& t, const std::string& needle) {
  auto out = t.run();
  ASSERT_FALSE(out.ok()) << "expected an error naming " << needle;
  EXPECT_NE(out.status().message().find(needle), std::string::npos) << out.status().message();
}

TEST(ConvTest, ChannelBlockedLayoutMisuseIsAnError) {
  const std::string blocked = "NCHW16c";
  // Output channels not in whole blocks of 16.
  expect_error_naming(fused_conv_node({1, 4, 5, 5}, {24, 4, 1, 1}).attr("output_layout", blocked), "output_layout");
  // A blocked input on a grouped Conv that is not depthwise.
  expect_error_naming(
      fused_conv_node({1, 32, 5, 5}, {32, 16, 3, 3}).attr("group", int64_t{2}).attr("input_layout", blocked),
      "depthwise");
  // A blocked residual on a Conv without one.
  expect_error_naming(fused_conv_node({1, 16, 5, 5}, {16, 16, 1, 1}).attr("residual_layout", blocked),
                      "no residual");
  // Input channels not in whole blocks.
  expect_error_naming(fused_conv_node({1, 24, 5, 5}, {16, 24, 1, 1}).attr("input_layout", blocked), "whole blocks");
  // A blocked output on a grouped Conv that is not depthwise.
  expect_error_naming(
      fused_conv_node({1, 32, 5, 5}, {32, 16, 3, 3}).attr("group", int64_t{2}).attr("output_layout", blocked),
      "output_layout");
  // A layout the kernels do not know.
  expect_error_naming(fused_conv_node({1, 16, 5, 5}, {16, 16, 1, 1}).attr("output_layout", std::string("NHWC")),
                      "NCHW16c");
}

TEST(ConvTest, NchwLayoutsAreTheDefault) {
  // FusedConv with every layout said to be NCHW, and with none said: a Conv.
  for (bool explicit_layouts : {false, true}) {
    SCOPED_TRACE(explicit_layouts ? "explicit" : "default");
    NodeTest t = fused_conv_node({1, 16, 5, 5}, {16, 16, 1, 1});
    if (explicit_layouts)
      for (const char* name : {"input_layout", "output_layout"}) t.attr(name, std::string("NCHW"));
    auto fused = t.run();
    ASSERT_TRUE(fused.ok()) << fused.status().to_string();
    auto plain = conv_or_fused(false)
                     .input(make_tensor<float>({1, 16, 5, 5}, values(400, 1)))
                     .constant_input(make_tensor<float>({16, 16, 1, 1}, values(256, 2)))
                     .run();
    ASSERT_TRUE(plain.ok()) << plain.status().to_string();
    expect_tensor_eq(fused->at(0), plain->at(0));
  }
}

TEST(ConvTest, APlainConvHasNoEpilogue) {
  // The epilogue is FusedConv's: a Conv given its attributes (the test
  // harness lets unknown attributes through) computes a plain Conv.
  auto out = conv_or_fused(false)
                 .input(make_tensor<float>({1, 1, 2, 2}, {-1.0f, 0.5f, 2.0f, -3.0f}))
                 .constant_input(make_tensor<float>({1, 1, 1, 1}, {2.0f}))
                 .attr("activation", "Relu")
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(to_vector<float>(out->at(0)), (std::vector<float>{-2.0f, 1.0f, 4.0f, -6.0f}));
}

TEST(ConvTest, FusedActivation) {
  check_conv({.x = {1, 3, 8, 8}, .m = 4, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true, .activation = "Relu"});
  check_conv({.x = {1, 3, 8, 8}, .m = 4, .kernel = {3, 3}, .bias = true, .activation = "Clip",
              .activation_params = {-0.5f, 1.0f}});
  check_conv({.x = {1, 6, 8, 8}, .m = 6, .kernel = {3, 3}, .group = 6, .activation = "Clip",
              .activation_params = {0.0f, 0.25f}});
  auto bad = conv_or_fused(true)
                 .input(make_tensor<float>({1, 1, 3, 3}, values(9, 1)))
                 .constant_input(make_tensor<float>({1, 1, 1, 1}, {1.0f}))
                 .attr("activation", "Sigmoid")
                 .run();
  EXPECT_FALSE(bad.ok());
}

TEST(ConvTest, MismatchedChannelsIsAnError) {
  auto out = NodeTest("Conv", 11)
                 .dynamic_shapes()
                 .input(make_tensor<float>({1, 3, 4, 4}, values(48, 1)))
                 .input(make_tensor<float>({2, 2, 3, 3}, values(36, 2)))
                 .run();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("channels"), std::string::npos) << out.status().message();
}

TEST(ConvTest, InferenceKeepsSymbolicBatch) {
  Graph g;
  g.opsets[""] = 11;
  const ValueId x = g.add_value("x", ValueType::tensor(DataType::kFloat, {Dim::symbolic("N"), Dim::known(3),
                                                                          Dim::known(224), Dim::unknown()}));
  const ValueId w = g.add_value("w", ValueType::tensor(DataType::kFloat, {Dim::known(64), Dim::known(3), Dim::known(7),
                                                                          Dim::known(7)}));
  const ValueId y = g.add_value("y");
  Node n;
  n.op_type = "Conv";
  n.since_version = 11;
  n.inputs = {x, w};
  n.outputs = {y};
  Attribute strides;
  strides.name = "strides";
  strides.type = AttributeType::kInts;
  strides.ints = {2, 2};
  Attribute pads;
  pads.name = "pads";
  pads.type = AttributeType::kInts;
  pads.ints = {3, 3, 3, 3};
  n.attributes = {strides, pads};
  const OpSchema* schema = find_schema("", "Conv", 11);
  ASSERT_NE(schema, nullptr);
  std::vector<ValueType> outs(1);
  InferenceContext ctx(g, n, outs);
  ASSERT_TRUE(schema->infer(ctx).ok());
  ASSERT_TRUE(outs[0].has_shape);
  ASSERT_EQ(outs[0].rank(), 4u);
  EXPECT_EQ(outs[0].dims[0].symbol, "N");
  EXPECT_EQ(outs[0].dims[1].value, 64);
  EXPECT_EQ(outs[0].dims[2].value, 112);
  EXPECT_FALSE(outs[0].dims[3].is_known());
}

}  // namespace
}  // namespace sy::testing

namespace sy::testing {
namespace {

// 3x3 stride-1 convolutions with enough channels and a large enough map
// take the Winograd F(4x4, 3x3), F(5x5, 3x3) or F(2x2, 3x3) path (conv/winograd.h);
// these hold it to
// the direct reference: maps not a multiple of 4, every padding form, the
// fused activations, several images and threads.
TEST(ConvTest, WinogradMatchesTheDirectConvolution) {
  check_conv({.x = {1, 16, 12, 12}, .m = 16, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true,
              .activation = "Relu", .tolerance_of_max = true});
  check_conv({.x = {2, 24, 14, 13}, .m = 20, .kernel = {3, 3}, .bias = true, .threads = 3, .tolerance_of_max = true});
  check_conv({.x = {1, 16, 13, 15}, .m = 17, .kernel = {3, 3}, .pads = {1, 0, 2, 1}, .activation = "Clip",
              .activation_params = {-1.0f, 2.5f}, .tolerance_of_max = true});
  check_conv({.x = {1, 32, 16, 16}, .m = 16, .kernel = {3, 3}, .auto_pad = "SAME_UPPER", .bias = true, .threads = 2,
              .tolerance_of_max = true});
  check_conv({.x = {1, 64, 28, 28}, .m = 32, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .threads = 2,
              .tolerance_of_max = true});
  // ResNet-50's third stage, F(5x5, 3x3) summing 2304 products per output.
  check_conv({.x = {1, 256, 14, 14}, .m = 256, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true,
              .activation = "Relu", .threads = 2, .tolerance_of_max = true});
  // ResNet-50's first stage: products over 1 MB, so bands of tile rows of
  // 14 tiles; at 1 thread 7 bands of 2, at 2 threads 14 of 1, which share
  // out evenly (balanced_band_rows in winograd.cc).
  check_conv({.x = {1, 64, 56, 56}, .m = 64, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true,
              .activation = "Relu", .threads = 2, .tolerance_of_max = true});
  check_conv({.x = {1, 64, 56, 56}, .m = 64, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .tolerance_of_max = true});
  // The smallest map it takes, ResNet's last stage: F(2x2, 3x3) there, 4 x 4
  // tiles of 2 for 7 x 7 (WinogradConv::tile_for), and on 12 x 12 (9 tiles
  // of 4, so 36 of 2). Tiles are chosen by the output map: the padded
  // 13 x 15 input above (14 x 14 out) and the 256-channel 14 x 14 take
  // F(5x5, 3x3) (9 tiles of 5 rather than 16 of 4), the unpadded 14 x 13
  // (12 x 11 out, 9 tiles of 4) F(2x2, 3x3), 16 x 16 and 28 x 28 F(4x4, 3x3).
  check_conv({.x = {2, 32, 7, 7}, .m = 48, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true,
              .activation = "Relu", .threads = 2, .tolerance_of_max = true});
  check_conv({.x = {1, 40, 7, 9}, .m = 24, .kernel = {3, 3}, .pads = {0, 1, 2, 1}, .activation = "Clip",
              .activation_params = {-1.0f, 2.5f}, .tolerance_of_max = true});
}

// A 7x7 stride-2 stem over few channels takes Winograd F(4x4, 4x4) on the
// space-to-depth phases (conv/winograd.h). Odd maps and asymmetric pads
// put some phases' first or last row outside X; 4 channels fill all 16
// phase lanes.
TEST(ConvTest, StridedWinogradMatchesTheDirectConvolution) {
  check_conv({.x = {1, 3, 40, 36}, .m = 16, .kernel = {7, 7}, .strides = {2, 2}, .pads = {3, 3, 3, 3}, .bias = true,
              .activation = "Relu", .threads = 2, .tolerance_of_max = true});
  check_conv({.x = {2, 4, 37, 41}, .m = 20, .kernel = {7, 7}, .strides = {2, 2}, .pads = {2, 3, 4, 1},
              .activation = "Clip", .activation_params = {-1.0f, 2.5f}, .tolerance_of_max = true});
}

// A 3x3 stride-2 conv with 16 channels and more and an output of 14x14 and
// up takes the phase-split Winograd (conv/winograd.h): tiles of 4 (28x28
// out, ResNet-50's second stage), of 2 (14x14, its third), odd maps and
// every padding, X and Y blocked or not.
TEST(ConvTest, PhaseSplitStrideTwoWinogradMatchesTheDirectConvolution) {
  check_conv({.x = {1, 128, 56, 56}, .m = 128, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1},
              .bias = true, .activation = "Relu", .threads = 2, .tolerance_of_max = true, .blocked_output = true,
              .blocked_input = true});
  check_conv({.x = {1, 256, 28, 28}, .m = 256, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1},
              .bias = true, .activation = "Relu", .threads = 2, .tolerance_of_max = true});
  check_conv({.x = {2, 16, 31, 35}, .m = 20, .kernel = {3, 3}, .strides = {2, 2}, .pads = {0, 1, 2, 1},
              .activation = "Clip", .activation_params = {-1.0f, 2.5f}, .tolerance_of_max = true});
  check_conv({.x = {1, 24, 30, 29}, .m = 17, .kernel = {3, 3}, .strides = {2, 2}, .bias = true, .threads = 3,
              .tolerance_of_max = true});
  check_conv({.x = {1, 32, 40, 44}, .m = 48, .kernel = {3, 3}, .strides = {2, 2}, .auto_pad = "SAME_UPPER",
              .threads = 2, .tolerance_of_max = true, .blocked_output = true});
}

// Maps whose Winograd products exceed 1 MB run in bands of tile rows
// (WinogradConv's Layout), each band on one thread: a stem of 8 bands, the
// last one row, ResNet-50's 56x56 3x3 (7 bands of 2 rows), blocked, and a
// phase-split stride 2 of 15 bands of a row.
TEST(ConvTest, WinogradInBandsMatchesTheDirectConvolution) {
  check_conv({.x = {1, 32, 120, 119}, .m = 32, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 0},
              .bias = true, .threads = 2, .tolerance_of_max = true});
  check_conv({.x = {1, 3, 120, 100}, .m = 32, .kernel = {7, 7}, .strides = {2, 2}, .pads = {3, 3, 3, 3},
              .bias = true, .activation = "Relu", .threads = 2, .tolerance_of_max = true});
  check_conv({.x = {1, 64, 56, 56}, .m = 64, .kernel = {3, 3}, .pads = {1, 1, 1, 1}, .bias = true,
              .activation = "Relu", .threads = 2, .tolerance_of_max = true, .blocked_output = true,
              .blocked_input = true});
  check_conv({.x = {1, 64, 54, 57}, .m = 40, .kernel = {3, 3}, .pads = {0, 1, 1, 2}, .tolerance_of_max = true});
}

}  // namespace
}  // namespace sy::testing
