// `switchyard bench MODEL ...`: session creation time, first run, latency
// percentiles, throughput and peak resident memory, for one model.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "core/json_string.h"

namespace sy::cli {
namespace {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto i = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

// This process's own peak: VmHWM belongs to the address space and starts
// afresh at exec, where ru_maxrss carries over the parent's peak (a
// benchmark driver that loaded the models itself would be counted).
long peak_rss_kib() {
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    long kib = -1;
    while (std::fgets(line, sizeof line, f) != nullptr)
      if (std::sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
    std::fclose(f);
    if (kib >= 0) return kib;
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;  // KiB on Linux
}

// Where the time of the timed runs went, from the profiler's records past
// the first `skip` (the first run and the warm-up).
struct ProfileSummary {
  std::string file;
  std::vector<std::pair<std::string, double>> op_ms;          // ms per run by op type, largest first
  std::map<std::string, int> op_nodes;                        // nodes per op type
  std::vector<std::pair<std::string, double>> slowest_nodes;  // "name (op)", ms per run
  std::vector<std::map<std::string, double>> run_op_ms;       // ms by op type in each timed run
};

// run_ends[i]: how many records there were when timed run i ended, so a
// caller can take a median over runs as the latency figures do, where one
// slow run would move a mean.
ProfileSummary summarize_profile(const std::vector<Session::ProfileRecord>& records, size_t skip,
                                 const std::vector<size_t>& run_ends) {
  ProfileSummary s;
  const size_t runs = run_ends.size();
  if (runs == 0 || records.size() <= skip) return s;
  s.run_op_ms.resize(runs);
  std::map<std::string, double> by_op, by_node;
  std::map<std::string, size_t> op_runs;
  size_t run = 0;
  for (size_t i = skip; i < records.size(); ++i) {
    while (run + 1 < runs && i >= run_ends[run]) ++run;
    const Session::ProfileRecord& r = records[i];
    const double ms = static_cast<double>(r.duration_ns) / 1e6;
    s.run_op_ms[run][r.op] += ms;
    by_op[r.op] += ms;
    by_node[r.node + " (" + r.op + ")"] += ms;
    ++op_runs[r.op];
  }
  const double n = static_cast<double>(runs);
  for (auto& [op, ms] : by_op) {
    s.op_ms.emplace_back(op, ms / n);
    s.op_nodes[op] = static_cast<int>(op_runs[op] / runs);
  }
  for (auto& [node, ms] : by_node) s.slowest_nodes.emplace_back(node, ms / n);
  auto larger = [](const auto& a, const auto& b) { return a.second > b.second; };
  std::sort(s.op_ms.begin(), s.op_ms.end(), larger);
  std::sort(s.slowest_nodes.begin(), s.slowest_nodes.end(), larger);
  if (s.slowest_nodes.size() > 10) s.slowest_nodes.resize(10);
  return s;
}

// {"op":ms,...} from (op, ms) pairs.
template <typename Pairs>
std::string json_ms_object(const Pairs& pairs) {
  std::string out = "{";
  for (const auto& [op, ms] : pairs) {
    char value[64];
    std::snprintf(value, sizeof value, "%.4f", ms);
    out += (out.size() > 1 ? ",\"" : "\"") + json_escape(op) + "\":" + value;
  }
  return out + "}";
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  auto parsed = parse_args(argc, argv, 2,
                           {"--providers", "--provider-option", "--fallback", "--threads", "--opt-level", "--runs", "--seconds", "--warmup",
                            "--input", "--batch", "--dim", "--seed", "--max-partitions", "--min-partition-size",
                            "--max-copies", "--profile", "--io-binding"},
                           {"--json", "--strict", "--full-placement"});
  if (!parsed.ok() || parsed->positional.size() != 1) {
    std::cerr << (parsed.ok() ? "" : parsed.status().message() + "\n")
              << "usage: switchyard bench MODEL [--providers LIST] [--threads N] [--runs N | --seconds S] [--warmup N]\n"
                 "         [--input NAME=FILE.npy ...] [--batch N] [--dim SYMBOL=VALUE ...] [--profile PREFIX] [--json]\n"
                 "         [--provider-option PROVIDER:KEY=VALUE ...] [--io-binding cuda[:N]]\n"
                 "  --io-binding DEVICE: inputs are copied to DEVICE once and outputs stay there (IoBinding),\n"
                 "  so the timed runs hold no host transfers, as a GPU framework's would not\n";
    return 2;
  }
  const Args& args = *parsed;
  auto options = session_options_from(args);
  // Checked before the model loads, so a typo costs no load time. A batch
  // only sizes the first dim of inputs, as --dim sizes the others.
  auto batch = int_flag(args, "--batch", 1, 1, int64_t{1} << 31);
  auto warmup = int_flag(args, "--warmup", 3, 0, 1000000);
  auto runs = int_flag(args, "--runs", 50, 1, kMaxRuns);
  auto seconds = double_flag(args, "--seconds", 0, 0, 86400);
  for (const Status& st : {options.status(), batch.status(), warmup.status(), runs.status(), seconds.status()}) {
    if (!st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return 2;
    }
  }
  // --profile: the profiler times every node (a clock read before and after
  // each, a few tens of nanoseconds) and the timed runs' share of it is
  // summed by op type; the whole trace goes to PREFIX_<date>.json.
  const bool profiling = args.has("--profile");
  if (profiling) {
    options->enable_profiling = true;
    options->profile_file_prefix = *args.get("--profile");
  }
  const std::string& path = args.positional[0];
  const auto t0 = std::chrono::steady_clock::now();
  auto session = Session::create(path, *options);
  const auto t1 = std::chrono::steady_clock::now();
  if (!session.ok()) {
    std::cerr << "error: " << session.status().to_string() << "\n";
    return 1;
  }
  const double create_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();

  auto made = make_feeds(args, **session, *batch);
  if (!made.ok()) {
    std::cerr << "error: " << made.status().message() << "\n";
    return made.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  const std::vector<std::pair<std::string, Tensor>>& feeds = made->tensors;

  // --io-binding: the feeds on the device, every output left there.
  IoBinding binding;
  const std::optional<std::string> bind_device = args.get("--io-binding");
  if (bind_device) {
    auto device = parse_device_name(*bind_device);
    if (!device.ok()) {
      std::cerr << "error: --io-binding: " << device.status().message() << "\n";
      return 2;
    }
    for (const auto& [name, host] : feeds) {
      // Sequences and optionals stay in host memory, where their kernels run.
      Tensor value = host;
      if (host.is_tensor()) {
        auto placed = (*session)->allocate_tensor(host.dtype(), host.shape(), *device);
        Status st = placed.ok() ? (*session)->copy_tensor(host, *placed) : placed.status();
        if (!st.ok()) {
          std::cerr << "error: --io-binding: input '" << name << "': " << st.to_string() << "\n";
          return 1;
        }
        value = std::move(placed).value();
      }
      if (Status bound = binding.bind_input(name, value); !bound.ok()) {
        std::cerr << "error: --io-binding: " << bound.to_string() << "\n";
        return 1;
      }
    }
    for (const ValueInfo& o : (*session)->outputs()) {
      const Device where = o.sequence || o.optional ? kCpuDevice : *device;
      if (Status bound = binding.bind_output(o.name, where); !bound.ok()) {
        std::cerr << "error: --io-binding: " << bound.to_string() << "\n";
        return 1;
      }
    }
  }
  auto run_once = [&](double& ms) -> Status {
    const auto a = std::chrono::steady_clock::now();
    Status st = ok_status();
    if (bind_device) {
      st = (*session)->run_with_binding(binding);
    } else {
      auto out = (*session)->run(feeds);
      if (!out.ok()) st = out.status();
    }
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
    return st;
  };
  double first_ms = 0;
  if (Status st = run_once(first_ms); !st.ok()) {
    std::cerr << "error: " << st.to_string() << "\n";
    return 1;
  }
  for (int64_t i = 0; i < *warmup; ++i) {
    double ms;
    if (Status st = run_once(ms); !st.ok()) {
      std::cerr << "error: " << st.to_string() << "\n";
      return 1;
    }
  }
  const size_t profile_skip = profiling ? (*session)->profile_record_count() : 0;
  const bool by_time = args.has("--seconds");
  std::vector<double> times;
  std::vector<size_t> run_ends;  // profile records after each timed run
  const auto start = std::chrono::steady_clock::now();
  auto last_progress = start;
  for (;;) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (by_time ? elapsed >= *seconds : static_cast<int64_t>(times.size()) >= *runs) break;
    double ms;
    if (Status st = run_once(ms); !st.ok()) {
      std::cerr << "error: " << st.to_string() << "\n";
      return 1;
    }
    times.push_back(ms);
    if (profiling) run_ends.push_back((*session)->profile_record_count());
    if (!args.has("--json") && std::chrono::steady_clock::now() - last_progress > std::chrono::milliseconds(500)) {
      last_progress = std::chrono::steady_clock::now();
      std::fprintf(stderr, "\r  %zu runs, last %.3f ms   ", times.size(), ms);
    }
  }
  if (!args.has("--json")) std::fprintf(stderr, "\r%60s\r", "");
  std::sort(times.begin(), times.end());
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double median = percentile(times, 0.5), p90 = percentile(times, 0.9), p99 = percentile(times, 0.99);
  const double min = times.empty() ? 0 : times.front();
  const double throughput = total_s > 0 ? static_cast<double>(times.size()) * static_cast<double>(*batch) / total_s : 0;
  std::string providers;
  for (const std::string& p : (*session)->providers()) providers += (providers.empty() ? "" : ",") + p;
  const int threads = options->intra_op_threads;
  ProfileSummary profile;
  if (profiling) {
    profile = summarize_profile((*session)->profile_records(), profile_skip, run_ends);
    auto file = (*session)->end_profiling();
    if (!file.ok()) {
      std::cerr << "error: " << file.status().message() << "\n";
      return 1;
    }
    profile.file = *file;
  }
  if (args.has("--json")) {
    std::string extra;
    if (profiling) {
      extra = ",\"profile_file\":\"" + json_escape(profile.file) + "\",\"op_ms\":" + json_ms_object(profile.op_ms) +
              ",\"run_op_ms\":[";
      for (size_t r = 0; r < profile.run_op_ms.size(); ++r) extra += (r ? "," : "") + json_ms_object(profile.run_op_ms[r]);
      extra += "]";
    }
    std::printf(
        "{\"model\":\"%s\",\"providers\":\"%s\",\"threads\":%d,\"batch\":%lld,\"runs\":%zu,\"session_create_ms\":%.3f,"
        "\"first_run_ms\":%.3f,\"median_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"min_ms\":%.3f,"
        "\"throughput_per_s\":%.3f,\"peak_rss_mib\":%.1f,\"io_binding\":\"%s\"%s}\n",
        json_escape(path).c_str(), json_escape(providers).c_str(), threads, static_cast<long long>(*batch), times.size(),
        create_ms, first_ms, median, p90, p99, min, throughput, static_cast<double>(peak_rss_kib()) / 1024.0,
        json_escape(bind_device.value_or("")).c_str(), extra.c_str());
  } else {
    std::printf("model %s on %s, %d thread(s) (0 = one per core), batch %lld\n", path.c_str(), providers.c_str(),
                threads, static_cast<long long>(*batch));
    std::printf("  session creation %.3f ms, first run %.3f ms\n", create_ms, first_ms);
    std::printf("  %zu runs: median %.3f ms, p90 %.3f ms, p99 %.3f ms, min %.3f ms\n", times.size(), median, p90, p99,
                min);
    std::printf("  throughput %.2f items/s, peak resident memory %.1f MiB\n", throughput,
                static_cast<double>(peak_rss_kib()) / 1024.0);
    if (profiling) {
      double total = 0;
      for (const auto& [op, ms] : profile.op_ms) total += ms;
      std::printf("  profile written to %s\n  time per run by op type (timed runs):\n", profile.file.c_str());
      for (const auto& [op, ms] : profile.op_ms)
        std::printf("    %-28s %10.3f ms %6.1f %%  %d node(s)\n", op.c_str(), ms, total > 0 ? 100.0 * ms / total : 0.0,
                    profile.op_nodes[op]);
      std::printf("  slowest nodes:\n");
      for (const auto& [node, ms] : profile.slowest_nodes) std::printf("    %10.3f ms  %s\n", ms, node.c_str());
    }
  }
  return 0;
}

}  // namespace sy::cli
