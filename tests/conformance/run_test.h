// Runs one ONNX backend node test folder (model.onnx + test_data_set_*/)
// through a Session and compares its outputs with the reference ones.
#pragma once

#include <string>
#include <vector>

#include "compare.h"
#include "switchyard/session.h"

namespace sy::conformance {

struct TestConfig {
  std::vector<ProviderRequest> providers;
  int intra_op_threads = 1;
  OptimizationLevel optimization_level = OptimizationLevel::kAll;
  // Strict fallback policy: a node that falls through from the first
  // provider, or a provider that cannot load, fails the test.
  bool strict = false;
  Tolerance tolerance;
};

// Empty when every data set matches; otherwise one line saying why not.
std::string run_node_test(const std::string& test_dir, const TestConfig& config);

// The first line of `text`, with tabs made spaces and cut to a length that
// keeps an expectations file readable.
std::string one_line(const std::string& text);

}  // namespace sy::conformance
