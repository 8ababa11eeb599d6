#include "core/logging.h"

#include <cstdio>
#include <mutex>

namespace sy {
namespace {

std::mutex& log_mutex() {
  static std::mutex m;
  return m;
}

LogCallback& log_callback() {
  static LogCallback cb;
  return cb;
}

}  // namespace

std::string_view log_severity_name(LogSeverity s) {
  switch (s) {
    case LogSeverity::kVerbose: return "VERBOSE";
    case LogSeverity::kInfo: return "INFO";
    case LogSeverity::kWarning: return "WARNING";
    case LogSeverity::kError: return "ERROR";
    case LogSeverity::kFatal: return "FATAL";
  }
  return "?";
}

void set_log_callback(LogCallback callback) {
  std::lock_guard<std::mutex> lock(log_mutex());
  log_callback() = std::move(callback);
}

void log_message(LogSeverity severity, LogSeverity min_severity, std::string_view log_id, std::string_view message) {
  if (severity < min_severity) return;
  std::lock_guard<std::mutex> lock(log_mutex());
  if (log_callback()) {
    log_callback()(severity, log_id, message);
    return;
  }
  std::fprintf(stderr, "switchyard %.*s [%.*s] %.*s\n", static_cast<int>(log_severity_name(severity).size()),
               log_severity_name(severity).data(), static_cast<int>(log_id.size()), log_id.data(),
               static_cast<int>(message.size()), message.data());
}

}  // namespace sy
