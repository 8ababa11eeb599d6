// Logging: every message has a severity and names the session it comes
// from (its log id). By default warnings and worse go to stderr; a user
// callback can take them instead.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace sy {

enum class LogSeverity { kVerbose = 0, kInfo = 1, kWarning = 2, kError = 3, kFatal = 4 };

std::string_view log_severity_name(LogSeverity s);

using LogCallback = std::function<void(LogSeverity severity, std::string_view log_id, std::string_view message)>;

// Process-wide sink; nullptr restores the stderr default. Thread safe.
void set_log_callback(LogCallback callback);

// Writes `message` if severity >= min_severity.
void log_message(LogSeverity severity, LogSeverity min_severity, std::string_view log_id, std::string_view message);

}  // namespace sy
