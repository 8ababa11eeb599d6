// onnx_node_tests: runs the ONNX backend node tests (one folder per test:
// model.onnx + test_data_set_*/) through Switchyard and checks the results
// against an expectations file that lists every test known not to pass.
//
// Each test runs in a forked child, so a kernel that crashes or hangs costs
// one test ("crash: signal 11", "timeout"), not the whole run.
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "providers/provider_factory.h"
#include "switchyard/doctor.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/logging.h"
#include "providers/provider_factory.h"
#include "run_test.h"
#include "switchyard/session.h"

namespace sy::conformance {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage =
    "usage: onnx_node_tests [--node-dir DIR] [--providers cpu[,...]] [--filter SUBSTRING|REGEX]\n"
    "                       [--expectations FILE] [--update-expectations] [--verbose] [--by-op]\n"
    "                       [--jobs N] [--threads N] [--timeout SECONDS] [--manifest FILE]\n"
    "                       [--reference FILE] [--show-logs] [--strict]\n"
    "                       [--provider-option PROVIDER:KEY=VALUE ...]\n"
    "\n"
    "Runs every ONNX backend node test in DIR (sorted by name) and compares the\n"
    "results with the expectations file: one line `test_name<TAB>reason` per test\n"
    "that is known not to pass. Exits 1 when a test not listed there fails, or a\n"
    "listed test passes; --update-expectations rewrites the file instead.\n"
    "\n"
    "  --node-dir DIR          the node test folders (default: " SY_ONNX_NODE_TESTS ")\n"
    "  --providers LIST        provider priority list, comma separated (default: cpu)\n"
    "  --filter PATTERN        run only tests whose name matches (POSIX extended regex,\n"
    "                          or a plain substring when it is not a valid regex)\n"
    "  --skip-unavailable      exit 77 (skipped) when a listed provider cannot run here\n"
    "  --strict                strict fallback policy: a node the first provider declines fails\n"
    "                          its test (shape arithmetic kept on the host by design does not)\n"
    "  --provider-option P:K=V an option for provider P of --providers (cuda:use_tf32=0)\n"
    "  --expectations FILE     default: " SY_CONFORMANCE_EXPECTATIONS_DIR "/<providers>.tsv\n"
    "  --update-expectations   rewrite FILE from this run's results and exit 0\n"
    "  --verbose               one line per test: PASS name / FAIL name: reason\n"
    "  --by-op                 per op type: passed/total, and failures that ONNX Runtime passes\n"
    "  --jobs N                tests run in parallel (default 2)\n"
    "  --threads N             intra-op threads per session (default 1)\n"
    "  --timeout SECONDS       per test, after which the child is killed (default 60)\n"
    "  --manifest FILE         for --by-op (default: DIR/../manifest.tsv)\n"
    "  --reference FILE        ONNX Runtime results for --by-op (default: DIR/../reference-onnxruntime-1.30.tsv)\n"
    "  --show-logs             let the runtime's warnings through to stderr\n";

struct Options {
  std::string node_dir = SY_ONNX_NODE_TESTS;
  std::string providers = "cpu";
  std::string filter;
  std::string expectations;
  std::string manifest;
  std::string reference;
  bool update = false;
  bool verbose = false;
  bool by_op = false;
  bool show_logs = false;
  bool skip_unavailable = false;
  bool strict = false;
  std::vector<std::string> provider_options;
  int jobs = 2;
  int threads = 1;
  int timeout_s = 60;
};

struct TestResult {
  bool pass = false;
  std::string reason;
};

bool parse_int(const std::string& text, int min_value, int* out) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || v < min_value || v > 100000) return false;
  *out = static_cast<int>(v);
  return true;
}

