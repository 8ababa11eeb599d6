// create_under_cap MODEL EXTRA_MIB: creates a session from MODEL (one
// thread, optimization off) with at most EXTRA_MIB MiB of address space more
// than this process has mapped at start (RLIMIT_AS), and prints "created" or
// the Status. RuntimeEdges.OutOfMemoryDuringCreationIsAStatus runs it: a
// fresh process, because a child forked from the test binary inherits its
// malloc arenas, whose reserved parts grow by mprotect, which RLIMIT_AS does
// not count, so after other tests a small cap never bit.
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "switchyard/session.h"

namespace {

uint64_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t extra_mib = 0;
  if (argc != 3 || std::from_chars(argv[2], argv[2] + std::strlen(argv[2]), extra_mib).ec != std::errc() ||
      extra_mib == 0 || extra_mib > 4096) {
    std::fprintf(stderr, "usage: create_under_cap MODEL EXTRA_MIB (1 to 4096)\n");
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (!file.good() && !file.eof()) {
    std::fprintf(stderr, "create_under_cap: cannot read %s\n", argv[1]);
    return 2;
  }
  const uint64_t limit = mapped_bytes() + extra_mib * 1024 * 1024;
  const rlimit cap{limit, limit};
  if (::setrlimit(RLIMIT_AS, &cap) != 0) {
    std::perror("create_under_cap: setrlimit");
    return 2;
  }
  sy::SessionOptions options;
  options.intra_op_threads = 1;
  options.optimization_level = sy::OptimizationLevel::kDisableAll;
  auto session = sy::Session::create_from_bytes(bytes.data(), bytes.size(), options);
  const std::string out = session.ok() ? std::string("created") : session.status().to_string();
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
