// The FFT plans of fft.h: Stockham passes and Bluestein's algorithm.
//
// A Stockham pass of radix p takes s interleaved transforms of length
// len = n / s (element j of transform q at x[q + s j]) and, for each,
// splits X[p k' + u] = sum_j W_m^(j k') [W_len^(j u) sum_t x[j + t m] W_p^(t u)]
// (m = len / p): the p-point butterfly over x[j + t m], then the twiddle
// W_len^(j u) = W_n^(j u s), written to y[q + s (p j + u)]. That leaves
// s p interleaved transforms of length m, and after the last pass every
// output sits at its own index: no reordering pass.
#include "providers/cpu/fft.h"

#include <cmath>
#include <numbers>

namespace sy::cpu {
namespace {

// Primes up to this run as one generic butterfly pass (p^2 products per p
// points); a length with a larger prime factor goes to Bluestein, whose
// three power-of-two FFTs of 2n to 4n points cost less beyond it.
constexpr int kMaxDirectRadix = 31;

template <typename T>
using Cx = std::complex<T>;

// Written out rather than std::complex's operator*, which checks every
// product for NaN to recover infinities in a library call: that branch
// keeps the loops from vectorizing.
template <typename T>
inline Cx<T> mul(Cx<T> a, Cx<T> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// a * -i.
template <typename T>
inline Cx<T> mul_neg_i(Cx<T> a) {
  return {a.imag(), -a.real()};
}

// exp(-2 pi i k / n) for 0 <= k < n, in double. The angle is reduced to the
// first quadrant first, so quarter turns come out exact (1, -i, -1, i) and
// sin and cos only see angles below pi / 2.
std::complex<double> unit_root(int64_t k, int64_t n) {
  const int64_t quarter = 4 * k / n;
  const int64_t rest = 4 * k - quarter * n;
  const double angle = std::numbers::pi / 2 * static_cast<double>(rest) / static_cast<double>(n);
  const double c = std::cos(angle);
  const double s = std::sin(angle);
  // (-i)^quarter * (c - i s)
  switch (quarter) {
    case 0: return {c, -s};
    case 1: return {-s, -c};
    case 2: return {-c, s};
    default: return {s, c};
  }
}

template <typename T>
void fill_twiddles(int64_t n, Cx<T>* out) {
  for (int64_t k = 0; k < n; ++k) out[k] = Cx<T>(unit_root(k, n));
}

// The smallest power of two >= 2n - 1: the cyclic convolution Bluestein
// needs holds the n chirp terms and their n - 1 mirrors without overlap.
int64_t bluestein_length(int64_t n) {
  int64_t m = 1;
  while (m < 2 * n - 1) m *= 2;
  return m;
}

// ---- butterflies: a[u] = sum_t a[t] exp(-2 pi i t u / P), in place ----

template <typename T>
inline void butterfly2(Cx<T>* a) {
  const Cx<T> a0 = a[0];
  a[0] = a0 + a[1];
  a[1] = a0 - a[1];
}

template <typename T>
inline void butterfly3(Cx<T>* a) {
  constexpr T kSin60 = T(0.866025403784438646763723170752936183L);
  const Cx<T> sum = a[1] + a[2];
  const Cx<T> mid = a[0] - sum * T(0.5);
  const Cx<T> rot = mul_neg_i(a[1] - a[2]) * kSin60;
  a[0] += sum;
  a[1] = mid + rot;
  a[2] = mid - rot;
}

template <typename T>
inline void butterfly4(Cx<T>* a) {
  const Cx<T> s02 = a[0] + a[2];
  const Cx<T> d02 = a[0] - a[2];
  const Cx<T> s13 = a[1] + a[3];
  const Cx<T> d13 = mul_neg_i(a[1] - a[3]);
  a[0] = s02 + s13;
  a[1] = d02 + d13;
  a[2] = s02 - s13;
  a[3] = d02 - d13;
}

// Pairs t with 5 - t: a[1] and a[4] (a[2] and a[3]) share the cosine
// terms and have opposite sine terms.
template <typename T>
inline void butterfly5(Cx<T>* a) {
  constexpr T kCos72 = T(0.309016994374947424102293417182819059L);
  constexpr T kCos144 = T(-0.809016994374947424102293417182819059L);
  constexpr T kSin72 = T(0.951056516295153572116439333379382143L);
  constexpr T kSin144 = T(0.587785252292473129168705954639072769L);
  const Cx<T> t1 = a[1] + a[4];
  const Cx<T> t2 = a[2] + a[3];
  const Cx<T> t3 = a[1] - a[4];
  const Cx<T> t4 = a[2] - a[3];
  const Cx<T> r1 = a[0] + t1 * kCos72 + t2 * kCos144;
  const Cx<T> r2 = a[0] + t1 * kCos144 + t2 * kCos72;
  const Cx<T> i1 = mul_neg_i(t3 * kSin72 + t4 * kSin144);
  const Cx<T> i2 = mul_neg_i(t3 * kSin144 - t4 * kSin72);
  a[0] += t1 + t2;
  a[1] = r1 + i1;
  a[4] = r1 - i1;
  a[2] = r2 + i2;
  a[3] = r2 - i2;
}

// One Stockham pass of radix P (see the top of the file); `twiddles` holds
// W_n^k for k < n, where n = s * P * m.
template <typename T, int P, void (*Butterfly)(Cx<T>*)>
void radix_pass(int64_t m, int64_t s, const Cx<T>* twiddles, const Cx<T>* x, Cx<T>* y) {
  for (int64_t j = 0; j < m; ++j) {
    Cx<T> w[P];
    for (int u = 0; u < P; ++u) w[u] = twiddles[j * u * s];
    for (int64_t q = 0; q < s; ++q) {
      Cx<T> a[P];
      for (int t = 0; t < P; ++t) a[t] = x[q + s * (j + t * m)];
      Butterfly(a);
      y[q + s * P * j] = a[0];
      for (int u = 1; u < P; ++u) y[q + s * (P * j + u)] = mul(a[u], w[u]);
    }
  }
}

// The same for any prime p up to kMaxDirectRadix, the p-point DFT done
// directly: W_p^(t u) is W_n^((t u mod p) n / p).
template <typename T>
void generic_pass(int p, int64_t m, int64_t s, int64_t n, const Cx<T>* twiddles, const Cx<T>* x, Cx<T>* y) {
  const int64_t root_step = n / p;
  Cx<T> a[kMaxDirectRadix];
  for (int64_t j = 0; j < m; ++j) {
    for (int64_t q = 0; q < s; ++q) {
      for (int t = 0; t < p; ++t) a[t] = x[q + s * (j + t * m)];
      for (int u = 0; u < p; ++u) {
        Cx<T> sum = a[0];
        int tu = 0;  // t * u mod p
        for (int t = 1; t < p; ++t) {
          tu += u;
          if (tu >= p) tu -= p;
          sum += mul(a[t], twiddles[tu * root_step]);
        }
        y[q + s * (p * j + u)] = u == 0 ? sum : mul(sum, twiddles[j * u * s]);
      }
    }
  }
}

}  // namespace

template <typename T>
bool FftPlan<T>::factor(int64_t n, MixedRadix& out) {
  out.n = n;
  out.count = 0;
  // Radix 4 first: half the passes of radix 2 for the same work.
  while (n % 4 == 0) {
    out.radices[out.count++] = 4;
    n /= 4;
  }
  // Composite p never divides here: their prime factors went first.
  for (int p = 2; p <= kMaxDirectRadix && n > 1; ++p) {
    while (n % p == 0) {
      out.radices[out.count++] = p;
      n /= p;
    }
  }
  return n == 1;
}

template <typename T>
int64_t FftPlan<T>::table_size(int64_t n) {
  MixedRadix radix;
  if (factor(n, radix)) return n;
  const int64_t m = bluestein_length(n);
  return m + n + m;  // twiddles, chirp, filter
}

template <typename T>
int64_t FftPlan<T>::work_size(int64_t n) {
  MixedRadix radix;
  if (factor(n, radix)) return n;
  return 2 * bluestein_length(n);  // the convolution and its FFT's work
}

template <typename T>
FftPlan<T>::FftPlan(int64_t n, Complex* tables, Complex* work) : n_(n) {
  if (factor(n, radix_)) {
    fill_twiddles(n, tables);
    radix_.twiddles = tables;
    return;
  }
  // Bluestein: with jk = (j^2 + k^2 - (k - j)^2) / 2,
  //   X[k] = c[k] sum_j (x[j] c[j]) conj(c[k - j]),  c[k] = exp(-pi i k^2 / n),
  // a convolution with conj(c), done by power-of-two FFTs of length m.
  const int64_t m = bluestein_length(n);
  factor(m, radix_);
  Complex* twiddles = tables;
  Complex* chirp = tables + m;
  Complex* filter = chirp + n;
  fill_twiddles(m, twiddles);
  radix_.twiddles = twiddles;
  // k^2 mod 2n, kept as (k + 1)^2 = k^2 + 2k + 1 so that it never
  // overflows and the angle stays exact for large k.
  int64_t square = 0;
  for (int64_t k = 0; k < n; ++k) {
    chirp[k] = Complex(unit_root(square, 2 * n));
    square += 2 * k + 1;
    if (square >= 2 * n) square -= 2 * n;
  }
  std::fill(filter, filter + m, Complex(0));
  filter[0] = std::conj(chirp[0]);
  for (int64_t k = 1; k < n; ++k) filter[k] = filter[m - k] = std::conj(chirp[k]);
  run_mixed_radix(radix_, filter, work);
  // The inverse FFT's 1/m, folded in here once (exact: m is a power of two).
  const T scale = T(1) / static_cast<T>(m);
  for (int64_t k = 0; k < m; ++k) filter[k] *= scale;
  chirp_ = chirp;
  filter_ = filter;
}

template <typename T>
void FftPlan<T>::run_mixed_radix(const MixedRadix& plan, Complex* data, Complex* work) {
  Complex* x = data;
  Complex* y = work;
  int64_t s = 1;
  int64_t len = plan.n;
  for (int i = 0; i < plan.count; ++i) {
    const int p = plan.radices[i];
    const int64_t m = len / p;
    switch (p) {
      case 2: radix_pass<T, 2, butterfly2<T>>(m, s, plan.twiddles, x, y); break;
      case 3: radix_pass<T, 3, butterfly3<T>>(m, s, plan.twiddles, x, y); break;
      case 4: radix_pass<T, 4, butterfly4<T>>(m, s, plan.twiddles, x, y); break;
      case 5: radix_pass<T, 5, butterfly5<T>>(m, s, plan.twiddles, x, y); break;
      default: generic_pass(p, m, s, plan.n, plan.twiddles, x, y); break;
    }
    std::swap(x, y);
    len = m;
    s *= p;
  }
  if (x != data) std::copy(x, x + plan.n, data);
}

template <typename T>
void FftPlan<T>::forward(Complex* data, Complex* work) const {
  if (chirp_ == nullptr) {
    run_mixed_radix(radix_, data, work);
    return;
  }
  const int64_t m = radix_.n;
  Complex* a = work;
  Complex* inner_work = work + m;
  for (int64_t k = 0; k < n_; ++k) a[k] = mul(data[k], chirp_[k]);
  std::fill(a + n_, a + m, Complex(0));
  run_mixed_radix(radix_, a, inner_work);
  // The inverse FFT of A * B as conj(FFT(conj(A * B))); B has the 1/m.
  for (int64_t k = 0; k < m; ++k) a[k] = std::conj(mul(a[k], filter_[k]));
  run_mixed_radix(radix_, a, inner_work);
  for (int64_t k = 0; k < n_; ++k) data[k] = mul(chirp_[k], std::conj(a[k]));
}

template <typename T>
Result<std::unique_ptr<OwnedFftPlan<T>>> OwnedFftPlan<T>::create(int64_t n) {
  // Complex numbers as pairs of T: [count, 2].
  const DataType dtype = DataTypeOf<T>::value;
  std::unique_ptr<OwnedFftPlan> owned(new OwnedFftPlan());
  SY_ASSIGN_OR_RETURN(owned->tables_, Tensor::allocate_uninitialized(dtype, Shape{FftPlan<T>::table_size(n), 2}));
  SY_ASSIGN_OR_RETURN(Tensor work, Tensor::allocate_uninitialized(dtype, Shape{FftPlan<T>::work_size(n), 2}));
  owned->plan_ = FftPlan<T>(n, reinterpret_cast<std::complex<T>*>(owned->tables_.template data<T>()),
                            reinterpret_cast<std::complex<T>*>(work.template data<T>()));
  return owned;
}

template class FftPlan<float>;
template class FftPlan<double>;
template class OwnedFftPlan<float>;
template class OwnedFftPlan<double>;

}  // namespace sy::cpu
