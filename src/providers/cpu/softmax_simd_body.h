// The one body of the float Softmax row, included inside each ISA variant's
// function (see softmax_simd.h). Expects x, bias (may be null), y, n in
// scope. Only always-inline helpers and local lambdas are called: an
// ordinary inline function compiled here with AVX-512 flags could be the
// copy the linker keeps for every caller.
//
// Everything runs on GCC vectors of 16 floats (one AVX-512 register, two
// AVX2 ones, four SSE ones): the compiler vectorises no float reduction
// without fast-math. Three passes: x + bias and the max; the exponentials
// and their sum; the scaling. The horizontal max and sum fold the vector by
// halves, so the result lands in every lane at once; on BERT's 128-wide
// rows a scalar fold of the 16 lanes cost as much as the exponentials. The
// lambdas take vectors
// by reference: by value, the baseline and AVX2 builds would pass them in
// an ABI GCC warns about (-Wpsabi, which no pragma silences).
{
  typedef float V16 __attribute__((vector_size(64)));
  typedef int32_t I16 __attribute__((vector_size(64)));
  constexpr int64_t kW = 16;
  const I16 kSwap8 = {8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7};
  const I16 kSwap4 = {4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11};
  const I16 kSwap2 = {2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13};
  const I16 kSwap1 = {1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14};
  // The max or the sum across v's lanes. (A NaN need not win the max: it
  // makes the sum, and so the row, NaN.)
  auto fold_max = [&](const V16& v) {
    V16 m = v, o;
    o = __builtin_shuffle(m, kSwap8);
    m = m > o ? m : o;
    o = __builtin_shuffle(m, kSwap4);
    m = m > o ? m : o;
    o = __builtin_shuffle(m, kSwap2);
    m = m > o ? m : o;
    o = __builtin_shuffle(m, kSwap1);
    m = m > o ? m : o;
    return m[0];
  };
  auto fold_sum = [&](const V16& v) {
    V16 m = v;
    m += __builtin_shuffle(m, kSwap8);
    m += __builtin_shuffle(m, kSwap4);
    m += __builtin_shuffle(m, kSwap2);
    m += __builtin_shuffle(m, kSwap1);
    return m[0];
  };
  // v = e^v for v <= 0 (x minus the row's max), or NaN: fast_exp's
  // reduction and polynomial. v is clamped at -104, where e^v is below every
  // float, so 2^n takes two factors to reach the denormals below e^-87.
  auto exp_nonpositive = [](V16& v) {
    const V16 lo = V16{} - 104.0f;
    const V16 dc = v < lo ? lo : v;
    const V16 t = dc * 1.44269504088896341f + 12582912.0f;
    const V16 nf = t - 12582912.0f;
    const I16 ni = (I16)t - 0x4B400000;
    V16 r = dc - nf * kLn2Hi;
    r = r - nf * kLn2Lo;
    V16 p = r * kExpPoly[0] + kExpPoly[1];
    for (int k = 2; k < 6; ++k) p = p * r + kExpPoly[k];
    const V16 e = p * r * r + r + 1.0f;
    const I16 n1 = ni >> 1;
    const I16 s1 = (n1 + 127) << 23;
    const I16 s2 = (ni - n1 + 127) << 23;
    v = e * (V16)s1 * (V16)s2;
  };

  // 1. s = x + bias (kept in y), and its max; 2. below.
  const float* s = x;
  if (bias != nullptr) {
    for (int64_t j = 0; j < n; ++j) y[j] = x[j] + bias[j];
    s = y;
  }
  float mx = -std::numeric_limits<float>::infinity();
  float sum = 0.0f;
  if (n < kW) {
    for (int64_t j = 0; j < n; ++j) mx = select(s[j] > mx, s[j], mx);
    for (int64_t j = 0; j < n; ++j) {
      y[j] = fast_exp(s[j] - mx);
      sum += y[j];
    }
  } else {
    // A tail of fewer than 16 is the row's last 16, its first lanes (done
    // already) masked out, rather than scalar steps: GPT-2's causal rows
    // have every length. It is loaded before step 2 overwrites s when y is
    // s; step 2 stores it whole, the overlap with the same values.
    const int64_t full = n / kW * kW;
    const I16 lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const I16 is_tail = lane >= static_cast<int32_t>(kW - (n - full));
    V16 vm;
    std::memcpy(&vm, s, sizeof(vm));
    for (int64_t i = kW; i < full; i += kW) {
      V16 v;
      std::memcpy(&v, s + i, sizeof(v));
      vm = v > vm ? v : vm;
    }
    V16 tv;
    std::memcpy(&tv, s + n - kW, sizeof(tv));
    vm = (is_tail && tv > vm) ? tv : vm;
    mx = fold_max(vm);

    // 2. y = e^(s - max), and the sum.
    V16 vsum = {};
    for (int64_t i = 0; i < full; i += kW) {
      V16 v;
      std::memcpy(&v, s + i, sizeof(v));
      v -= mx;
      exp_nonpositive(v);
      std::memcpy(y + i, &v, sizeof(v));
      vsum += v;
    }
    if (full < n) {
      tv -= mx;
      exp_nonpositive(tv);
      std::memcpy(y + n - kW, &tv, sizeof(tv));
      vsum += is_tail ? tv : V16{};
    }
    sum = fold_sum(vsum);
  }

  // 3. Normalise.
  const float inv = 1.0f / sum;
  for (int64_t j = 0; j < n; ++j) y[j] *= inv;
}
