// Copies between one contiguous tensor and several "pieces" that each hold
// a slice of its rows: the tensor seen as [outer, row], every row the
// pieces' rows side by side. Concat and ConcatFromSequence gather pieces
// into the whole; Split and SplitToSequence cut the whole into pieces.
// Work is divided by element ranges of the whole, so a single huge row
// (axis 0) spreads over the threads as well as many small rows do.
#pragma once

#include <algorithm>
#include <cstdint>

#include "providers/cpu/copy_util.h"
#include "providers/kernel.h"

namespace sy::cpu {

// One side of the copy: `count` tensors, each [outer, width[j]] elements
// (width 0 or data nullptr: skipped).
struct Pieces {
  int64_t count = 0;
  int64_t* width = nullptr;
  void** data = nullptr;
};

inline Result<Pieces> make_pieces(KernelContext& ctx, int64_t count) {
  const size_t bytes = static_cast<size_t>(count) * (sizeof(int64_t) + sizeof(void*));
  SY_ASSIGN_OR_RETURN(void* mem, ctx.scratch(bytes));
  Pieces p;
  p.count = count;
  p.data = static_cast<void**>(mem);
  p.width = reinterpret_cast<int64_t*>(static_cast<char*>(mem) + static_cast<size_t>(count) * sizeof(void*));
  return p;
}

// Concat (kToPieces = false): the contiguous side is the output, pieces are
// inputs. Split (kToPieces = true): the contiguous side is the input.
template <typename T, bool kToPieces>
void copy_rows(T* whole, const Pieces& pieces, int64_t outer, ThreadPool& pool) {
  int64_t row = 0;
  for (int64_t j = 0; j < pieces.count; ++j) row += pieces.width[j];
  if (row == 0 || outer == 0) return;
  const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / static_cast<int64_t>(sizeof(T)));
  pool.parallel_for(outer * row, grain, [&](int64_t begin, int64_t end) {
    int64_t r = begin / row;
    int64_t q = begin % row;
    int64_t j = 0;
    while (q >= pieces.width[j]) q -= pieces.width[j++];
    int64_t pos = begin;
    while (pos < end) {
      const int64_t w = pieces.width[j];
      const int64_t n = std::min(w - q, end - pos);
      if (pieces.data[j] != nullptr) {
        T* piece = static_cast<T*>(pieces.data[j]) + r * w + q;
        if constexpr (kToPieces) {
          copy_elements(piece, whole + pos, n);
        } else {
          copy_elements(whole + pos, piece, n);
        }
      }
      pos += n;
      q = 0;
      // Next non-empty piece, wrapping to the next row.
      do {
        if (++j == pieces.count) {
          j = 0;
          ++r;
        }
      } while (pieces.width[j] == 0);
    }
  });
}

}  // namespace sy::cpu
