#include "core/checked_math.h"

#include <algorithm>
#include <limits>

#include "switchyard/shape.h"

namespace sy {

namespace {
std::string dims_string(std::span<const int64_t> dims) { return Shape(dims).to_string(); }
}  // namespace

Status checked_element_count(std::span<const int64_t> dims, int64_t& count) {
  int64_t nonzero = 1;
  bool zero = false;
  for (int64_t d : dims) {
    if (d < 0)
      return invalid_argument("shape " + dims_string(dims) + " has a negative dimension " + std::to_string(d));
    if (d == 0) {
      zero = true;
    } else if (!checked_mul(nonzero, d, nonzero)) {
      return invalid_argument("shape " + dims_string(dims) + " overflows: more than " +
                              std::to_string(std::numeric_limits<int64_t>::max()) + " elements");
    }
  }
  count = zero ? 0 : nonzero;
  return ok_status();
}

Status checked_byte_size(std::span<const int64_t> dims, size_t element_bytes, int64_t& bytes) {
  int64_t count = 0;
  SY_RETURN_IF_ERROR(checked_element_count(dims, count));
  if (!checked_mul(count, static_cast<int64_t>(element_bytes), bytes))
    return invalid_argument("shape " + dims_string(dims) + " of " + std::to_string(element_bytes) +
                            "-byte elements overflows: more than " +
                            std::to_string(std::numeric_limits<int64_t>::max()) + " bytes");
  return ok_status();
}

int64_t slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t& first) {
  // Negative bounds count from the end; dim >= 0 and the bound < 0 so the
  // sum cannot overflow.
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (dim == 0) {
    first = 0;
    return 0;
  }
  // After clamping, the distance fits in [0, dim]; the step's magnitude is
  // taken as unsigned so that -INT64_MIN is representable, and the ceiling
  // is (distance - 1) / |step| + 1, which cannot overflow as (a + b - 1) / b
  // can.
  uint64_t distance = 0;
  uint64_t magnitude = 0;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    if (end > start) distance = static_cast<uint64_t>(end - start);
    magnitude = static_cast<uint64_t>(step);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    if (start > end) distance = static_cast<uint64_t>(start - end);
    magnitude = uint64_t{0} - static_cast<uint64_t>(step);
  }
  first = start;
  return distance == 0 ? 0 : static_cast<int64_t>((distance - 1) / magnitude + 1);
}

uint64_t range_count(int64_t start, int64_t limit, int64_t delta) {
  // The distance |limit - start| is below 2^64, so it is exact in uint64
  // (two's complement subtraction of the larger minus the smaller), as is
  // |delta|; the ceiling is (a - 1) / b + 1, which cannot overflow.
  if (limit == start || (limit > start) != (delta > 0)) return 0;
  const uint64_t a = limit > start ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                   : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
  const uint64_t b = delta > 0 ? static_cast<uint64_t>(delta) : uint64_t{0} - static_cast<uint64_t>(delta);
  return (a - 1) / b + 1;
}

}  // namespace sy