// Returns false (after printing why) on a bad command line.
bool parse_args(int argc, char** argv, Options* opt, bool* help) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "onnx_node_tests: %s needs a value\n", arg.c_str());
        return false;
      }
      *out = argv[++i];
      return true;
    };
    auto int_value = [&](int min_value, int* out) {
      std::string text;
      if (!value(&text)) return false;
      if (parse_int(text, min_value, out)) return true;
      std::fprintf(stderr, "onnx_node_tests: %s expects an integer >= %d, got '%s'\n", arg.c_str(), min_value,
                   text.c_str());
      return false;
    };
    bool ok = true;
    if (arg == "--node-dir") ok = value(&opt->node_dir);
    else if (arg == "--providers") ok = value(&opt->providers);
    else if (arg == "--filter") ok = value(&opt->filter);
    else if (arg == "--expectations") ok = value(&opt->expectations);
    else if (arg == "--manifest") ok = value(&opt->manifest);
    else if (arg == "--reference") ok = value(&opt->reference);
    else if (arg == "--update-expectations") opt->update = true;
    else if (arg == "--verbose" || arg == "-v") opt->verbose = true;
    else if (arg == "--by-op") opt->by_op = true;
    else if (arg == "--show-logs") opt->show_logs = true;
    else if (arg == "--skip-unavailable") opt->skip_unavailable = true;
    else if (arg == "--strict") opt->strict = true;
    else if (arg == "--provider-option") {
      std::string item;
      ok = value(&item);
      if (ok) opt->provider_options.push_back(item);
    }
    else if (arg == "--jobs" || arg == "-j") ok = int_value(1, &opt->jobs);
    else if (arg == "--threads") ok = int_value(0, &opt->threads);
    else if (arg == "--timeout") ok = int_value(1, &opt->timeout_s);
    else if (arg == "--help" || arg == "-h") *help = true;
    else {
      std::fprintf(stderr, "onnx_node_tests: unknown argument '%s'\n\n%s", arg.c_str(), kUsage);
      return false;
    }
    if (!ok) return false;
  }
  return true;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// Which of `names` (canonical) can run here, asked in a child process:
// creating a device provider initializes its driver (cuInit), and a CUDA
// context does not survive fork(), so the runner's own process must not
// touch it before forking the tests. Returns one reason per name, empty
// when available; nullopt when the probe itself failed.
std::optional<std::vector<std::string>> probe_availability(const std::vector<std::string>& names) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::vector<std::string> available = available_providers();
    std::string message;
    for (const std::string& name : names) {
      std::string reason;
      if (std::find(available.begin(), available.end(), name) == available.end()) {
        const ProviderDiagnosis d = diagnose_provider(name);
        reason = "no " + d.short_name + " device here (" + d.name + "): " + (d.reason.empty() ? "unavailable" : d.reason);
        std::replace(reason.begin(), reason.end(), '\n', ' ');
      }
      message += reason + "\n";
    }
    size_t done = 0;
    while (done < message.size()) {
      const ssize_t n = write(fds[1], message.data() + done, message.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) _exit(3);
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return std::nullopt;
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) text.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  std::vector<std::string> reasons;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) reasons.push_back(line);
  if (reasons.size() != names.size()) return std::nullopt;
  return reasons;
}

// Resolves the provider list and refuses providers that cannot load here:
// a conformance run that silently falls back to CPU would test the wrong thing.
// With skip_unavailable, an unavailable provider makes it print why and
// set *skipped instead of failing. `options` are PROVIDER:KEY=VALUE items.
bool resolve_providers(const std::string& list, const std::vector<std::string>& options,
                       std::vector<ProviderRequest>* out, bool skip_unavailable = false, bool* skipped = nullptr) {
  std::vector<std::string> canonical_names;
  for (const std::string& name : split(list, ',')) {
    Result<std::string> canonical = canonical_provider_name(name);
    if (!canonical.ok()) {
      std::fprintf(stderr, "onnx_node_tests: %s\n", canonical.status().to_string().c_str());
      return false;
    }
    canonical_names.push_back(*canonical);
    out->push_back({name, {}});
  }
  if (out->empty()) {
    std::fprintf(stderr, "onnx_node_tests: --providers names no provider\n");
    return false;
  }
  for (const std::string& item : options) {
    if (Status st = apply_provider_option(item, *out); !st.ok()) {
      std::fprintf(stderr, "onnx_node_tests: %s\n", st.message().c_str());
      return false;
    }
  }
  const std::optional<std::vector<std::string>> reasons = probe_availability(canonical_names);
  if (!reasons) {
    std::fprintf(stderr, "onnx_node_tests: could not ask a child process which providers can run here\n");
    return false;
  }
  for (size_t k = 0; k < canonical_names.size(); ++k) {
    const std::string& why = (*reasons)[k];
    if (why.empty()) continue;
    if (skip_unavailable) {
      // ctest counts exit 77 as skipped, never as passed.
      std::printf("skipped: %s\n0 passed, 0 failed, all skipped\n", why.c_str());
      *skipped = true;
      return false;
    }
    std::fprintf(stderr, "onnx_node_tests: provider '%s' is not available here (%s); `switchyard doctor` says why\n",
                 canonical_names[k].c_str(), why.c_str());
    return false;
  }
  return true;
}

