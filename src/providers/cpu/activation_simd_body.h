// The one body of the activation span loops, included inside each ISA
// variant's function (see activation_simd.h). Expects f, x, y, n in scope.
// The switch sits outside the loops so that each one vectorises; x and y
// may be the same span (each element is read before it is written).
{
  switch (f) {
    case SimdActivation::kGeluTanh: {
      // x/2 * (1 + tanh(u)) == x * sigmoid(2u), which does not cancel for x < 0.
      constexpr float k = static_cast<float>(2 * 0.7978845608028654);  // 2 sqrt(2 / pi)
      for (int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = v * fast_sigmoid(k * (v + 0.044715f * v * v * v));
      }
      break;
    }
    case SimdActivation::kGeluErf: {
      // fast_gelu's steps on GCC vectors of 16 floats, where each select is
      // one masked blend (the scalar helper's bit-mask selects vectorise to
      // three logic ops each) and the exponential skips the clamps its
      // argument, -x^2 / 2 in [-100, 0], does not need: a fifth fewer
      // instructions, 11 % less time (its chain of dependent steps was not
      // the limit: two vectors at a time ran no faster). The tail runs on the
      // scalar helper.
      typedef float V16 __attribute__((vector_size(64)));
      typedef int32_t I16 __attribute__((vector_size(64)));
      constexpr float kS = 0.70710678118654752f;
      constexpr float kMaxA = 14.1421356f;  // |x| at z = 10
      // v = gelu(v), by reference (see softmax_simd_body.h on -Wpsabi).
      auto gelu16 = [](V16& v) {
        const V16 zero = {};
        const V16 ax = v < zero ? -v : v;
        const V16 big = zero + kMaxA;
        const V16 a = ax > big ? big : ax;
        const V16 t = 3.0f / (3.0f + a * kS);
        V16 q = t * kGeluQ[0] + kGeluQ[1];
        for (int k = 2; k < 10; ++k) q = q * t + kGeluQ[k];
        const V16 hi = (V16)((I16)a & 0xFFFFF000);
        const V16 lo = a - hi;
        // e^(-(hi^2 + lo (a + hi)) / 2): fast_exp_sum's steps, unclamped.
        const V16 ea = hi * hi * -0.5f;
        const V16 tt = ea * 1.44269504088896341f + 12582912.0f;
        const V16 nf = tt - 12582912.0f;
        const I16 ni = (I16)tt - 0x4B400000;
        V16 r = ea - nf * kLn2Hi;
        r = r - nf * kLn2Lo;
        r = r + lo * (a + hi) * -0.5f;
        V16 p = r * kExpPoly[0] + kExpPoly[1];
        for (int k = 2; k < 6; ++k) p = p * r + kExpPoly[k];
        const I16 n1 = ni >> 1;
        const I16 s1 = (n1 + 127) << 23;
        const I16 s2 = (ni - n1 + 127) << 23;
        const V16 e = (p * r * r + r + 1.0f) * (V16)s1 * (V16)s2;
        V16 h = 0.5f * t * q * e;
        h = ax > big ? zero : h;
        const V16 pos = v - v * h;
        const V16 out = v >= zero ? pos : v * h;
        v = h == zero ? (v >= zero ? v : zero * -1.0f) : out;
      };
      const int64_t full = n / 16 * 16;
      for (int64_t i = 0; i < full; i += 16) {
        V16 v;
        std::memcpy(&v, x + i, sizeof(v));
        gelu16(v);
        std::memcpy(y + i, &v, sizeof(v));
      }
      for (int64_t i = full; i < n; ++i) y[i] = fast_gelu(x[i]);
      break;
    }
    case SimdActivation::kSigmoid:
      for (int64_t i = 0; i < n; ++i) y[i] = fast_sigmoid(x[i]);
      break;
    case SimdActivation::kTanh:
      for (int64_t i = 0; i < n; ++i) y[i] = fast_tanh(x[i]);
      break;
  }
}
