// The one body of the depthwise 3x3 kernel, included by each ISA variant
// inside its own function (see depthwise3x3.h). Expects `p` in scope.
{
  const int64_t s = p.stride;
  // Output columns whose three taps all lie inside the row: the inner loop
  // has no bounds checks there.
  int64_t o_lo = 0;
  while (o_lo < p.OW && o_lo * s - p.pad_left < 0) ++o_lo;
  int64_t o_hi = p.OW;
  while (o_hi > o_lo && (o_hi - 1) * s - p.pad_left + 2 > p.W - 1) --o_hi;
  for (int64_t oh = 0; oh < p.OH; ++oh) {
    const float* rows[3];
    float wr[3][3];
    for (int i = 0; i < 3; ++i) {
      int64_t ih = oh * s - p.pad_top + i;
      const bool inside = ih >= 0 && ih < p.H;
      // A row outside the input contributes nothing: read a valid row with zero weights.
      if (!inside) ih = ih < 0 ? 0 : p.H - 1;
      rows[i] = p.x + ih * p.W;
      for (int j = 0; j < 3; ++j) wr[i][j] = inside ? p.w[i * 3 + j] : 0.0f;
    }
    const float* __restrict r0 = rows[0];
    const float* __restrict r1 = rows[1];
    const float* __restrict r2 = rows[2];
    float* __restrict yrow = p.y + oh * p.OW;
    const float w00 = wr[0][0], w01 = wr[0][1], w02 = wr[0][2];
    const float w10 = wr[1][0], w11 = wr[1][1], w12 = wr[1][2];
    const float w20 = wr[2][0], w21 = wr[2][1], w22 = wr[2][2];
    const float bias = p.bias, lo = p.lo, hi = p.hi;
    // Border columns: taps checked one by one.
    auto edge = [&](int64_t o) {
      float acc = bias;
      for (int j = 0; j < 3; ++j) {
        const int64_t c = o * s - p.pad_left + j;
        if (c < 0 || c >= p.W) continue;
        acc += wr[0][j] * r0[c] + wr[1][j] * r1[c] + wr[2][j] * r2[c];
      }
      yrow[o] = acc < lo ? lo : (acc > hi ? hi : acc);
    };
    for (int64_t o = 0; o < o_lo; ++o) edge(o);
    const int64_t base = -p.pad_left;
    if (s == 1) {
      for (int64_t o = o_lo; o < o_hi; ++o) {
        const int64_t c = o + base;
        float acc = bias + w00 * r0[c] + w01 * r0[c + 1] + w02 * r0[c + 2] + w10 * r1[c] + w11 * r1[c + 1] +
                    w12 * r1[c + 2] + w20 * r2[c] + w21 * r2[c + 1] + w22 * r2[c + 2];
        acc = acc < lo ? lo : acc;
        yrow[o] = acc > hi ? hi : acc;
      }
    } else {
      for (int64_t o = o_lo; o < o_hi; ++o) {
        const int64_t c = 2 * o + base;
        float acc = bias + w00 * r0[c] + w01 * r0[c + 1] + w02 * r0[c + 2] + w10 * r1[c] + w11 * r1[c + 1] +
                    w12 * r1[c + 2] + w20 * r2[c] + w21 * r2[c + 1] + w22 * r2[c + 2];
        acc = acc < lo ? lo : acc;
        yrow[o] = acc > hi ? hi : acc;
      }
    }
    for (int64_t o = o_hi > o_lo ? o_hi : o_lo; o < p.OW; ++o) edge(o);
  }
}
