// Symbolic dimensions for the fusion passes: proving that two dimensions
// are the same when inference only knows them as "?".
//
// Exported transformers compute their Reshape targets at run time from
// Shape/Gather/Unsqueeze/Concat of some tensor, and the sequence length is
// unknown after the first Range or Gather. A fusion that drops such a
// Reshape must know that the target keeps, say, dims 0 and 1 of its input.
// dim_source() walks a dimension back through ops that pass it through
// unchanged (MatMul's batch dims, element-wise ops with a lower-rank other
// operand, LayerNormalization, Split on another axis, Transpose, the
// batch and sequence dims of Attention, a Reshape whose target reads the
// dim from a Shape or copies it with 0) to the value where it first
// appears; two dimensions with the same source are
// equal. shape_elements() reads a 1-D shape tensor built that way.
#pragma once

#include <cstdint>
#include <vector>

#include "model/graph.h"

namespace sy::symbolic {

// A dimension: a number (value == kNoValue), or axis `axis` of `value`.
struct DimRef {
  ValueId value = kNoValue;
  int64_t axis = -1;
  int64_t number = -1;
  bool is_number() const { return value == kNoValue; }
  friend bool operator==(const DimRef& a, const DimRef& b) {
    return a.value == b.value && (a.is_number() ? a.number == b.number : a.axis == b.axis);
  }
};

// Where axis `axis` (>= 0) of `v` comes from: its number when inference
// knows it, else the earliest (value, axis) it provably equals.
DimRef dim_source(const Graph& graph, ValueId v, int64_t axis);

// Same rank, and every dimension the same number, the same symbol or the
// same dim_source(): an element-wise op of `a` and `b` broadcasts nothing.
bool same_shape(const Graph& graph, ValueId a, ValueId b);

// The elements of the 1-D int64 tensor `shape`, each a number (as written:
// 0 and -1 keep Reshape's meaning) or a dim_source(); false when one of
// them cannot be told.
bool shape_elements(const Graph& graph, ValueId shape, std::vector<DimRef>* out);

}  // namespace sy::symbolic
