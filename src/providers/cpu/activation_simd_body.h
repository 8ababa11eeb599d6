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
    case SimdActivation::kGeluErf:
      for (int64_t i = 0; i < n; ++i) y[i] = fast_gelu(x[i]);
      break;
    case SimdActivation::kSigmoid:
      for (int64_t i = 0; i < n; ++i) y[i] = fast_sigmoid(x[i]);
      break;
    case SimdActivation::kTanh:
      for (int64_t i = 0; i < n; ++i) y[i] = fast_tanh(x[i]);
      break;
  }
}
