// The one body of the float Softmax row, included inside each ISA variant's
// function (see softmax_simd.h). Expects x, y, n in scope. Only always-inline
// helpers are called: an ordinary inline function compiled here with AVX-512
// flags could be the copy the linker keeps for every caller.
//
// The max and the sum are reductions, which the compiler does not vectorise
// for floats without fast-math; they run on GCC vectors of 16 floats (one
// AVX-512 register, two AVX2 ones, four SSE ones). The exponentials and the
// scaling are plain loops the compiler vectorises.
{
  typedef float V16 __attribute__((vector_size(64)));
  constexpr int kW = 16;
  V16 vmax;
  for (int k = 0; k < kW; ++k) vmax[k] = -std::numeric_limits<float>::infinity();
  int64_t i = 0;
  for (; i + kW <= n; i += kW) {
    V16 v;
    std::memcpy(&v, x + i, sizeof(v));
    vmax = v > vmax ? v : vmax;
  }
  float mx = vmax[0];
  for (int k = 1; k < kW; ++k) mx = select(vmax[k] > mx, vmax[k], mx);
  for (; i < n; ++i) mx = select(x[i] > mx, x[i], mx);

  for (int64_t j = 0; j < n; ++j) y[j] = fast_exp(x[j] - mx);

  V16 vsum = {};
  i = 0;
  for (; i + kW <= n; i += kW) {
    V16 v;
    std::memcpy(&v, y + i, sizeof(v));
    vsum += v;
  }
  float sum = 0.0f;
  for (int k = 0; k < kW; ++k) sum += vsum[k];
  for (; i < n; ++i) sum += y[i];
  const float inv = 1.0f / sum;
  for (int64_t j = 0; j < n; ++j) y[j] *= inv;
}