class NameFilter {
 public:
  explicit NameFilter(const std::string& pattern) : pattern_(pattern) {
    if (!pattern.empty()) compiled_ = regcomp(&regex_, pattern.c_str(), REG_EXTENDED | REG_NOSUB) == 0;
  }
  ~NameFilter() {
    if (compiled_) regfree(&regex_);
  }
  NameFilter(const NameFilter&) = delete;
  NameFilter& operator=(const NameFilter&) = delete;

  bool matches(const std::string& name) const {
    if (pattern_.empty()) return true;
    if (compiled_) return regexec(&regex_, name.c_str(), 0, nullptr, 0) == 0;
    return name.find(pattern_) != std::string::npos;
  }

 private:
  std::string pattern_;
  regex_t regex_{};
  bool compiled_ = false;
};

// ---- running tests in child processes -------------------------------------

struct Child {
  size_t index = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string message;
  Clock::time_point start;
};

[[noreturn]] void child_main(int fd, const std::string& test_dir, const TestConfig& config) {
  const std::string reason = run_node_test(test_dir, config);
  const std::string message = reason.empty() ? "P\n" : "F" + reason + "\n";
  size_t done = 0;
  while (done < message.size()) {
    const ssize_t n = write(fd, message.data() + done, message.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);
    done += static_cast<size_t>(n);
  }
  // _exit: the child must not run the parent's atexit handlers or flush its
  // copies of the parent's stdio buffers.
  _exit(0);
}

TestResult result_from_exit(int wait_status, const std::string& message) {
  if (WIFSIGNALED(wait_status)) return {false, "crash: signal " + std::to_string(WTERMSIG(wait_status))};
  if (!WIFEXITED(wait_status)) return {false, "crash: unknown wait status " + std::to_string(wait_status)};
  if (WEXITSTATUS(wait_status) != 0 || message.empty())
    return {false, "crash: exit code " + std::to_string(WEXITSTATUS(wait_status)) + " without a result"};
  std::string line = message.substr(0, message.find('\n'));
  if (line == "P") return {true, {}};
  if (!line.empty() && line[0] == 'F') return {false, line.substr(1)};
  return {false, "crash: garbled result '" + one_line(line) + "'"};
}

