// run_in_child: runs a piece of a test in a forked child process, for the
// checks that a call returns at all (it must not block on a FIFO or read a
// device without end) and that it stays within a memory cap. A call that
// hangs or aborts is then a test failure with a reason, not a stuck or
// crashed test binary.
//
//   auto outcome = run_in_child([&] { return load_npy(fifo).status().to_string(); }, 10);
//   ASSERT_TRUE(outcome.finished) << outcome.why;
//   EXPECT_NE(outcome.output.find("FIFO"), std::string::npos) << outcome.output;
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>

namespace sy::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

struct ChildOutcome {
  bool finished = false;  // the body returned within the time limit
  std::string output;     // what it returned
  std::string why;        // when not finished: what happened instead
};

// The address space this process has mapped now, in bytes.
inline uint64_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

// Runs `body` in a child killed after `timeout_seconds`. With
// `extra_address_space` > 0 the child may map at most that many bytes more
// than the test process has mapped already (RLIMIT_AS), so a body that tries
// to allocate more fails (or dies) instead of taking the machine's memory.
inline ChildOutcome run_in_child(const std::function<std::string()>& body, unsigned timeout_seconds,
                                 uint64_t extra_address_space = 0) {
  ChildOutcome outcome;
  int fds[2];
  if (::pipe(fds) != 0) {
    outcome.why = "pipe() failed";
    return outcome;
  }
  const uint64_t limit = extra_address_space > 0 ? mapped_bytes() + extra_address_space : 0;
  const pid_t pid = ::fork();
  if (pid < 0) {
    outcome.why = "fork() failed";
    ::close(fds[0]);
    ::close(fds[1]);
    return outcome;
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(timeout_seconds);  // SIGALRM ends the child
    if (limit > 0) {
      const rlimit cap{limit, limit};
      ::setrlimit(RLIMIT_AS, &cap);
    }
    const std::string out = body();
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;  // EOF once the child exits or is killed
    outcome.output.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    outcome.finished = true;
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    outcome.why = "did not return within " + std::to_string(timeout_seconds) + " s";
  } else if (WIFSIGNALED(status)) {
    outcome.why = "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
  } else {
    outcome.why = "exited with status " + std::to_string(WEXITSTATUS(status));
  }
  return outcome;
}

}  // namespace sy::testing
