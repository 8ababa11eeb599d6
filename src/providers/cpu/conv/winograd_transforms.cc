// The portable (one-lane) Winograd transforms and the run-time choice among
// the variants (see winograd_transforms.h).
#include "providers/cpu/conv/winograd_transforms.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/cpu_features.h"
#include "providers/cpu/simd/interleave_channels.h"
#include "providers/cpu/simd/vec_portable.h"

namespace sy::cpu {
namespace winograd_detail {
namespace portable {

using Vec = simd_portable::Vec;

#include "providers/cpu/conv/winograd_transforms_body.h"

}  // namespace portable

void input_transform_portable(const WinogradInputArgs& a) { portable::input_transform<portable::Vec>(a); }
void output_transform_portable(const WinogradOutputArgs& a) { portable::output_transform<portable::Vec>(a); }

}  // namespace winograd_detail

namespace {

struct Variant {
  int lanes;
  void (*input)(const WinogradInputArgs&);
  void (*output)(const WinogradOutputArgs&);
};

const Variant& best_variant() {
  static const Variant best =
      pick_for_cpu(Variant{16, &winograd_detail::input_transform_avx512, &winograd_detail::output_transform_avx512},
                   Variant{8, &winograd_detail::input_transform_avx2, &winograd_detail::output_transform_avx2},
                   Variant{1, &winograd_detail::input_transform_portable, &winograd_detail::output_transform_portable});
  return best;
}

}  // namespace

WinogradSplitGroups winograd_split_groups(int64_t tile) {
  const int64_t n = tile + 1;  // F(tile, 2)'s points
  WinogradSplitGroups g;
  g.eo = n * n;
  g.oe = g.eo + n * tile;
  g.oo = g.oe + n * tile;
  g.slots = g.oo + tile * tile;
  return g;
}

int winograd_lanes() { return best_variant().lanes; }
void winograd_input_transform(const WinogradInputArgs& a) { best_variant().input(a); }
void winograd_output_transform(const WinogradOutputArgs& a) { best_variant().output(a); }

}  // namespace sy::cpu
