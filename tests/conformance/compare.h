// Output comparison the way ONNX's own backend test runner does it: dtype
// and shape must match; floating types within |a - e| <= atol + rtol * |e|
// (NaN equal to NaN, an infinity equal to the same-signed infinity); every
// other type exactly.
#pragma once

#include <string>

#include "switchyard/tensor.h"

namespace sy::conformance {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// Empty when `got` matches `expected`; otherwise one line saying where they
// differ ("element 17 got 0.5 expected 0.25 (rtol 1e-3, atol 1e-7; 3 of 24
// elements differ)", "shape [2,3] expected [3,2]", "dtype int32 expected
// int64").
std::string compare_tensors(const Tensor& got, const Tensor& expected, const Tolerance& tolerance);

// The value of element `index` of a floating tensor as a double, for any of
// ONNX's floating types including the float8 and float4 formats.
double float_element(const Tensor& t, int64_t index);

}  // namespace sy::conformance
