#include "session/profiler.h"

#include <ctime>
#include <fstream>
#include <functional>
#include <thread>

#include "core/json_string.h"

namespace sy {

void Profiler::record(const PlanStep& step, std::chrono::steady_clock::time_point started) {
  const auto now = std::chrono::steady_clock::now();
  Event e;
  e.node = step.node_ptr;
  e.provider = step.provider;
  e.start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(started - start_).count();
  e.duration_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - started).count();
  e.thread = std::hash<std::thread::id>()(std::this_thread::get_id());
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(e);
}

Result<std::string> Profiler::write_trace(const std::string& prefix, std::span<ExecutionProvider* const> chain) {
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events.swap(events_);
  }
  const std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d_%H-%M-%S", std::localtime(&t));
  const std::string path = prefix + "_" + stamp + ".json";
  std::ofstream out(path);
  if (!out) return Status(StatusCode::kNoSuchFile, "cannot write the profile to " + path);
  out << "[\n";
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    out << "{\"cat\":\"Node\",\"ph\":\"X\",\"pid\":1,\"tid\":" << (e.thread % 100000) << ",\"ts\":" << e.start_ns / 1000
        << ",\"dur\":" << e.duration_ns / 1000 << ",\"name\":\"" << json_escape(e.node->name) << "\",\"args\":{\"op_name\":\""
        << json_escape(e.node->op_type) << "\",\"provider\":\""
        << json_escape(chain[static_cast<size_t>(e.provider)]->name()) << "\"}}" << (i + 1 < events.size() ? ",\n" : "\n");
  }
  out << "]\n";
  if (!out) return Status(StatusCode::kFail, "failed while writing the profile to " + path);
  return path;
}

std::vector<Session::ProfileRecord> Profiler::records(std::span<ExecutionProvider* const> chain) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Session::ProfileRecord> out;
  out.reserve(events_.size());
  for (const Event& e : events_)
    out.push_back(Session::ProfileRecord{e.node->name, e.node->op_type, chain[static_cast<size_t>(e.provider)]->name(),
                                         e.start_ns, e.duration_ns});
  return out;
}

size_t Profiler::count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_.size();
}

}  // namespace sy
