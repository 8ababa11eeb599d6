// DeformConv against Conv (zero offsets, no mask: the two are the same
// op) and against a direct per-output reference loop written here with
// fractional offsets, masks, groups and offset groups.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "testing/node_test.h"
#include "testing/test_values.h"

namespace sy::testing {
namespace {

struct Spec {
  int64_t n = 2, c = 4, h = 7, w = 6, oc = 6;
  int64_t kh = 3, kw = 2;
  int64_t group = 2, offset_group = 2;
  std::vector<int64_t> strides = {1, 1}, dilations = {1, 1}, pads = {0, 0, 0, 0};
  int64_t out_h() const { return (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) / strides[0] + 1; }
  int64_t out_w() const { return (w + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) / strides[1] + 1; }
};

// Bilinear sample of one plane at (y, x), zero outside, written as the
// sum over the four neighbours of (1 - |dy|)(1 - |dx|) * pixel.
double sample(const float* plane, int64_t h, int64_t w, double y, double x) {
  double sum = 0;
  const auto y0 = static_cast<int64_t>(std::floor(y)), x0 = static_cast<int64_t>(std::floor(x));
  for (int64_t yy = y0; yy <= y0 + 1; ++yy)
    for (int64_t xx = x0; xx <= x0 + 1; ++xx)
      if (yy >= 0 && yy < h && xx >= 0 && xx < w)
        sum += (1 - std::fabs(y - static_cast<double>(yy))) * (1 - std::fabs(x - static_cast<double>(xx))) *
               plane[yy * w + xx];
  return sum;
}

std::vector<double> reference(const Spec& s, const std::vector<float>& x, const std::vector<float>& wt,
                              const std::vector<float>& offset, const std::vector<float>* bias,
                              const std::vector<float>* mask) {
  const int64_t oh = s.out_h(), ow = s.out_w(), taps = s.kh * s.kw;
  const int64_t icg = s.c / s.group, ocg = s.oc / s.group, icog = s.c / s.offset_group;
  std::vector<double> y;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t o = 0; o < s.oc; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = bias != nullptr ? (*bias)[static_cast<size_t>(o)] : 0.0;
          const int64_t g = o / ocg;
          for (int64_t icl = 0; icl < icg; ++icl) {
            const int64_t ic = g * icg + icl, og = ic / icog;
            for (int64_t a = 0; a < s.kh; ++a)
              for (int64_t b = 0; b < s.kw; ++b) {
                const int64_t t = og * taps + a * s.kw + b;
                auto at = [&](const std::vector<float>& v, int64_t channel, int64_t channels) {
                  return static_cast<double>(v[static_cast<size_t>(((n * channels + channel) * oh + i) * ow + j)]);
                };
                const double dy = at(offset, 2 * t, 2 * s.offset_group * taps);
                const double dx = at(offset, 2 * t + 1, 2 * s.offset_group * taps);
                const double m = mask != nullptr ? at(*mask, t, s.offset_group * taps) : 1.0;
                const double yy = static_cast<double>(i * s.strides[0] - s.pads[0] + a * s.dilations[0]) + dy;
                const double xx = static_cast<double>(j * s.strides[1] - s.pads[1] + b * s.dilations[1]) + dx;
                const double wv = wt[static_cast<size_t>(((o * icg + icl) * s.kh + a) * s.kw + b)];
                acc += wv * m * sample(x.data() + (n * s.c + ic) * s.h * s.w, s.h, s.w, yy, xx);
              }
          }
          y.push_back(acc);
        }
  return y;
}

NodeTest deform(const Spec& s, const std::vector<float>& x, const std::vector<float>& wt,
                const std::vector<float>& offset) {
  NodeTest t("DeformConv", 22);
  t.input(make_tensor<float>({s.n, s.c, s.h, s.w}, x))
      .input(make_tensor<float>({s.oc, s.c / s.group, s.kh, s.kw}, wt))
      .input(make_tensor<float>({s.n, 2 * s.offset_group * s.kh * s.kw, s.out_h(), s.out_w()}, offset))
      .attr("group", s.group)
      .attr("offset_group", s.offset_group)
      .attr("strides", s.strides)
      .attr("dilations", s.dilations)
      .attr("pads", s.pads);
  return t;
}

TEST(DeformConv, ZeroOffsetsIsConv) {
  Spec s;
  s.strides = {2, 1};
  s.dilations = {1, 2};
  s.pads = {1, 0, 2, 1};
  const std::vector<float> x = random_uniform<float>(static_cast<size_t>(s.n * s.c * s.h * s.w), -1, 1, 1);
  const std::vector<float> wt =
      random_uniform<float>(static_cast<size_t>(s.oc * (s.c / s.group) * s.kh * s.kw), -1, 1, 2);
  const std::vector<float> zero(static_cast<size_t>(s.n * 2 * s.offset_group * s.kh * s.kw * s.out_h() * s.out_w()));
  auto got = deform(s, x, wt, zero).run();
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  auto conv = NodeTest("Conv", 11)
                  .input(make_tensor<float>({s.n, s.c, s.h, s.w}, x))
                  .input(make_tensor<float>({s.oc, s.c / s.group, s.kh, s.kw}, wt))
                  .attr("group", s.group)
                  .attr("strides", s.strides)
                  .attr("dilations", s.dilations)
                  .attr("pads", s.pads)
                  .run();
  ASSERT_TRUE(conv.ok()) << conv.status().to_string();
  expect_tensor_near(got->at(0), conv->at(0), 1e-5, 1e-5);
}

TEST(DeformConv, FractionalOffsetsMaskAndBiasMatchTheReference) {
  for (int threads : {1, 2}) {
    Spec s;
    s.strides = {1, 2};
    s.dilations = {2, 1};
    s.pads = {1, 1, 0, 1};
    const std::vector<float> x = random_uniform<float>(static_cast<size_t>(s.n * s.c * s.h * s.w), -1, 1, 3);
    const std::vector<float> wt =
        random_uniform<float>(static_cast<size_t>(s.oc * (s.c / s.group) * s.kh * s.kw), -1, 1, 4);
    const int64_t positions = s.out_h() * s.out_w(), taps = s.offset_group * s.kh * s.kw;
    // Offsets up to 3 pixels: many samples straddle the border.
    const std::vector<float> offset = random_uniform<float>(static_cast<size_t>(s.n * 2 * taps * positions), -3, 3, 5);
    const std::vector<float> mask = random_uniform<float>(static_cast<size_t>(s.n * taps * positions), 0, 1, 6);
    const std::vector<float> bias = random_uniform<float>(static_cast<size_t>(s.oc), -1, 1, 7);
    NodeTest t = deform(s, x, wt, offset);
    t.input(make_tensor<float>({s.oc}, bias)).input(make_tensor<float>({s.n, taps, s.out_h(), s.out_w()}, mask));
    auto got = t.threads(threads).run();
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    const std::vector<double> want = reference(s, x, wt, offset, &bias, &mask);
    const std::vector<float> g = to_vector<float>(got->at(0));
    ASSERT_EQ(g.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(g[i], want[i], 1e-4) << i;
    // Without bias and mask (an omitted B before a given mask, too).
    auto plain = deform(s, x, wt, offset).threads(threads).run();
    ASSERT_TRUE(plain.ok()) << plain.status().to_string();
    const std::vector<double> want_plain = reference(s, x, wt, offset, nullptr, nullptr);
    const std::vector<float> p = to_vector<float>(plain->at(0));
    for (size_t i = 0; i < want_plain.size(); ++i) ASSERT_NEAR(p[i], want_plain[i], 1e-4) << i;
    NodeTest masked = deform(s, x, wt, offset);
    masked.missing_input().input(make_tensor<float>({s.n, taps, s.out_h(), s.out_w()}, mask));
    auto m = masked.run();
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    const std::vector<double> want_masked = reference(s, x, wt, offset, nullptr, &mask);
    const std::vector<float> mv = to_vector<float>(m->at(0));
    for (size_t i = 0; i < want_masked.size(); ++i) ASSERT_NEAR(mv[i], want_masked[i], 1e-4) << i;
  }
}

TEST(DeformConv, DoubleAndFloat16) {
  Spec s;
  s.n = 1;
  s.group = 1;
  s.offset_group = 1;
  s.c = 2;
  s.oc = 3;
  const std::vector<float> x = random_uniform<float>(static_cast<size_t>(s.c * s.h * s.w), -1, 1, 8);
  const std::vector<float> wt = random_uniform<float>(static_cast<size_t>(s.oc * s.c * s.kh * s.kw), -1, 1, 9);
  const std::vector<float> offset =
      random_uniform<float>(static_cast<size_t>(2 * s.kh * s.kw * s.out_h() * s.out_w()), -2, 2, 10);
  const std::vector<double> want = reference(s, x, wt, offset, nullptr, nullptr);
  auto as_double = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
  auto got = NodeTest("DeformConv", 19)
                 .input(make_tensor<double>({1, s.c, s.h, s.w}, as_double(x)))
                 .input(make_tensor<double>({s.oc, s.c, s.kh, s.kw}, as_double(wt)))
                 .input(make_tensor<double>({1, 2 * s.kh * s.kw, s.out_h(), s.out_w()}, as_double(offset)))
                 .run();
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  expect_tensor_near(got->at(0), make_tensor<double>({1, s.oc, s.out_h(), s.out_w()}, want), 1e-9, 1e-9);

  auto half = [](const std::vector<float>& v, const Shape& shape, std::vector<float>& rounded) {
    Tensor t = Tensor::allocate(DataType::kFloat16, shape).value();
    rounded.resize(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      t.data<uint16_t>()[i] = float_to_float16(v[i]);
      rounded[i] = float16_to_float(t.data<uint16_t>()[i]);
    }
    return t;
  };
  std::vector<float> xr, wr, orr;
  Tensor hx = half(x, Shape({1, s.c, s.h, s.w}), xr);
  Tensor hw = half(wt, Shape({s.oc, s.c, s.kh, s.kw}), wr);
  Tensor ho = half(offset, Shape({1, 2 * s.kh * s.kw, s.out_h(), s.out_w()}), orr);
  auto h = NodeTest("DeformConv", 22).input(hx).input(hw).input(ho).run();
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  const std::vector<double> want16 = reference(s, xr, wr, orr, nullptr, nullptr);
  for (size_t i = 0; i < want16.size(); ++i)
    EXPECT_NEAR(float16_to_float(h->at(0).data<uint16_t>()[i]), want16[i], 1e-2) << i;
}

TEST(DeformConv, BadShapesAreErrors) {
  Spec s;
  const std::vector<float> x(static_cast<size_t>(s.n * s.c * s.h * s.w), 1.0f);
  const std::vector<float> wt(static_cast<size_t>(s.oc * (s.c / s.group) * s.kh * s.kw), 1.0f);
  const int64_t taps = s.offset_group * s.kh * s.kw;
  // offset with one channel too few.
  EXPECT_FALSE(NodeTest("DeformConv", 22)
                   .input(make_tensor<float>({s.n, s.c, s.h, s.w}, x))
                   .input(make_tensor<float>({s.oc, s.c / s.group, s.kh, s.kw}, wt))
                   .input(make_tensor<float>(
                       {s.n, 2 * taps - 1, s.out_h(), s.out_w()},
                       std::vector<float>(static_cast<size_t>(s.n * (2 * taps - 1) * s.out_h() * s.out_w()))))
                   .attr("group", s.group)
                   .attr("offset_group", s.offset_group)
                   .run()
                   .ok());
  // C = 4 is not divisible by offset_group 3.
  Spec bad = s;
  bad.offset_group = 3;
  const std::vector<float> off(static_cast<size_t>(s.n * 2 * 3 * s.kh * s.kw * s.out_h() * s.out_w()));
  EXPECT_FALSE(deform(bad, x, wt, off).run().ok());
  // W's channels disagree with X's and group.
  Spec wrong_group = s;
  wrong_group.group = 1;
  const std::vector<float> off2(static_cast<size_t>(s.n * 2 * taps * s.out_h() * s.out_w()));
  EXPECT_FALSE(NodeTest("DeformConv", 22)
                   .input(make_tensor<float>({s.n, s.c, s.h, s.w}, x))
                   .input(make_tensor<float>({s.oc, s.c / s.group, s.kh, s.kw}, wt))
                   .input(make_tensor<float>({s.n, 2 * taps, s.out_h(), s.out_w()}, off2))
                   .attr("offset_group", s.offset_group)
                   .run()
                   .ok());
  // 3-D images are not implemented.
  EXPECT_FALSE(NodeTest("DeformConv", 22)
                   .input(make_tensor<float>({1, 1, 2, 2, 2}, std::vector<float>(8, 1.0f)))
                   .input(make_tensor<float>({1, 1, 1, 1, 1}, {1.0f}))
                   .input(make_tensor<float>({1, 3, 2, 2, 2}, std::vector<float>(24, 0.0f)))
                   .run()
                   .ok());
}

}  // namespace
}  // namespace sy::testing
