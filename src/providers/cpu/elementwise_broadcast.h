// numpy-style multidirectional broadcasting for the CPU kernels.
//
// A BroadcastPlan describes the output as a few collapsed dimensions:
// adjacent dims are merged whenever every input either moves along both or
// is broadcast along both, and dims of size 1 vanish. The common cases fall
// out of this with no special code: same shapes become one dim of stride 1,
// a scalar one dim of stride 0, a bias row [C] against [N, C] two dims whose
// innermost has stride 1 for both inputs. The walker hands a kernel
// contiguous runs of the innermost dim, each with every input's offset and
// whether that input moves along the run (stride 1) or stays (stride 0), so
// inner loops see only those two cases and do no index arithmetic.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "providers/kernel.h"
#include "switchyard/shape.h"
#include "switchyard/status.h"

namespace sy::cpu {

inline constexpr int kMaxBroadcastInputs = 3;
inline constexpr int kMaxBroadcastRank = 16;

struct BroadcastPlan {
  int num_inputs = 0;
  int rank = 0;        // collapsed rank; 0 when the output has one element
  int64_t total = 0;   // output elements
  int64_t dims[kMaxBroadcastRank] = {};
  int64_t strides[kMaxBroadcastInputs][kMaxBroadcastRank] = {};
  bool inner_moves[kMaxBroadcastInputs] = {};  // stride 1 (true) or 0 along the innermost dim
};

// The broadcast of `shapes` into `out`; an error naming the node when they
// are incompatible.
Status broadcast_shapes(const KernelContext& ctx, std::span<const Shape* const> shapes, Shape& out);

// A plan for inputs that each broadcast to `out` (checked by
// broadcast_shapes, or the caller). Fails only for more than
// kMaxBroadcastRank dims left after collapsing.
Status make_broadcast_plan(const KernelContext& ctx, std::span<const Shape* const> inputs, const Shape& out,
                           BroadcastPlan& plan);

// Calls f(out_offset, in_offsets, length) for the runs that cover output
// elements [begin, end) in order.
template <typename F>
void for_each_run(const BroadcastPlan& p, int64_t begin, int64_t end, F&& f) {
  if (begin >= end) return;
  int64_t offs[kMaxBroadcastInputs] = {};
  const int r = p.rank;
  if (r == 0) {
    f(int64_t{0}, static_cast<const int64_t*>(offs), int64_t{1});
    return;
  }
  const int k_count = p.num_inputs;
  int64_t idx[kMaxBroadcastRank];
  // One division per dim for the start of the range; none afterwards.
  int64_t rem = begin;
  for (int d = r - 1; d >= 0; --d) {
    idx[d] = rem % p.dims[d];
    rem /= p.dims[d];
  }
  for (int k = 0; k < k_count; ++k)
    for (int d = 0; d < r; ++d) offs[k] += idx[d] * p.strides[k][d];
  const int64_t inner = p.dims[r - 1];
  int64_t pos = begin;
  while (pos < end) {
    const int64_t len = std::min(inner - idx[r - 1], end - pos);
    f(pos, static_cast<const int64_t*>(offs), len);
    pos += len;
    if (pos >= end) break;
    idx[r - 1] += len;
    for (int k = 0; k < k_count; ++k) offs[k] += len * p.strides[k][r - 1];
    if (idx[r - 1] < inner) continue;
    // Carry into the outer dims, odometer style.
    for (int k = 0; k < k_count; ++k) offs[k] -= inner * p.strides[k][r - 1];
    idx[r - 1] = 0;
    for (int d = r - 2; d >= 0; --d) {
      ++idx[d];
      for (int k = 0; k < k_count; ++k) offs[k] += p.strides[k][d];
      if (idx[d] < p.dims[d]) break;
      for (int k = 0; k < k_count; ++k) offs[k] -= p.dims[d] * p.strides[k][d];
      idx[d] = 0;
    }
  }
}

}  // namespace sy::cpu
