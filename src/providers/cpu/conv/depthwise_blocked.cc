// The portable depthwise variant, the run-time choice among the variants,
// weight packing and the split into (image, row band, channel block) units
// that the threads take one at a time
// (see depthwise_blocked.h).
#include "providers/cpu/conv/depthwise_blocked.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/cpu_features.h"
#include "providers/cpu/conv/blocked_layout.h"
#include "providers/cpu/simd/interleave_channels.h"
#include "providers/cpu/simd/vec_portable.h"

namespace sy::cpu {
namespace depthwise_detail {
namespace portable {

using Vec = simd_portable::Vec;

#include "providers/cpu/conv/depthwise_blocked_body.h"

}  // namespace portable

void depthwise_band_portable(const DepthwiseBandArgs& a) { portable::depthwise_band<portable::Vec>(a); }

}  // namespace depthwise_detail

namespace {

struct Variant {
  int lanes;
  void (*band)(const DepthwiseBandArgs&);
};

const Variant& best_variant() {
  static const Variant best = pick_for_cpu(Variant{16, &depthwise_detail::depthwise_band_avx512},
                                           Variant{8, &depthwise_detail::depthwise_band_avx2},
                                           Variant{1, &depthwise_detail::depthwise_band_portable});
  return best;
}

// Output positions per band: the band's interleaved input and output
// (about 2 x 64 bytes per position with 16 lanes) stay well inside L2.
constexpr int64_t kBandPositions = 2048;

struct Plan {
  int64_t blocks = 0, band_rows = 0, bands = 0, units = 0;
  int64_t plane_floats = 0, staging_floats = 0;  // per unit's scratch
};

Plan plan_for(const DepthwiseShape& s, int threads) {
  const int64_t L = best_variant().lanes;
  Plan p;
  p.blocks = (s.C + L - 1) / L;
  // Bands of equal height, so every unit costs about the same. Units go
  // band by band, so the threads (one from each end, TwoEndedCounter)
  // split the map by rows, as the 1x1 Convs around it do
  // (blocked_layout.h's kSpatialSplitPositions): at least a band a thread.
  const int64_t max_rows = std::clamp<int64_t>(kBandPositions / std::max<int64_t>(1, s.OW), 1, std::max<int64_t>(1, s.OH));
  p.bands = (s.OH + max_rows - 1) / max_rows;
  if (s.OH * s.OW >= kSpatialSplitPositions) p.bands = std::min<int64_t>(s.OH, std::max<int64_t>(p.bands, threads));
  p.band_rows = (s.OH + p.bands - 1) / p.bands;
  p.units = s.N * p.blocks * p.bands;
  const int64_t rows = (p.band_rows - 1) * s.stride_h + (s.kh - 1) * s.dilation_h + 1;
  const int64_t pw = (s.OW - 1) * s.stride_w + (s.kw - 1) * s.dilation_w + 1;
  p.plane_floats = rows * pw * L;
  p.staging_floats = p.band_rows * s.OW * L;
  return p;
}

// One scratch slice per lane, a thread that takes units from a shared
// counter until none is left.
int64_t lanes_for(const Plan& p, const ThreadPool& pool) {
  return std::max<int64_t>(1, std::min<int64_t>(p.units, pool.num_threads()));
}

}  // namespace

int depthwise_lanes() { return best_variant().lanes; }

int64_t packed_depthwise_weights_size(int64_t C, int64_t taps) {
  const int64_t L = depthwise_lanes();
  return (C + L - 1) / L * taps * L;
}

void pack_depthwise_weights_into(const float* w, int64_t C, int64_t taps, float* packed) {
  const int64_t L = depthwise_lanes();
  const int64_t blocks = (C + L - 1) / L;
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t l = 0; l < L; ++l) {
        const int64_t c = b * L + l;
        packed[(b * taps + t) * L + l] = c < C ? w[c * taps + t] : 0.0f;
      }
}

std::vector<float> pack_depthwise_weights(const float* w, int64_t C, int64_t taps) {
  std::vector<float> packed(static_cast<size_t>(packed_depthwise_weights_size(C, taps)));
  pack_depthwise_weights_into(w, C, taps, packed.data());
  return packed;
}

int64_t depthwise_blocked_scratch_floats(const DepthwiseShape& shape, const ThreadPool& pool) {
  const Plan p = plan_for(shape, pool.num_threads());
  return lanes_for(p, pool) * (p.plane_floats + p.staging_floats);
}

void depthwise_blocked(const DepthwiseShape& s, const float* x, const float* packed_w, const float* bias, float lo,
                       float hi, float* y, float* scratch, ThreadPool& pool) {
  const Variant& v = best_variant();
  const Plan p = plan_for(s, pool.num_threads());
  if (p.units == 0) return;
  const int64_t lanes = lanes_for(p, pool);
  const int64_t taps = s.kh * s.kw;
  pool.run_tasks(lanes, p.units, [&](int64_t lane, int64_t u) {
    float* mine = scratch + lane * (p.plane_floats + p.staging_floats);
    const int64_t block = u % p.blocks, band = u / p.blocks % p.bands, n = u / (p.bands * p.blocks);
    DepthwiseBandArgs a;
    a.s = s;
    a.x = x + n * s.C * s.H * s.W;
    a.y = y + n * s.C * s.OH * s.OW;
    a.w = packed_w + block * taps * v.lanes;
    a.bias = bias;
    a.lo = lo;
    a.hi = hi;
    a.c0 = block * v.lanes;
    a.oh0 = band * p.band_rows;
    a.oh1 = std::min(s.OH, a.oh0 + p.band_rows);
    a.plane = mine;
    a.staging = mine + p.plane_floats;
    v.band(a);
  });
}

}  // namespace sy::cpu
