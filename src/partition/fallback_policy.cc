#include "partition/fallback_policy.h"

namespace sy {

Status apply_policy(FallbackAction action, const std::string& message, LogSeverity log_severity,
                    std::string_view log_id, StatusCode code) {
  if (action == FallbackAction::kError) return Status(code, message + " (fallback policy: error)");
  if (action == FallbackAction::kWarn) log_message(LogSeverity::kWarning, log_severity, log_id, message);
  return ok_status();
}

FallbackAction placement_limit_action(const FallbackPolicy& policy) {
  return policy.node_fallthrough == FallbackAction::kError ? FallbackAction::kError : FallbackAction::kWarn;
}

}  // namespace sy
