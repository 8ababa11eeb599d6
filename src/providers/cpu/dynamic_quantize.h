// DynamicQuantizeLinear's parameters, shared by its kernel (quantize.cc)
// and by DynamicQuantizeMatMul (dynamic_quant_matmul.cc), which must
// quantize A exactly as the unfused DynamicQuantizeLinear would.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace sy::cpu {

struct DynamicQuantParams {
  float scale = 1.0f;
  int32_t zero_point = 0;  // in [0, 255]
};

// For x[0, n): the range of x widened to hold 0 (so that 0 quantizes
// exactly), scale = (max - min) / 255, zero_point =
// saturate(round_half_even(-min / scale)). An all-zero x gets scale 1, as
// in ONNX Runtime (the spec's formula gives 0). NaNs are skipped. The scan
// is split among the pool's threads when x is large.
DynamicQuantParams dynamic_quant_params(ThreadPool& pool, const float* x, int64_t n);

}  // namespace sy::cpu
