// The one body of the Gelu span loop, included inside each ISA variant's
// function (see gelu_simd.h). Expects x, y, n, tanh_form in scope.
{
  if (tanh_form) {
    // x/2 * (1 + tanh(u)) == x * sigmoid(2u), which does not cancel for x < 0.
    constexpr float k = static_cast<float>(2 * 0.7978845608028654);  // 2 sqrt(2 / pi)
    for (int64_t i = 0; i < n; ++i) {
      const float v = x[i];
      y[i] = v * fast_sigmoid(k * (v + 0.044715f * v * v * v));
    }
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = fast_gelu(x[i]);
  }
}
