// numpy's legacy RandomState draws on MT19937, which ONNX's reference
// implementation uses for Dropout and the random generators: with the same
// seed (std::mt19937's seeding is MT19937's init_genrand, as numpy's for a
// 32-bit seed) these give the reference's exact values.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace sy::cpu {

// RandomState.random_sample(): a double in [0, 1) from 53 random bits of
// two draws.
inline double numpy_uniform(std::mt19937& gen) {
  const uint32_t a = gen() >> 5;
  const uint32_t b = gen() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

// RandomState.standard_normal(): the polar Box-Muller method, whose second
// value is kept for the next call.
class NumpyGauss {
 public:
  double next(std::mt19937& gen) {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double x1 = 0.0, x2 = 0.0, r2 = 0.0;
    do {
      x1 = 2.0 * numpy_uniform(gen) - 1.0;
      x2 = 2.0 * numpy_uniform(gen) - 1.0;
      r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    const double f = std::sqrt(-2.0 * std::log(r2) / r2);
    spare_ = f * x1;
    has_spare_ = true;
    return f * x2;
  }

 private:
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace sy::cpu
