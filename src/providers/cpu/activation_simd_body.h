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
#if defined(__AVX512F__)
  // Both GELU forms read piecewise tables there, the exact steps below
  // only for the lanes past them (gelu_avx512.h).
  if (f == SimdActivation::kGeluErf || f == SimdActivation::kGeluTanh) {
    gelu_rows_avx512(f == SimdActivation::kGeluTanh, x, y, rows, n, ld);
    return;
  }
#endif
  switch (f) {
    case SimdActivation::kGeluTanh:
      each_row([&](const float* xr, float* yr) {
        for (int64_t i = 0; i < n; ++i) yr[i] = fast_gelu_tanh(xr[i]);
      });
      break;
    case SimdActivation::kGeluErf: {
      // A row's last n % 16 floats go through gelu_erf_v16 too, zero-padded, so
      // that a GEMM tile's narrow edge (often 8 of 16 columns) stays a
      // vector step and every column gets the same rounding.
      const int64_t full = n / 16 * 16;
      const size_t tail_bytes = static_cast<size_t>(n - full) * sizeof(float);
      each_row([&](const float* xr, float* yr) {
        for (int64_t i = 0; i < full; i += 16) {
          V16f v;
          std::memcpy(&v, xr + i, sizeof(v));
          gelu_erf_v16(v);
          std::memcpy(yr + i, &v, sizeof(v));
        }
        if (tail_bytes != 0) {
          V16f v = {};
          std::memcpy(&v, xr + full, tail_bytes);
          gelu_erf_v16(v);
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
