// The provider SDK's Status (see axis.h for what the SDK is): a result code,
// one of the ABI's SY_STATUS_* numbers, and a message, for provider
// libraries built apart from the core, which cannot use the core's Status.
// An entry of the ABI table turns it into its int result and error text.
#pragma once

#include <string>
#include <utility>

#include "switchyard/provider_abi.h"

namespace sy::provider_sdk {

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(int code, std::string message) : code_(code), message_(std::move(message)) {}
  Status(const Status&) = default;
  Status(Status&&) = default;
  // Assignments return void: nvcc reports `status = f();` as discarding a
  // [[nodiscard]] value when operator= returns Status&.
  void operator=(const Status& other) {
    code_ = other.code_;
    message_ = other.message_;
  }
  void operator=(Status&& other) {
    code_ = other.code_;
    message_ = std::move(other.message_);
  }
  bool ok() const { return code_ == SY_STATUS_OK; }
  int code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  int code_ = SY_STATUS_OK;
  std::string message_;
};

inline Status ok_status() { return {}; }
inline Status runtime_error(std::string m) { return {SY_STATUS_RUNTIME_ERROR, std::move(m)}; }
// Valid but not handled by this provider: the node goes to the next one.
inline Status not_implemented(std::string m) { return {SY_STATUS_NOT_IMPLEMENTED, std::move(m)}; }
inline Status invalid_argument(std::string m) { return {SY_STATUS_INVALID_ARGUMENT, std::move(m)}; }
inline Status invalid_graph(std::string m) { return {SY_STATUS_INVALID_GRAPH, std::move(m)}; }
inline Status out_of_memory(std::string m) { return {SY_STATUS_OUT_OF_MEMORY, std::move(m)}; }

}  // namespace sy::provider_sdk

// Returns the Status of `expr` when it is not ok.
#define SY_SDK_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::sy::provider_sdk::Status sdk_status_ = (expr); \
    if (!sdk_status_.ok()) return sdk_status_;       \
  } while (0)
