// RoiAlign against a ramp image, where bilinear sampling is exact and the
// average of a bin's symmetric sample grid is the ramp at the bin's centre,
// and against a per-sample reference loop written here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "testing/node_test.h"

namespace sy::testing {
namespace {

struct RoiCase {
  std::string mode = "avg";
  std::string ctm = "half_pixel";
  int64_t out_h = 3, out_w = 4;
  int64_t sampling_ratio = 2;
  float scale = 1.0f;
};

Result<std::vector<Tensor>> run_roi_align(const Tensor& x, const std::vector<float>& rois,
                                          const std::vector<int64_t>& batch, const RoiCase& c, int threads = 1) {
  const auto n = static_cast<int64_t>(batch.size());
  return NodeTest("RoiAlign", 16)
      .input(x)
      .input(make_tensor<float>({n, 4}, rois))
      .input(make_tensor<int64_t>({n}, batch))
      .attr("mode", c.mode)
      .attr("coordinate_transformation_mode", c.ctm)
      .attr("output_height", c.out_h)
      .attr("output_width", c.out_w)
      .attr("sampling_ratio", c.sampling_ratio)
      .attr("spatial_scale", c.scale)
      .threads(threads)
      .run();
}

TEST(RoiAlign, AverageOfARampIsTheRampAtBinCentres) {
  // f(y, x) = 10 y + x on a 12 x 12 map; RoIs well inside it.
  std::vector<float> ramp;
  for (int y = 0; y < 12; ++y)
    for (int x = 0; x < 12; ++x) ramp.push_back(static_cast<float>(10 * y + x));
  const Tensor x = make_tensor<float>({1, 1, 12, 12}, ramp);
  const std::vector<float> rois = {2, 3, 8, 9, 1.5f, 2.5f, 9.25f, 7.75f};  // [x1, y1, x2, y2]
  for (const char* ctm : {"half_pixel", "output_half_pixel"})
    for (int64_t ratio : {0, 1, 2, 3}) {
      RoiCase c;
      c.ctm = ctm;
      c.sampling_ratio = ratio;
      auto out = run_roi_align(x, rois, {0, 0}, c);
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      const std::vector<float> got = to_vector<float>(out->at(0));
      const double offset = std::string(ctm) == "half_pixel" ? 0.5 : 0.0;
      for (int r = 0; r < 2; ++r) {
        const double x1 = rois[r * 4] - offset, y1 = rois[r * 4 + 1] - offset;
        const double bin_w = (rois[r * 4 + 2] - rois[r * 4]) / 4.0, bin_h = (rois[r * 4 + 3] - rois[r * 4 + 1]) / 3.0;
        for (int ph = 0; ph < 3; ++ph)
          for (int pw = 0; pw < 4; ++pw) {
            const double cy = y1 + (ph + 0.5) * bin_h, cx = x1 + (pw + 0.5) * bin_w;
            EXPECT_NEAR(got[static_cast<size_t>((r * 3 + ph) * 4 + pw)], 10 * cy + cx, 1e-4)
                << ctm << " ratio " << ratio << " roi " << r << " bin " << ph << "," << pw;
          }
      }
    }
}

// The four weighted corner terms of one sample, the reference's way.
void corner_terms(const float* plane, int64_t h, int64_t w, double y, double x, double t[4]) {
  t[0] = t[1] = t[2] = t[3] = 0;
  if (y < -1 || y > static_cast<double>(h) || x < -1 || x > static_cast<double>(w)) return;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  auto y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x);
  int64_t y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= h - 1) y = static_cast<double>(y0 = y1 = h - 1);
  if (x0 >= w - 1) x = static_cast<double>(x0 = x1 = w - 1);
  const double ly = y - static_cast<double>(y0), lx = x - static_cast<double>(x0);
  t[0] = (1 - ly) * (1 - lx) * plane[y0 * w + x0];
  t[1] = (1 - ly) * lx * plane[y0 * w + x1];
  t[2] = ly * (1 - lx) * plane[y1 * w + x0];
  t[3] = ly * lx * plane[y1 * w + x1];
}

std::vector<double> reference(const std::vector<float>& x, const std::vector<int64_t>& xs,
                              const std::vector<float>& rois, const std::vector<int64_t>& batch, const RoiCase& c) {
  std::vector<double> y;
  const double offset = c.ctm == "half_pixel" ? 0.5 : 0.0;
  for (size_t r = 0; r < batch.size(); ++r) {
    const double x1 = rois[r * 4] * c.scale - offset, y1 = rois[r * 4 + 1] * c.scale - offset;
    double rw = rois[r * 4 + 2] * c.scale - offset - x1, rh = rois[r * 4 + 3] * c.scale - offset - y1;
    if (c.ctm != "half_pixel") {
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    const double bh = rh / static_cast<double>(c.out_h), bw = rw / static_cast<double>(c.out_w);
    const int64_t gh = c.sampling_ratio > 0 ? c.sampling_ratio : static_cast<int64_t>(std::ceil(bh));
    const int64_t gw = c.sampling_ratio > 0 ? c.sampling_ratio : static_cast<int64_t>(std::ceil(bw));
    for (int64_t ch = 0; ch < xs[1]; ++ch) {
      const float* plane = x.data() + (batch[r] * xs[1] + ch) * xs[2] * xs[3];
      for (int64_t ph = 0; ph < c.out_h; ++ph)
        for (int64_t pw = 0; pw < c.out_w; ++pw) {
          double sum = 0, best = 0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; ++iy)
            for (int64_t ix = 0; ix < gw; ++ix) {
              double t[4];
              corner_terms(plane, xs[2], xs[3], y1 + ph * bh + (iy + 0.5) * bh / static_cast<double>(gh),
                           x1 + pw * bw + (ix + 0.5) * bw / static_cast<double>(gw), t);
              sum += t[0] + t[1] + t[2] + t[3];
              const double m = std::max(std::max(t[0], t[1]), std::max(t[2], t[3]));
              best = first ? m : std::max(best, m);
              first = false;
            }
          y.push_back(c.mode == "max" ? best : sum / static_cast<double>(std::max<int64_t>(gh * gw, 1)));
        }
    }
  }
  return y;
}

