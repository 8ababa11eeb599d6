// Status and Result<T>: how every core function reports failure.
// Exceptions are used only at the Python edge; the core never throws.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace sy {

// Codes mirror the ones ONNX Runtime users already know, so the Python
// module can map each to an exception of the familiar name.
enum class StatusCode {
  kOk = 0,
  kFail,             // generic failure
  kInvalidArgument,  // bad input from the caller (feeds, options)
  kNoSuchFile,       // a file that does not exist or cannot be opened
  kInvalidProtobuf,  // bytes that are not a valid ONNX model
  kInvalidGraph,     // a model that parses but is not a valid graph
  kNotImplemented,   // valid ONNX that this build cannot run
  kRuntimeError,     // failure while running a kernel
  kUnavailable,      // a provider that cannot load here
  kOutOfMemory,
  kResourceExhausted,  // the system refused something else: threads, files
  kInternal,           // a bug: an exception caught at the API boundary
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: <message>"
  std::string to_string() const;

  // Adds context in front of the message: "while loading x: <old message>".
  Status with_context(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status ok_status() { return Status(); }
inline Status fail(std::string m) { return Status(StatusCode::kFail, std::move(m)); }
inline Status invalid_argument(std::string m) { return Status(StatusCode::kInvalidArgument, std::move(m)); }
inline Status invalid_graph(std::string m) { return Status(StatusCode::kInvalidGraph, std::move(m)); }
inline Status not_implemented(std::string m) { return Status(StatusCode::kNotImplemented, std::move(m)); }
inline Status runtime_error(std::string m) { return Status(StatusCode::kRuntimeError, std::move(m)); }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "a Result built from a Status must carry an error");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace sy

// The two helpers every Status-returning function uses. They are the only
// macros in the core: they return early, which a function cannot do.
#define SY_RETURN_IF_ERROR(expr)            \
  do {                                      \
    ::sy::Status sy_status_ = (expr);       \
    if (!sy_status_.ok()) return sy_status_; \
  } while (0)

#define SY_CONCAT_INNER(a, b) a##b
#define SY_CONCAT(a, b) SY_CONCAT_INNER(a, b)
#define SY_ASSIGN_OR_RETURN(lhs, expr)                              \
  auto SY_CONCAT(sy_result_, __LINE__) = (expr);                    \
  if (!SY_CONCAT(sy_result_, __LINE__).ok())                        \
    return SY_CONCAT(sy_result_, __LINE__).status();                \
  lhs = std::move(SY_CONCAT(sy_result_, __LINE__)).value()
