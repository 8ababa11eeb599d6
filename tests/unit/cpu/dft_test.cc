// DFT against a direct evaluation of the definition in double (a sum over
// the signal per output bin; IRFFT as numpy's irfft formula, the cosine
// series of the one-sided spectrum), over axes, real and complex input,
// forward and inverse, one-sided both ways, dft_length padding and
// truncation (to mixed-radix and Bluestein lengths), opset 17's axis
// attribute and opset 20's axis input, float, double and float16.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "switchyard/session.h"
#include "testing/model_builder.h"
#include "testing/node_test.h"

namespace sy {
namespace {

using testing::make_tensor;
using testing::NodeTest;
using testing::to_vector;
using CD = std::complex<double>;

struct Layout {
  std::vector<int64_t> shape;  // [..., channels]
  int64_t axis = 1;            // normalized
};

int64_t product(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

// exp(sign 2 pi i j k / n), the angle reduced mod n.
CD root(int64_t j, int64_t k, int64_t n, double sign) {
  const double angle = sign * 2 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

// The expected output, flattened like the kernel's.
std::vector<double> reference_dft(const std::vector<double>& x, const Layout& l, int64_t n, bool inverse,
                                  bool onesided) {
  const size_t r = l.shape.size();
  const auto a = static_cast<size_t>(l.axis);
  const int64_t channels = l.shape[r - 1];
  const int64_t len = l.shape[a];
  const int64_t outer = product(l.shape, 0, a);
  const int64_t inner = product(l.shape, a + 1, r - 1);
  const bool irfft = inverse && onesided;
  const int64_t out_len = onesided && !inverse ? n / 2 + 1 : n;
  const int64_t out_channels = irfft ? 1 : 2;
  auto value = [&](int64_t o, int64_t k, int64_t i) -> CD {
    if (k >= len) return 0;
    const size_t at = static_cast<size_t>(((o * len + k) * inner + i) * channels);
    return {x[at], channels == 2 ? x[at + 1] : 0.0};
  };
  std::vector<double> out(static_cast<size_t>(outer * out_len * inner * out_channels));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      for (int64_t t = 0; t < out_len; ++t) {
        const size_t at = static_cast<size_t>(((o * out_len + t) * inner + i) * out_channels);
        if (irfft) {
          // numpy's irfft: X0 + 2 Re(sum of the bins below n/2 turned by
          // their root) + the Nyquist bin's real part (-1)^t, over n.
          double sum = value(o, 0, i).real();
          for (int64_t k = 1; 2 * k < n; ++k) sum += 2 * (value(o, k, i) * root(k, t, n, 1)).real();
          if (n % 2 == 0) sum += value(o, n / 2, i).real() * (t % 2 == 0 ? 1 : -1);
          out[at] = sum / static_cast<double>(n);
          continue;
        }
        CD sum = 0;
        for (int64_t j = 0; j < std::min(len, n); ++j) sum += value(o, j, i) * root(j, t, n, inverse ? 1 : -1);
        if (inverse) sum /= static_cast<double>(n);
        out[at] = sum.real();
        out[at + 1] = sum.imag();
      }
  return out;
}

std::vector<double> signal(int64_t count, int seed) {
  std::vector<double> v(static_cast<size_t>(count));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(static_cast<int>((i * 7 + seed) % 13) - 6) * 0.25;
  return v;
}

std::vector<float> to_float(const std::vector<double>& v) { return {v.begin(), v.end()}; }

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << what << " element " << i;
}

struct Options {
  int64_t n = -1;  // dft_length input; -1: none
  bool inverse = false;
  bool onesided = false;
};

// DFT-17 with the axis attribute.
Result<std::vector<Tensor>> run_dft17(const std::vector<double>& x, const Layout& l, const Options& o,
                                      int threads = 1) {
  NodeTest t("DFT", 17);
  t.input(make_tensor<float>(Shape(l.shape), to_float(x)));
  if (o.n >= 0) t.input(make_tensor<int64_t>({}, {o.n}));
  t.attr("axis", l.axis).attr("inverse", o.inverse ? 1 : 0).attr("onesided", o.onesided ? 1 : 0).threads(threads);
  return t.run();
}

void check_dft17(const std::vector<int64_t>& shape, int64_t axis, const Options& o) {
  const Layout l{shape, axis};
  const std::vector<double> x = signal(product(shape, 0, shape.size()), 3);
  const int64_t n = o.n >= 0 ? o.n : (o.inverse && o.onesided ? 2 * (shape[static_cast<size_t>(axis)] - 1)
                                                               : shape[static_cast<size_t>(axis)]);
  auto out = run_dft17(x, l, o);
  const std::string what = "axis " + std::to_string(axis) + " n " + std::to_string(n) + " channels " +
                           std::to_string(shape.back()) + " inverse " + std::to_string(o.inverse) + " onesided " +
                           std::to_string(o.onesided);
  ASSERT_TRUE(out.ok()) << what << ": " << out.status().to_string();
  expect_close(to_vector<float>(out->at(0)), reference_dft(x, l, n, o.inverse, o.onesided), 2e-5, what);
}

TEST(DftKernel, ForwardAndInverseAlongEachAxis) {
  for (int64_t channels : {1, 2})
    for (int64_t axis : {0, 1, 2})
      for (bool inverse : {false, true}) check_dft17({4, 3, 5, channels}, axis, {-1, inverse, false});
}

TEST(DftKernel, OnesidedForwardKeepsHalfTheBins) {
  for (int64_t len : {7, 8})
    for (int64_t channels : {1, 2}) check_dft17({2, len, channels}, 1, {-1, false, true});
  auto out = run_dft17(signal(16, 1), {{2, 8, 1}, 1}, {-1, false, true});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{2, 5, 2}));
}

TEST(DftKernel, DftLengthPadsAndTruncates) {
  // Longer than the signal (zero-padded) and shorter (cut), to lengths
  // with small factors (12, 6), a prime needing Bluestein (37) and a
  // prime the generic radix takes (7).
  for (int64_t n : {12, 6, 37, 7}) {
    check_dft17({3, 10, 2}, 1, {n, false, false});
    check_dft17({3, 10, 1}, 1, {n, true, false});
    check_dft17({3, 10, 1}, 1, {n, false, true});
  }
}

TEST(DftKernel, IrfftGivesTheRealSignal) {
  // Bins X0 = 4, X1 = 1 + i, X2 = 2 + 5i of a length-4 signal: y[t] =
  // (4 + 2 Re((1 + i) i^t) + 2 (-1)^t) / 4, the Nyquist bin's imaginary part
  // ignored.
  auto out = NodeTest("DFT", 17)
                 .input(make_tensor<float>({1, 3, 2}, {4, 0, 1, 1, 2, 5}))
                 .attr("inverse", 1)
                 .attr("onesided", 1)
                 .run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->at(0).shape(), (Shape{1, 4, 1}));
  expect_close(to_vector<float>(out->at(0)), {2, 0, 1, 1}, 1e-6, "hand-computed irfft");
  // Odd and even lengths, bins cut (n = 6 from 5 bins) and padded (n = 12
  // from 3), and from a real input (imaginary parts zero).
  check_dft17({2, 5, 2}, 1, {-1, true, true});
  check_dft17({2, 5, 2}, 1, {9, true, true});
  check_dft17({2, 5, 2}, 1, {6, true, true});
  check_dft17({2, 3, 2}, 1, {12, true, true});
  check_dft17({2, 4, 1}, 1, {-1, true, true});
}

