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
      // fast_gelu's steps on 16-float vectors (V16f), where each select is
      // one masked blend (the scalar helper's bit-mask selects vectorise to
      // three logic ops each) and the exponential skips the clamps its
      // argument, -x^2 / 2 in [-100, 0], does not need: a fifth fewer
      // instructions, 11 % less time (its chain of dependent steps was not
      // the limit: two vectors at a time ran no faster). The tail runs on the
      // scalar helper.
      auto gelu16 = [](V16f& v) {
        const V16f zero = {};
        const V16f ax = v < zero ? -v : v;
        const V16f big = zero + kGeluMaxA;
        const V16f a = ax > big ? big : ax;
        const V16f t = 3.0f / (3.0f + a * kGeluS);
        V16f q = t * kGeluQ[0] + kGeluQ[1];
        for (int k = 2; k < 10; ++k) q = q * t + kGeluQ[k];
        const V16f hi = (V16f)((V16i)a & 0xFFFFF000);
        const V16f lo = a - hi;
        V16f e = hi * hi * -0.5f;  // e^(-(hi^2 + lo (a + hi)) / 2), in [-100, 0]
        exp_sum_v16(e, lo * (a + hi) * -0.5f);
        V16f h = 0.5f * t * q * e;
        h = ax > big ? zero : h;
        const V16f pos = v - v * h;
        const V16f out = v >= zero ? pos : v * h;
        v = h == zero ? (v >= zero ? v : zero * -1.0f) : out;
      };
      const int64_t full = n / 16 * 16;
      for (int64_t i = 0; i < full; i += 16) {
        V16f v;
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
