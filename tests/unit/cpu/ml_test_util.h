// Shared by the ai.onnx.ml kernel tests (ml_*_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <vector>

namespace sy::testing {

// Element-wise |got - want| <= tol, with the index of any mismatch.
inline void expect_all_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

}  // namespace sy::testing