TEST(DftKernel, RfftThenIrfftRoundTrips) {
  const std::vector<double> x = signal(2 * 11, 5);
  auto spectrum = run_dft17(x, {{2, 11, 1}, 1}, {-1, false, true});
  ASSERT_TRUE(spectrum.ok()) << spectrum.status().to_string();
  auto back = NodeTest("DFT", 17)
                  .input(spectrum->at(0))
                  .input(make_tensor<int64_t>({}, {11}))
                  .attr("inverse", 1)
                  .attr("onesided", 1)
                  .run();
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  expect_close(to_vector<float>(back->at(0)), x, 1e-5, "round trip");
}

TEST(DftKernel, Opset20TakesTheAxisAsAnInput) {
  const std::vector<int64_t> shape = {2, 6, 3, 2};
  const std::vector<double> x = signal(product(shape, 0, 4), 2);
  // Default -2: the last signal axis.
  auto out = NodeTest("DFT", 20).input(make_tensor<float>(Shape(shape), to_float(x))).run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_close(to_vector<float>(out->at(0)), reference_dft(x, {shape, 2}, 3, false, false), 2e-5, "axis -2");
  for (int64_t axis : {1, -3, 0, -4}) {
    auto o = NodeTest("DFT", 20)
                 .input(make_tensor<float>(Shape(shape), to_float(x)))
                 .input(make_tensor<int32_t>({}, {8}))
                 .input(make_tensor<int64_t>({}, {axis}))
                 .attr("inverse", 1)
                 .run();
    ASSERT_TRUE(o.ok()) << o.status().to_string();
    expect_close(to_vector<float>(o->at(0)), reference_dft(x, {shape, axis < 0 ? axis + 4 : axis}, 8, true, false),
                 2e-5, "axis " + std::to_string(axis));
  }
}