// Runs tests[i] for every i, `jobs` at a time; `on_result(i, result)` is
// called as each one finishes (in completion order).
template <typename OnResult>
void run_all(const std::vector<std::string>& test_dirs, const Options& opt, const TestConfig& config,
             OnResult on_result) {
  std::vector<Child> running;
  size_t next = 0;
  const auto timeout = std::chrono::seconds(opt.timeout_s);
  while (next < test_dirs.size() || !running.empty()) {
    while (running.size() < static_cast<size_t>(opt.jobs) && next < test_dirs.size()) {
      int fds[2];
      if (pipe(fds) != 0) {
        on_result(next, TestResult{false, std::string("runner: pipe failed: ") + std::strerror(errno)});
        ++next;
        continue;
      }
      std::fflush(stdout);
      std::fflush(stderr);
      const pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        for (const Child& c : running) close(c.fd);
        child_main(fds[1], test_dirs[next], config);
      }
      close(fds[1]);
      if (pid < 0) {
        close(fds[0]);
        on_result(next, TestResult{false, std::string("runner: fork failed: ") + std::strerror(errno)});
        ++next;
        continue;
      }
      running.push_back({next, pid, fds[0], {}, Clock::now()});
      ++next;
    }

    std::vector<pollfd> pfds;
    pfds.reserve(running.size());
    for (const Child& c : running) pfds.push_back({c.fd, POLLIN, 0});
    poll(pfds.data(), pfds.size(), 200);

    const auto now = Clock::now();
    for (size_t k = 0; k < running.size();) {
      Child& c = running[k];
      bool finished = false;
      TestResult result;
      if ((pfds[k].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        char buf[4096];
        const ssize_t n = read(c.fd, buf, sizeof(buf));
        if (n > 0) {
          c.message.append(buf, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          int status = 0;
          while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
          }
          result = result_from_exit(status, c.message);
          finished = true;
        }
      }
      if (!finished && now - c.start > timeout) {
        kill(c.pid, SIGKILL);
        int status = 0;
        while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
        }
        result = {false, "timeout after " + std::to_string(opt.timeout_s) + " s"};
        finished = true;
      }
      if (finished) {
        close(c.fd);
        const size_t index = c.index;
        running[k] = std::move(running.back());
        running.pop_back();
        pfds[k] = pfds.back();
        pfds.pop_back();
        on_result(index, result);
      } else {
        ++k;
      }
    }
  }
}

// ---- expectations ---------------------------------------------------------

struct Expectations {
  bool found = false;
  std::map<std::string, std::string> reasons;  // test name -> reason
};

Expectations read_expectations(const std::string& path) {
  Expectations e;
  std::ifstream in(path);
  if (!in) return e;
  e.found = true;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) e.reasons[line] = "";
    else e.reasons[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return e;
}

bool write_expectations(const std::string& path, const std::map<std::string, std::string>& reasons,
                        const std::string& providers) {
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  std::ofstream out(path, std::ios::trunc);
  if (!out) return false;
  out << "# ONNX backend node tests that do not pass with --providers " << providers
      << ": test_name<TAB>reason.\n"
      << "# Written by `onnx_node_tests --update-expectations`; see tests/conformance/README.md.\n";
  for (const auto& [name, reason] : reasons) out << name << '\t' << reason << '\n';
  out.close();
  return static_cast<bool>(out);
}

// ---- per-op summary ---------------------------------------------------------

// Rows of a TSV file with a header: test_name column -> the `column` value.
std::map<std::string, std::string> read_tsv_column(const std::string& path, const std::string& column) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return out;
  std::vector<std::string> header;
  {
    std::istringstream h(line);
    std::string cell;
    while (std::getline(h, cell, '\t')) header.push_back(cell);
  }
  const auto name_it = std::find(header.begin(), header.end(), "test_name");
  const auto col_it = std::find(header.begin(), header.end(), column);
  if (name_it == header.end() || col_it == header.end()) return out;
  const size_t name_col = static_cast<size_t>(name_it - header.begin());
  const size_t value_col = static_cast<size_t>(col_it - header.begin());
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream r(line);
    std::string cell;
    while (std::getline(r, cell, '\t')) cells.push_back(cell);
    if (cells.size() > std::max(name_col, value_col)) out[cells[name_col]] = cells[value_col];
  }
  return out;
}

