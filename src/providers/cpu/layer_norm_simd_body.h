// The one body of the float LayerNormalization row, included inside each
// ISA variant's function (see layer_norm_simd.h). Expects x, y, n, scale,
// bias, epsilon, mean, inv in scope. The two sums run on GCC vectors of 16
// floats (one AVX-512 register, two AVX2 ones, four SSE ones), since the
// compiler does not reorder a float reduction by itself; the affine pass
// is a plain loop it vectorises.
{
  typedef float V16 __attribute__((vector_size(64)));
  constexpr int kW = 16;
  V16 acc = {};
  int64_t i = 0;
  for (; i + kW <= n; i += kW) {
    V16 v;
    std::memcpy(&v, x + i, sizeof(v));
    acc += v;
  }
  float sum = 0.0f;
  for (int k = 0; k < kW; ++k) sum += acc[k];
  for (; i < n; ++i) sum += x[i];
  const float m = sum / static_cast<float>(n);

  V16 acc2 = {};
  i = 0;
  for (; i + kW <= n; i += kW) {
    V16 v;
    std::memcpy(&v, x + i, sizeof(v));
    v -= m;
    acc2 += v * v;
  }
  float sq = 0.0f;
  for (int k = 0; k < kW; ++k) sq += acc2[k];
  for (; i < n; ++i) sq += (x[i] - m) * (x[i] - m);
  const float r = 1.0f / std::sqrt(sq / static_cast<float>(n) + epsilon);
  *mean = m;
  *inv = r;
  if (bias != nullptr) {
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - m) * r * scale[j] + bias[j];
  } else {
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - m) * r * scale[j];
  }
}
