// Index math of the element-wise kernels: numpy (multidirectional)
// broadcasting of up to three inputs, rank up to SY_MAX_RANK.
//
// The host computes the output shape, then a BroadcastShape: the output
// dims with adjacent dims merged wherever every input either moves along
// both or is broadcast along both, and dims of size 1 dropped. The common
// cases come out small: same shapes are one dim with stride 1 for every
// input, a scalar operand one dim with stride 0, a bias [C] against [N, C]
// two dims. The kernels then pick a path from it (binary_path, where_path)
// and the general path maps each output index to input offsets with one
// division per merged dim but the outermost (broadcast_offsets).
//
// Everything here is plain host code or __host__ __device__, so the host
// unit tests (tests/cuda/elementwise_test.cu) run it without a GPU.
#pragma once

#include <cstdint>

#include "switchyard/provider_abi.h"

namespace sy::cuda {

inline constexpr int kMaxBroadcastInputs = 3;  // Where: condition, X, Y

// Passed to kernels by value (264 bytes, well inside the launch parameter
// space).
struct BroadcastShape {
  int rank = 0;  // merged rank; 0 when the output has one element
  int num_inputs = 0;
  int64_t dims[SY_MAX_RANK] = {};
  // Elements; 0 along a dim the input is broadcast over.
  int64_t strides[kMaxBroadcastInputs][SY_MAX_RANK] = {};
};

// The broadcast of shapes a and b into out (rank max(rank_a, rank_b), dims
// aligned at the right). Returns false when a dim pair is neither equal nor
// has a 1. out may alias a (to fold over more than two shapes). Note that 1
// against 0 gives 0, as in numpy.
inline bool broadcast_two(int rank_a, const int64_t* dims_a, int rank_b, const int64_t* dims_b, int& out_rank,
                          int64_t* out) {
  const int rank = rank_a > rank_b ? rank_a : rank_b;
  int64_t result[SY_MAX_RANK];
  for (int d = 0; d < rank; ++d) {
    const int da = d - (rank - rank_a);  // index into a, negative: a has no such dim (size 1)
    const int db = d - (rank - rank_b);
    const int64_t va = da >= 0 ? dims_a[da] : 1;
    const int64_t vb = db >= 0 ? dims_b[db] : 1;
    if (va == vb || vb == 1) {
      result[d] = va;
    } else if (va == 1) {
      result[d] = vb;
    } else {
      return false;
    }
  }
  for (int d = 0; d < rank; ++d) out[d] = result[d];
  out_rank = rank;
  return true;
}

// Fills s for inputs 0..n-1 (shapes ranks[k] / dims[k]) that each broadcast
// to the output shape out_rank / out_dims (checked by broadcast_two).
inline void make_broadcast_shape(int n, const int* ranks, const int64_t* const* dims, int out_rank,
                                 const int64_t* out_dims, BroadcastShape& s) {
  s = BroadcastShape{};
  s.num_inputs = n;
  unsigned last_mask = ~0u;
  for (int d = 0; d < out_rank; ++d) {
    const int64_t od = out_dims[d];
    if (od == 1) continue;  // contributes nothing to any offset
    // Bit k: input k moves along this dim (its dim equals the output's).
    unsigned mask = 0;
    for (int k = 0; k < n; ++k) {
      const int dk = d - (out_rank - ranks[k]);
      const int64_t v = dk >= 0 ? dims[k][dk] : 1;
      if (v == od) mask |= 1u << k;
    }
    if (s.rank > 0 && mask == last_mask) {
      s.dims[s.rank - 1] *= od;  // same pattern as the dim outside: merge
      continue;
    }
    s.dims[s.rank] = od;
    for (int k = 0; k < n; ++k) s.strides[k][s.rank] = (mask >> k) & 1u;  // 0/1 marks, scaled below
    ++s.rank;
    last_mask = mask;
  }
  // An input's stride along a merged dim is the product of the merged dims
  // inside it that the input moves along: its own dims there are the
  // output's, and where it is broadcast its dims are 1.
  for (int k = 0; k < n; ++k) {
    int64_t running = 1;
    for (int d = s.rank - 1; d >= 0; --d) {
      if (s.strides[k][d] != 0) {
        s.strides[k][d] = running;
        running *= s.dims[d];
      }
    }
  }
}

// Offsets into inputs 0..N-1 of output element i (0 <= i < the output's
// element count). IndexT is uint32_t when the output has fewer than 2^31
// elements (32-bit division is several times cheaper on the GPU), else
// int64_t. The outermost merged dim needs no division: what is left of i
// after the inner dims is its index, as i is in range. So rank 1 (same
// shapes, or scalar operands) costs no division at all.
template <int N, typename IndexT>
__host__ __device__ inline void broadcast_offsets(const BroadcastShape& s, IndexT i, IndexT (&offsets)[N]) {
  for (int k = 0; k < N; ++k) offsets[k] = 0;
  IndexT rest = i;
  for (int d = s.rank - 1; d > 0; --d) {
    const auto dim = static_cast<IndexT>(s.dims[d]);
    const IndexT q = rest / dim;
    const IndexT idx = rest - q * dim;
    rest = q;
    for (int k = 0; k < N; ++k) offsets[k] += idx * static_cast<IndexT>(s.strides[k][d]);
  }
  if (s.rank > 0)
    for (int k = 0; k < N; ++k) offsets[k] += rest * static_cast<IndexT>(s.strides[k][0]);
}

// Which kernel a two-input broadcast takes.
enum class BinaryPath {
  kFlat,     // both inputs have the output's shape (or it has one element)
  kScalarA,  // input 0 has one element, input 1 the output's shape
  kScalarB,  // input 1 has one element, input 0 the output's shape
  kGeneral,  // anything else: broadcast_offsets per element
};

inline BinaryPath binary_path(const BroadcastShape& s) {
  if (s.rank == 0) return BinaryPath::kFlat;
  if (s.rank == 1) {
    const bool a_moves = s.strides[0][0] != 0;
    const bool b_moves = s.strides[1][0] != 0;
    if (a_moves && b_moves) return BinaryPath::kFlat;
    if (b_moves) return BinaryPath::kScalarA;
    if (a_moves) return BinaryPath::kScalarB;
  }
  return BinaryPath::kGeneral;
}

// True when every input has the output's shape (a flat loop serves).
inline bool all_inputs_flat(const BroadcastShape& s) {
  if (s.rank == 0) return true;
  if (s.rank > 1) return false;
  for (int k = 0; k < s.num_inputs; ++k)
    if (s.strides[k][0] == 0) return false;
  return true;
}

// Largest output for the 32-bit index path: grid-stride steps stay below
// 2^32 as long as both the index and the grid stay below 2^31.
inline constexpr int64_t kMax32BitElements = (int64_t{1} << 31) - 1;

}  // namespace sy::cuda
