// The fallback policy (SessionOptions.fallback): what a session does when
// the provider chain does not go as requested — a requested provider that
// cannot load, nodes that fall through to a later provider, a placement
// limit broken. Each is allowed, warned about or an error.
#pragma once

#include <string>
#include <string_view>

#include "core/logging.h"
#include "switchyard/session.h"
#include "switchyard/status.h"

namespace sy {

// Applies `action` to `message`: allow -> nothing, warn -> a WARNING line
// under `log_id` (written when `log_severity` lets warnings through),
// error -> a Status of `code` saying the policy made it one.
Status apply_policy(FallbackAction action, const std::string& message, LogSeverity log_severity,
                    std::string_view log_id, StatusCode code = StatusCode::kFail);

// The action for a broken placement limit. Never silent: a broken limit
// warns even under the allow policy, and is an error when fall-through is.
FallbackAction placement_limit_action(const FallbackPolicy& policy);

}  // namespace sy
