// The one body of abs_max_f32_rows, included inside each ISA variant's
// function (see abs_max_simd.h). Expects x, rows, n, ld in scope.
// 16-float vectors (V16f) with no step per row: a row's last n % 16 floats
// are a zero-padded vector. The lanes also sum |x|, which a NaN or an
// infinity reaches where the max would pass over it.
{
  // Four running maxes and sums, so that the steps do not wait on each
  // other's latency (a row of 64 floats is four vectors).
  V16f top[4] = {}, sum[4] = {};
  auto take = [&](const V16f& v, int k) {
    const V16f a = (V16f)((V16i)v & 0x7FFFFFFF);
    top[k] = a > top[k] ? a : top[k];
    sum[k] += a;
  };
  const int64_t full = n / 16 * 16;
  const int64_t full4 = n / 64 * 64;
  const size_t tail_bytes = static_cast<size_t>(n - full) * sizeof(float);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ld;
    V16f v[4];
    for (int64_t i = 0; i < full4; i += 64) {
      std::memcpy(v, xr + i, sizeof(v));
      for (int k = 0; k < 4; ++k) take(v[k], k);
    }
    for (int64_t i = full4; i < full; i += 16) {
      std::memcpy(&v[0], xr + i, sizeof(v[0]));
      take(v[0], 0);
    }
    if (tail_bytes != 0) {
      v[1] = V16f{};
      std::memcpy(&v[1], xr + full, tail_bytes);
      take(v[1], 1);
    }
  }
  float m = 0.0f, total = 0.0f;
  for (int j = 0; j < 4; ++j)
    for (int l = 0; l < 16; ++l) {
      m = top[j][l] > m ? top[j][l] : m;
      total += sum[j][l];
    }
  return total - total == 0.0f ? m : std::numeric_limits<float>::infinity();
}
