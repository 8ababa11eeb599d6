// The one body of the activation span loops, included inside each ISA
// variant's function (see activation_simd.h). Expects f, x, y, rows, n, ld
// in scope: rows of n floats, ld apart. The switch sits outside the loops
// so that each one vectorises; x and y may be the same span (each element
// is read before it is written).
{
  // row(xr, yr) for each row's input and output.
  auto each_row = [&](auto&& row) {
    for (int64_t r = 0; r < rows; ++r) row(x + r * ld, y + r * ld);
  };
  switch (f) {
    case SimdActivation::kGeluTanh: {
      // x/2 * (1 + tanh(u)) == x * sigmoid(2u), which does not cancel for x < 0.
      constexpr float k = static_cast<float>(2 * 0.7978845608028654);  // 2 sqrt(2 / pi)
      each_row([&](const float* xr, float* yr) {
        for (int64_t i = 0; i < n; ++i) {
          const float v = xr[i];
          yr[i] = v * fast_sigmoid(k * (v + 0.044715f * v * v * v));
        }
      });
      break;
    }
    case SimdActivation::kGeluErf: {
      // fast_gelu's steps on 16-float vectors (V16f), where each select is
      // one masked blend (the scalar helper's bit-mask selects vectorise to
      // three logic ops each) and the exponential skips the clamps its
      // argument, -x^2 / 2 in [-100, 0], does not need: a fifth fewer
      // instructions, 11 % less time (its chain of dependent steps was not
      // the limit: two vectors at a time ran no faster). |x| is a bit mask,
      // its clamp one min, and the sign goes back on by bits, not selects:
      // 8 % less time again (393K floats: 305 -> 280 us).
      auto gelu16 = [](V16f& v) {
        const V16f zero = {};
        const V16i sign = (V16i)v & static_cast<int32_t>(0x80000000u);
        const V16f ax = (V16f)((V16i)v & 0x7FFFFFFF);
        const V16f big = zero + kGeluMaxA;
        const V16f a = big < ax ? big : ax;  // one min; NaN stays NaN
        const V16f t = 3.0f / (3.0f + a * kGeluS);
        V16f q = t * kGeluQ[0] + kGeluQ[1];
        for (int k = 2; k < 10; ++k) q = q * t + kGeluQ[k];
        const V16f hi = (V16f)((V16i)a & 0xFFFFF000);
        const V16f lo = a - hi;
        V16f e = hi * hi * -0.5f;  // e^(-(hi^2 + lo (a + hi)) / 2), in [-100, 0]
        exp_sum_v16(e, lo * (a + hi) * -0.5f);
        V16f h = 0.5f * t * q * e;
        h = ax > big ? zero : h;
        // x (1 - h) above 0, x h below, with x clamped to +-big in the
        // product so that +-inf (h = 0) give inf and -0, not NaN.
        const V16f r = (V16f)((V16i)a | sign) * h;
        v = v >= zero ? v - r : r;
      };
      // A row's last n % 16 floats go through gelu16 too, zero-padded, so
      // that a GEMM tile's narrow edge (often 8 of 16 columns) stays a
      // vector step and every column gets the same rounding.
      const int64_t full = n / 16 * 16;
      const size_t tail_bytes = static_cast<size_t>(n - full) * sizeof(float);
      each_row([&](const float* xr, float* yr) {
        for (int64_t i = 0; i < full; i += 16) {
          V16f v;
          std::memcpy(&v, xr + i, sizeof(v));
          gelu16(v);
          std::memcpy(yr + i, &v, sizeof(v));
        }
        if (tail_bytes != 0) {
          V16f v = {};
          std::memcpy(&v, xr + full, tail_bytes);
          gelu16(v);
          std::memcpy(yr + full, &v, tail_bytes);
        }
      });
      break;
    }
    case SimdActivation::kSigmoid:
      each_row([&](const float* xr, float* yr) {
        for (int64_t i = 0; i < n; ++i) yr[i] = fast_sigmoid(xr[i]);
      });
      break;
    case SimdActivation::kTanh:
      each_row([&](const float* xr, float* yr) {
        for (int64_t i = 0; i < n; ++i) yr[i] = fast_tanh(xr[i]);
      });
      break;
  }
}
