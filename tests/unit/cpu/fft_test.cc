// The FFT plans against a naive O(n^2) DFT in double, for mixed-radix
// lengths (every length to 64, powers of two to 4096, products of 3, 5, 7
// and the generic radices) and Bluestein lengths (primes above 31 and
// lengths with such a factor), in float and double.
#include "providers/cpu/fft.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <memory>
#include <numbers>
#include <random>
#include <vector>

namespace sy::cpu {
namespace {

using CD = std::complex<double>;

// X[k] = sum_j x[j] exp(-2 pi i j k / n), with j k reduced mod n so that
// the angle is accurate for every term.
std::vector<CD> naive_dft(const std::vector<CD>& x) {
  const auto n = static_cast<int64_t>(x.size());
  std::vector<CD> roots(x.size());
  for (int64_t r = 0; r < n; ++r) {
    const double angle = -2 * std::numbers::pi * static_cast<double>(r) / static_cast<double>(n);
    roots[static_cast<size_t>(r)] = CD(std::cos(angle), std::sin(angle));
  }
  std::vector<CD> out(x.size());
  for (int64_t k = 0; k < n; ++k) {
    CD sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += x[static_cast<size_t>(j)] * roots[static_cast<size_t>((j * k) % n)];
    out[static_cast<size_t>(k)] = sum;
  }
  return out;
}

std::vector<CD> random_signal(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<CD> x(static_cast<size_t>(n));
  for (CD& v : x) v = CD(dist(gen), dist(gen));
  return x;
}

// The largest error over the largest reference magnitude.
template <typename T>
double relative_error(int64_t n, unsigned seed) {
  const std::vector<CD> x = random_signal(n, seed);
  const std::vector<CD> expected = naive_dft(x);
  std::vector<std::complex<T>> data(x.size());
  for (size_t i = 0; i < x.size(); ++i) data[i] = std::complex<T>(x[i]);
  auto owned = OwnedFftPlan<T>::create(n);
  EXPECT_TRUE(owned.ok()) << owned.status().to_string();
  if (!owned.ok()) return 1;
  std::vector<std::complex<T>> work(static_cast<size_t>(FftPlan<T>::work_size(n)));
  (*owned)->plan().forward(data.data(), work.data());
  double max_error = 0;
  double max_value = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    max_error = std::max(max_error, std::abs(CD(data[i]) - expected[i]));
    max_value = std::max(max_value, std::abs(expected[i]));
  }
  return max_error / max_value;
}

std::vector<int64_t> test_lengths() {
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 64; ++n) lengths.push_back(n);
  for (int64_t n = 128; n <= 4096; n *= 2) lengths.push_back(n);
  // Mixed radices (243 = 3^5, 625 = 5^4, 1001 = 7 11 13, 899 = 29 31,
  // 4095 = 3^2 5 7 13) and Bluestein lengths (primes, 74 = 2 37,
  // 4097 = 17 241, 1000 = 2^3 5^3 is mixed).
  for (int64_t n : {96, 97, 100, 127, 243, 625, 899, 1000, 1001, 1009, 74, 4095, 4097}) lengths.push_back(n);
  return lengths;
}

TEST(FftPlan, DoubleMatchesNaiveDft) {
  for (int64_t n : test_lengths()) EXPECT_LT(relative_error<double>(n, 1), 1e-13) << "n " << n;
}

TEST(FftPlan, FloatMatchesNaiveDft) {
  for (int64_t n : test_lengths()) EXPECT_LT(relative_error<float>(n, 2), 2e-6) << "n " << n;
}

std::unique_ptr<OwnedFftPlan<double>> owned_plan(int64_t n) {
  auto owned = OwnedFftPlan<double>::create(n);
  EXPECT_TRUE(owned.ok()) << owned.status().to_string();
  return std::move(owned).value();
}

TEST(FftPlan, BluesteinOnlyForLargePrimeFactors) {
  EXPECT_FALSE(owned_plan(4096)->plan().uses_bluestein());
  EXPECT_FALSE(owned_plan(899)->plan().uses_bluestein());  // 29 31: generic radices
  EXPECT_FALSE(owned_plan(1)->plan().uses_bluestein());
  EXPECT_TRUE(owned_plan(37)->plan().uses_bluestein());
  EXPECT_TRUE(owned_plan(1009)->plan().uses_bluestein());
  EXPECT_TRUE(owned_plan(74)->plan().uses_bluestein());
  EXPECT_EQ(FftPlan<double>::table_size(1009), 2048 + 1009 + 2048);
  EXPECT_EQ(FftPlan<double>::work_size(1009), 2 * 2048);
  EXPECT_EQ(FftPlan<double>::table_size(1000), 1000);
}

// Tables beyond what a tensor may hold are an error, not an exception.
TEST(FftPlan, TooLongIsAnError) {
  EXPECT_FALSE(OwnedFftPlan<double>::create(kMaxFftLength - 1).ok());  // Bluestein: 5 * 2^36 complex numbers
}

// A plan in caller memory (as kernels make in scratch) runs many signals,
// and its work buffer may hold anything beforehand.
TEST(FftPlan, PlanInCallerMemoryIsReusable) {
  for (int64_t n : {12, 97}) {
    std::vector<CD> tables(static_cast<size_t>(FftPlan<double>::table_size(n)));
    std::vector<CD> work(static_cast<size_t>(FftPlan<double>::work_size(n)), CD(1e30, -1e30));
    const FftPlan<double> plan(n, tables.data(), work.data());
    for (unsigned seed = 10; seed < 13; ++seed) {
      std::vector<CD> x = random_signal(n, seed);
      const std::vector<CD> expected = naive_dft(x);
      std::fill(work.begin(), work.end(), CD(1e30, -1e30));
      plan.forward(x.data(), work.data());
      for (size_t k = 0; k < x.size(); ++k) EXPECT_LT(std::abs(x[k] - expected[k]), 1e-12) << n << " " << k;
    }
  }
}

// Quarter turns are exact, so an impulse at 1 of length 4 gives exactly
// 1, -i, -1, i.
TEST(FftPlan, ImpulseGivesExactRoots) {
  std::vector<CD> x = {0, 1, 0, 0};
  std::vector<CD> work(4);
  owned_plan(4)->plan().forward(x.data(), work.data());
  EXPECT_EQ(x, (std::vector<CD>{CD(1, 0), CD(0, -1), CD(-1, 0), CD(0, 1)}));
}

}  // namespace
}  // namespace sy::cpu
