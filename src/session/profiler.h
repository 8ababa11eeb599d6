// The profiler of a session (SessionOptions.enable_profiling): one event
// per node run. An event keeps the node and provider as pointer and index,
// their names looked up only when the records or the trace are written, so
// a run copies no strings.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "providers/provider.h"
#include "session/execution_plan.h"
#include "switchyard/session.h"

namespace sy {

class Profiler {
 public:
  // Event times count from here (the session's creation).
  void start() { start_ = std::chrono::steady_clock::now(); }

  // A run of `step` that began at `started` and ends now. Thread safe:
  // concurrent runs record into one profiler.
  void record(const PlanStep& step, std::chrono::steady_clock::time_point started);

  // Writes the events recorded since start() or the last write as a Chrome
  // trace JSON file "<prefix>_<date>.json" and returns its path. The
  // events are taken first: they are not written twice, and are dropped
  // when the file cannot be written.
  Result<std::string> write_trace(const std::string& prefix, std::span<ExecutionProvider* const> chain);

  // The events recorded so far, named, oldest first; `chain` is the
  // session's provider chain.
  std::vector<Session::ProfileRecord> records(std::span<ExecutionProvider* const> chain) const;
  size_t count() const;

 private:
  struct Event {
    const Node* node;
    int provider;  // index into the chain
    int64_t start_ns;
    int64_t duration_ns;
    uint64_t thread;
  };

  mutable std::mutex mutex_;
  std::vector<Event> events_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace sy
