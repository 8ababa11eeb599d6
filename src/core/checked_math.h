// Overflow-checked integer arithmetic for sizes that come from a model or an
// input tensor (dims, repeats, pads, steps, counts). Signed overflow is
// undefined behaviour in C++, and a wrapped size can look valid, so every
// such computation goes through these helpers and fails instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "switchyard/status.h"

namespace sy {

// No single tensor may exceed this; larger requests are treated as a corrupt
// or hostile model rather than attempted (check_shape_is_sane enforces it at
// every allocation; kernels that know a size early refuse it sooner).
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;

// out = a op b; false (out unspecified) when the exact result does not fit.
[[nodiscard]] inline bool checked_add(int64_t a, int64_t b, int64_t& out) { return !__builtin_add_overflow(a, b, &out); }
[[nodiscard]] inline bool checked_sub(int64_t a, int64_t b, int64_t& out) { return !__builtin_sub_overflow(a, b, &out); }
[[nodiscard]] inline bool checked_mul(int64_t a, int64_t b, int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }

// The element count of `dims`. Fails (InvalidArgument, "shape [..] ...")
// when a dim is negative or the product of the non-zero dims exceeds
// INT64_MAX: the rule does not depend on the order of the dims, and it keeps
// every partial product (Shape::size_from, strides) in range too.
Status checked_element_count(std::span<const int64_t> dims, int64_t& count);
// The same times `element_bytes`, the size in bytes.
Status checked_byte_size(std::span<const int64_t> dims, size_t element_bytes, int64_t& bytes);

// ---- arithmetic progressions (Slice, Range) ---------------------------------

// Slice of one axis of length `dim` with numpy's rules, for any start, end
// and non-zero step in int64 (INT64_MIN and INT64_MAX included): the index
// of the first element taken (`first`) and how many are taken (the result).
int64_t slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t& first);

// Range's element count max(ceil((limit - start) / delta), 0) for integers,
// computed exactly (no overflow for any int64 operands); delta != 0. The
// count can exceed INT64_MAX (up to 2^64 - 1), hence unsigned.
uint64_t range_count(int64_t start, int64_t limit, int64_t delta);

}  // namespace sy