void print_by_op(const std::vector<std::string>& names, const std::vector<TestResult>& results,
                 const Options& opt) {
  const fs::path shared = fs::path(opt.node_dir).parent_path();
  const std::string manifest_path = opt.manifest.empty() ? (shared / "manifest.tsv").string() : opt.manifest;
  const std::string reference_path =
      opt.reference.empty() ? (shared / "reference-onnxruntime-1.30.tsv").string() : opt.reference;
  const auto op_types = read_tsv_column(manifest_path, "op_types");
  const auto reference = read_tsv_column(reference_path, "result");
  if (op_types.empty()) {
    std::printf("--by-op: cannot read op types from %s\n", manifest_path.c_str());
    return;
  }
  if (reference.empty()) std::printf("--by-op: no ONNX Runtime results in %s\n", reference_path.c_str());

  struct Row {
    int passed = 0;
    int total = 0;
    int ort_pass_fail_here = 0;
  };
  std::map<std::string, Row> rows;
  std::vector<std::string> ort_only;
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = op_types.find(names[i]);
    const std::vector<std::string> ops = it == op_types.end() ? std::vector<std::string>{"(not in manifest)"}
                                                             : split(it->second, ',');
    auto ref = reference.find(names[i]);
    const bool ort_pass = ref != reference.end() && ref->second == "pass";
    if (ort_pass && !results[i].pass) ort_only.push_back(names[i]);
    for (const std::string& op : std::set<std::string>(ops.begin(), ops.end())) {
      Row& row = rows[op];
      ++row.total;
      if (results[i].pass) ++row.passed;
      if (ort_pass && !results[i].pass) ++row.ort_pass_fail_here;
    }
  }
  std::printf("\n%-32s %9s %6s  %s\n", "op type", "passed", "total", "fail here, pass in ORT 1.30");
  for (const auto& [op, row] : rows) {
    std::printf("%-32s %9d %6d  %d\n", op.c_str(), row.passed, row.total, row.ort_pass_fail_here);
  }
  std::printf("%zu tests fail here that ONNX Runtime 1.30 passes\n", ort_only.size());
}