TEST(DftKernel, DoubleAndFloat16) {
  const std::vector<double> x = signal(2 * 9 * 2, 4);
  auto d = NodeTest("DFT", 17).input(make_tensor<double>({2, 9, 2}, x)).run();
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  const std::vector<double> want = reference_dft(x, {{2, 9, 2}, 1}, 9, false, false);
  const std::vector<double> got = to_vector<double>(d->at(0));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;

  Tensor h = Tensor::allocate(DataType::kFloat16, Shape{2, 9, 2}).value();
  for (size_t i = 0; i < x.size(); ++i) h.data<Float16>()[i] = Float16{float_to_float16(static_cast<float>(x[i]))};
  auto o = NodeTest("DFT", 17).input(h).run();
  ASSERT_TRUE(o.ok()) << o.status().to_string();
  ASSERT_EQ(o->at(0).dtype(), DataType::kFloat16);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(float16_to_float(o->at(0).data<Float16>()[i].bits), want[i], 1e-2 * (1 + std::abs(want[i]))) << i;
}

// Many lines of a long, Bluestein-length (2 * 101) signal on two threads.
TEST(DftKernel, ManyLinesOnThreads) {
  const std::vector<int64_t> shape = {40, 202, 2};
  const std::vector<double> x = signal(product(shape, 0, 3), 6);
  auto out = run_dft17(x, {shape, 1}, {}, 2);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_close(to_vector<float>(out->at(0)), reference_dft(x, {shape, 1}, 202, false, false), 1e-4, "threads");
}

// A session runs the node twice with the same shapes and other dft_length
// values: the plan prepared for the first length must not serve the
// second.
TEST(DftKernel, NewLengthUnderTheSameShapes) {
  testing::ModelBuilder b(17);
  b.input("x", DataType::kFloat, {2, 8, 2});
  b.input("n", DataType::kInt64, {});
  b.node("DFT", {"x", "n"}, {"y"}, {});
  b.output_without_shape("y", DataType::kFloat);
  const std::string bytes = b.build();
  auto session = Session::create_from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  const std::vector<double> x = signal(32, 7);
  for (int64_t n : {8, 5, 16, 8}) {
    auto r = (*session)->run({{"x", make_tensor<float>({2, 8, 2}, to_float(x))}, {"n", make_tensor<int64_t>({}, {n})}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    expect_close(to_vector<float>((*r)[0]), reference_dft(x, {{2, 8, 2}, 1}, n, false, false), 2e-5,
                 "n " + std::to_string(n));
  }
}

TEST(DftKernel, StaticOutputShapeFromConstants) {
  NodeTest t("DFT", 17);
  t.input(make_tensor<float>({2, 10, 3, 1}, std::vector<float>(60, 1.0f)))
      .constant_input(make_tensor<int64_t>({}, {16}))
      .attr("axis", 1)
      .attr("onesided", 1);
  auto out = t.run();
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(t.graph().values[static_cast<size_t>(t.graph().outputs[0])].type.shape_string(), "[2,9,3,2]");
  EXPECT_EQ(out->at(0).shape(), (Shape{2, 9, 3, 2}));
}

TEST(DftKernel, RejectsBadAxesShapesAndLengths) {
  const Tensor x = make_tensor<float>({2, 4, 2}, std::vector<float>(16, 1.0f));
  EXPECT_FALSE(NodeTest("DFT", 17).input(x).attr("axis", 2).run().ok());   // the complex dim
  EXPECT_FALSE(NodeTest("DFT", 17).input(x).attr("axis", -1).run().ok());  // the same
  EXPECT_FALSE(NodeTest("DFT", 17).input(x).attr("axis", -4).run().ok());
  EXPECT_FALSE(NodeTest("DFT", 17).input(x).attr("inverse", 2).run().ok());
  EXPECT_FALSE(NodeTest("DFT", 17).input(x).input(make_tensor<int64_t>({}, {0})).run().ok());
  EXPECT_FALSE(NodeTest("DFT", 17).input(x).input(make_tensor<int64_t>({}, {-3})).run().ok());
  EXPECT_FALSE(NodeTest("DFT", 17).input(x).input(make_tensor<int64_t>({2}, {4, 4})).run().ok());
  EXPECT_FALSE(NodeTest("DFT", 17).input(make_tensor<float>({2, 4, 3}, std::vector<float>(24))).run().ok());
  EXPECT_FALSE(NodeTest("DFT", 17).input(make_tensor<float>({4}, std::vector<float>(4))).run().ok());
  // IRFFT of one bin defaults to length 0.
  EXPECT_FALSE(NodeTest("DFT", 17)
                   .input(make_tensor<float>({2, 1, 2}, std::vector<float>(4)))
                   .attr("inverse", 1)
                   .attr("onesided", 1)
                   .run()
                   .ok());
  EXPECT_FALSE(NodeTest("DFT", 20).input(x).missing_input().input(make_tensor<int64_t>({}, {2})).run().ok());
}

}  // namespace
}  // namespace sy
