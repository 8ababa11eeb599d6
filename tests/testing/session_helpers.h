// Helpers for tests that run a model built in the test through a session.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "switchyard/session.h"

namespace sy::testing {

// A session over serialized model bytes, or nullptr (and a test failure
// saying why) when creation fails.
inline std::unique_ptr<Session> create_session(const std::string& bytes) {
  auto s = Session::create_from_bytes(bytes.data(), bytes.size());
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(s).value() : nullptr;
}

// A host tensor's elements.
template <typename T>
std::vector<T> tensor_values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

}  // namespace sy::testing
