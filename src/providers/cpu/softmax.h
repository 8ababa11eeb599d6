// The softmax family's loops, for kernels of other families that build on
// them (SoftmaxCrossEntropyLoss in loss.cc).
#pragma once

#include <cstdint>

#include "core/thread_pool.h"
#include "switchyard/data_type.h"

namespace sy::cpu {

// LogSoftmax of x, seen as [outer, n, inner], along n into y (same type and
// layout; y must not overlap x), split among the pool's threads. x and y
// hold elements of `dtype`; false when that is not a float type.
bool log_softmax_along(DataType dtype, const void* x, void* y, int64_t outer, int64_t n, int64_t inner,
                       ThreadPool& pool);

}  // namespace sy::cpu
