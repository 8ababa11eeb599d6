#include "switchyard/status.h"

namespace sy {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kFail: return "Fail";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kNoSuchFile: return "NoSuchFile";
    case StatusCode::kInvalidProtobuf: return "InvalidProtobuf";
    case StatusCode::kInvalidGraph: return "InvalidGraph";
    case StatusCode::kNotImplemented: return "NotImplemented";
    case StatusCode::kRuntimeError: return "RuntimeException";
    case StatusCode::kUnavailable: return "Unavailable";
    case StatusCode::kOutOfMemory: return "OutOfMemory";
    case StatusCode::kResourceExhausted: return "ResourceExhausted";
    case StatusCode::kInternal: return "Internal";
  }
  return "Unknown";
}

std::string Status::to_string() const {
  if (ok()) return "OK";
  return std::string(status_code_name(code_)) + ": " + message_;
}

Status Status::with_context(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace sy
