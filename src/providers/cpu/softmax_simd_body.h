// The one body of the float Softmax row, included inside each ISA variant's
// function (see softmax_simd.h). Expects x, bias (may be null), y, n in
// scope. Only always-inline helpers and local lambdas are called: an
// ordinary inline function compiled here with AVX-512 flags could be the
// copy the linker keeps for every caller.
//
// Everything runs on 16-float vectors (V16f, elementwise_common.h): the
// compiler vectorises no float reduction without fast-math. Three passes:
// s = x + bias (stored to y) and its max; the exponentials and their sum;
// the scaling. The horizontal max and sum fold the vector by halves, so the
// result lands in every lane at once; on BERT's 128-wide rows a scalar fold
// of the 16 lanes cost as much as the exponentials.
{
  constexpr int64_t kW = 16;
  // The max or the sum across v's lanes. (A NaN need not win the max: it
  // makes the sum, and so the row, NaN.)
  auto fold_max = [&](const V16f& v) {
    V16f m = v, o;
    swap_lanes<8>(m, o);
    m = m > o ? m : o;
    swap_lanes<4>(m, o);
    m = m > o ? m : o;
    swap_lanes<2>(m, o);
    m = m > o ? m : o;
    swap_lanes<1>(m, o);
    m = m > o ? m : o;
    return m[0];
  };
  auto fold_sum = [&](const V16f& v) {
    V16f m = v, o;
    swap_lanes<8>(m, o);
    m += o;
    swap_lanes<4>(m, o);
    m += o;
    swap_lanes<2>(m, o);
    m += o;
    swap_lanes<1>(m, o);
    m += o;
    return m[0];
  };
  // v = e^v for v <= 0 (s minus the row's max), or NaN. Clamped at -104,
  // where e^v is below every float (exp_sum_v16's range).
  auto exp_nonpositive = [](V16f& v) {
    const V16f lo = V16f{} - 104.0f;
    v = v < lo ? lo : v;
    exp_sum_v16(v, V16f{});
  };
  auto load = [](V16f& v, const float* p) { std::memcpy(&v, p, sizeof(v)); };
  auto load_sum = [&](V16f& v, const float* p, const float* q) {
    load(v, p);
    if (q != nullptr) {
      V16f b;
      load(b, q);
      v += b;
    }
  };

  float mx = -std::numeric_limits<float>::infinity();
  float sum = 0.0f;
  if (n < kW) {
    const float* s = x;
    if (bias != nullptr) {
      for (int64_t j = 0; j < n; ++j) y[j] = x[j] + bias[j];
      s = y;
    }
    for (int64_t j = 0; j < n; ++j) mx = select(s[j] > mx, s[j], mx);
    for (int64_t j = 0; j < n; ++j) {
      y[j] = fast_exp(s[j] - mx);
      sum += y[j];
    }
  } else {
    // A tail of fewer than 16 is the row's last 16, its first lanes (done
    // already) masked out, rather than scalar steps: GPT-2's causal rows
    // have every length. It is loaded first, before any store to y (which
    // may be x); step 2 stores it whole, the overlap with the same values.
    const int64_t full = n / kW * kW;
    const V16i lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const V16i is_tail = lane >= static_cast<int32_t>(kW - (n - full));
    V16f tv;
    load_sum(tv, x + n - kW, bias != nullptr ? bias + n - kW : nullptr);

    // 1. s = x + bias, kept in y when there is a bias, and its max.
    V16f vm = V16f{} - std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < full; i += kW) {
      V16f v;
      load_sum(v, x + i, bias != nullptr ? bias + i : nullptr);
      if (bias != nullptr) std::memcpy(y + i, &v, sizeof(v));
      vm = v > vm ? v : vm;
    }
    vm = (is_tail && tv > vm) ? tv : vm;
    mx = fold_max(vm);

    // 2. y = e^(s - max), and the sum.
    const float* s = bias != nullptr ? y : x;
    V16f vsum = {};
    for (int64_t i = 0; i < full; i += kW) {
      V16f v;
      load(v, s + i);
      v -= mx;
      exp_nonpositive(v);
      std::memcpy(y + i, &v, sizeof(v));
      vsum += v;
    }
    if (full < n) {
      tv -= mx;
      exp_nonpositive(tv);
      std::memcpy(y + n - kW, &tv, sizeof(tv));
      vsum += is_tail ? tv : V16f{};
    }
    sum = fold_sum(vsum);
  }

  // 3. Normalise.
  const float inv = 1.0f / sum;
  for (int64_t j = 0; j < n; ++j) y[j] *= inv;
}