int run_main(int argc, char** argv) {
  Options opt;
  bool help = false;
  if (!parse_args(argc, argv, &opt, &help)) return 2;
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!opt.show_logs) set_log_callback([](LogSeverity, std::string_view, std::string_view) {});

  TestConfig config;
  config.intra_op_threads = opt.threads;
  config.strict = opt.strict;
  bool provider_missing = false;
  if (!resolve_providers(opt.providers, opt.provider_options, &config.providers, opt.skip_unavailable,
                         &provider_missing))
    return provider_missing ? 77 : 2;
  if (opt.expectations.empty()) {
    std::string file = opt.providers;
    std::replace(file.begin(), file.end(), ',', '-');
    opt.expectations = std::string(SY_CONFORMANCE_EXPECTATIONS_DIR) + "/" + file + ".tsv";
  }

  std::error_code ec;
  std::vector<std::string> all_names;
  for (const auto& entry : fs::directory_iterator(opt.node_dir, ec)) {
    if (entry.is_directory()) all_names.push_back(entry.path().filename().string());
  }
  if (ec || all_names.empty()) {
    std::fprintf(stderr, "onnx_node_tests: no test folders in %s%s%s\n", opt.node_dir.c_str(), ec ? ": " : "",
                 ec ? ec.message().c_str() : "");
    return 2;
  }
  std::sort(all_names.begin(), all_names.end());

  const NameFilter filter(opt.filter);
  std::vector<std::string> names;
  std::vector<std::string> dirs;
  for (const std::string& name : all_names) {
    if (!filter.matches(name)) continue;
    names.push_back(name);
    dirs.push_back((fs::path(opt.node_dir) / name).string());
  }
  const size_t skipped = all_names.size() - names.size();

  const auto start = Clock::now();
  std::vector<std::optional<TestResult>> slots(names.size());
  size_t next_to_print = 0;
  run_all(dirs, opt, config, [&](size_t index, TestResult result) {
    slots[index] = std::move(result);
    // Print in name order, whatever order the children finish in.
    while (next_to_print < slots.size() && slots[next_to_print].has_value()) {
      const TestResult& r = *slots[next_to_print];
      if (opt.verbose) {
        if (r.pass) std::printf("PASS %s\n", names[next_to_print].c_str());
        else std::printf("FAIL %s: %s\n", names[next_to_print].c_str(), r.reason.c_str());
        std::fflush(stdout);
      }
      ++next_to_print;
    }
  });
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  std::vector<TestResult> results;
  results.reserve(slots.size());
  for (auto& s : slots) results.push_back(std::move(*s));

  size_t passed = 0;
  size_t crashed = 0;
  for (const TestResult& r : results) {
    if (r.pass) ++passed;
    if (!r.pass && (r.reason.rfind("crash:", 0) == 0 || r.reason.rfind("timeout", 0) == 0)) ++crashed;
  }

  Expectations expected = read_expectations(opt.expectations);
  std::vector<std::string> newly_failing;
  std::vector<std::string> newly_passing;
  size_t reason_changed = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = expected.reasons.find(names[i]);
    const bool listed = it != expected.reasons.end();
    if (!results[i].pass && !listed) newly_failing.push_back(names[i] + ": " + results[i].reason);
    if (results[i].pass && listed) newly_passing.push_back(names[i]);
    if (!results[i].pass && listed && it->second != results[i].reason) ++reason_changed;
  }
  const std::set<std::string> known(all_names.begin(), all_names.end());
  std::vector<std::string> stale;
  for (const auto& [name, reason] : expected.reasons) {
    if (known.count(name) == 0) stale.push_back(name);
  }

  if (opt.by_op) print_by_op(names, results, opt);

  if (crashed > 0) {
    std::printf("\ncrashed or timed out (%zu):\n", crashed);
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string& reason = results[i].reason;
      if (!results[i].pass && (reason.rfind("crash:", 0) == 0 || reason.rfind("timeout", 0) == 0))
        std::printf("  %s: %s\n", names[i].c_str(), reason.c_str());
    }
  }

  if (opt.update) {
    // Entries for tests this run did not cover (--filter) stay as they were.
    std::map<std::string, std::string> updated;
    const std::set<std::string> ran(names.begin(), names.end());
    for (const auto& [name, reason] : expected.reasons) {
      if (ran.count(name) == 0 && known.count(name) != 0) updated[name] = reason;
    }
    for (size_t i = 0; i < names.size(); ++i) {
      if (!results[i].pass) updated[names[i]] = results[i].reason;
    }
    if (!write_expectations(opt.expectations, updated, opt.providers)) {
      std::fprintf(stderr, "onnx_node_tests: cannot write %s\n", opt.expectations.c_str());
      return 2;
    }
    std::printf("\nwrote %zu expectations to %s\n", updated.size(), opt.expectations.c_str());
  } else {
    if (!expected.found)
      std::printf("\nno expectations file at %s: every failing test counts as newly failing\n",
                  opt.expectations.c_str());
    if (!newly_failing.empty()) {
      std::printf("\nnewly failing (%zu): not in %s\n", newly_failing.size(), opt.expectations.c_str());
      for (const std::string& line : newly_failing) std::printf("  %s\n", line.c_str());
    }
    if (!newly_passing.empty()) {
      std::printf("\nnewly passing (%zu): remove it from the expectations\n", newly_passing.size());
      for (const std::string& name : newly_passing) std::printf("  %s\n", name.c_str());
    }
    if (!stale.empty()) {
      std::printf("\n%zu expectations name tests that do not exist in %s:\n", stale.size(), opt.node_dir.c_str());
      for (const std::string& name : stale) std::printf("  %s\n", name.c_str());
    }
  }

  std::printf("\n%zu passed, %zu failed, %zu skipped\n", passed, results.size() - passed, skipped);
  std::printf("%zu newly failing, %zu newly passing, %zu failing with another reason than expected; %.1f s\n",
              newly_failing.size(), newly_passing.size(), reason_changed, seconds);
  if (opt.update) return 0;
  return newly_failing.empty() && newly_passing.empty() ? 0 : 1;
}

}  // namespace
}  // namespace sy::conformance

int main(int argc, char** argv) { return sy::conformance::run_main(argc, argv); }