TEST(RoiAlign, MatchesTheReferenceLoop) {
  const std::vector<int64_t> xs = {2, 3, 8, 9};
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> value(-2, 2), coord(-4, 22);
  std::vector<float> x(2 * 3 * 8 * 9);
  for (float& v : x) v = value(gen);
  // Scaled by 0.5 onto the map: some RoIs inside, some across the edge,
  // some outside, some inverted (malformed).
  std::vector<float> rois;
  std::vector<int64_t> batch;
  for (int r = 0; r < 12; ++r) {
    rois.insert(rois.end(), {coord(gen), coord(gen), coord(gen), coord(gen)});
    if (r % 3 == 0) std::sort(rois.end() - 4, rois.end());
    batch.push_back(r % 2);
  }
  for (const char* mode : {"avg", "max"})
    for (const char* ctm : {"half_pixel", "output_half_pixel"})
      for (int64_t ratio : {0, 1, 3}) {
        RoiCase c;
        c.mode = mode;
        c.ctm = ctm;
        c.sampling_ratio = ratio;
        c.scale = 0.5f;
        auto out = run_roi_align(make_tensor<float>({2, 3, 8, 9}, x), rois, batch, c, 2);
        ASSERT_TRUE(out.ok()) << out.status().to_string();
        ASSERT_EQ(out->at(0).shape(), Shape({12, 3, 3, 4}));
        const std::vector<double> want = reference(x, xs, rois, batch, c);
        const std::vector<float> got = to_vector<float>(out->at(0));
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_NEAR(got[i], want[i], 1e-4) << mode << " " << ctm << " ratio " << ratio << " at " << i;
      }
}

TEST(RoiAlign, Opset10IsOutputHalfPixelAndDoubleWorks) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const std::vector<float> rois = {0.3f, 0.6f, 2.9f, 3.1f};
  auto v10 = NodeTest("RoiAlign", 10)
                 .input(make_tensor<float>({1, 1, 4, 4}, x))
                 .input(make_tensor<float>({1, 4}, rois))
                 .input(make_tensor<int64_t>({1}, {0}))
                 .attr("output_height", 2)
                 .attr("output_width", 2)
                 .run();
  ASSERT_TRUE(v10.ok()) << v10.status().to_string();
  RoiCase c;
  c.ctm = "output_half_pixel";
  c.out_h = c.out_w = 2;
  c.sampling_ratio = 0;
  const std::vector<double> want = reference(x, {1, 1, 4, 4}, rois, {0}, c);
  expect_tensor_near(v10->at(0), make_tensor<float>({1, 1, 2, 2}, std::vector<float>(want.begin(), want.end())));
  auto dbl = NodeTest("RoiAlign", 22)
                 .input(make_tensor<double>({1, 1, 4, 4}, std::vector<double>(x.begin(), x.end())))
                 .input(make_tensor<double>({1, 4}, std::vector<double>(rois.begin(), rois.end())))
                 .input(make_tensor<int64_t>({1}, {0}))
                 .attr("coordinate_transformation_mode", "output_half_pixel")
                 .attr("output_height", 2)
                 .attr("output_width", 2)
                 .run();
  ASSERT_TRUE(dbl.ok()) << dbl.status().to_string();
  expect_tensor_near(dbl->at(0), make_tensor<double>({1, 1, 2, 2}, want), 1e-6, 1e-6);
}

TEST(RoiAlign, BadInputsAreErrors) {
  const Tensor x = make_tensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  RoiCase c;
  EXPECT_FALSE(run_roi_align(x, {0, 0, 1, 1}, {1}, c).ok());   // batch index past N
  EXPECT_FALSE(run_roi_align(x, {0, 0, 1, 1}, {-1}, c).ok());  // negative batch index
  c.mode = "sum";
  EXPECT_FALSE(run_roi_align(x, {0, 0, 1, 1}, {0}, c).ok());
  c.mode = "avg";
  c.ctm = "align_corners";
  EXPECT_FALSE(run_roi_align(x, {0, 0, 1, 1}, {0}, c).ok());
  // An adaptive grid for a RoI of absurd size is refused, not attempted.
  c.ctm = "half_pixel";
  c.sampling_ratio = 0;
  EXPECT_FALSE(run_roi_align(x, {0, 0, 1e30f, 1e30f}, {0}, c).ok());
  // rois of 3 columns.
  EXPECT_FALSE(NodeTest("RoiAlign", 16)
                   .input(x)
                   .input(make_tensor<float>({1, 3}, {0, 0, 1}))
                   .input(make_tensor<int64_t>({1}, {0}))
                   .run()
                   .ok());
}

}  // namespace
}  // namespace sy::testing
