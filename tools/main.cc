// The `switchyard` command line: run, inspect, doctor, bench (check to come).
#include <cstring>
#include <exception>
#include <iostream>

#include "commands.h"
#include "switchyard/session.h"

namespace {

void usage() {
  std::cerr << "switchyard " << sy::version_string()
            << " — runs ONNX models through a chain of execution providers\n\n"
               "usage: switchyard COMMAND ...\n"
               "  run MODEL [--input NAME=FILE.npy ...] [--providers LIST] [--strict]\n"
               "        run the model once (random inputs where none are given) and summarise its outputs\n"
               "  inspect MODEL [--providers LIST]\n"
               "        inputs, outputs, opsets, op histogram and the per-node provider assignment\n"
               "  doctor [MODEL] [--providers LIST]\n"
               "        for every provider: built here, loadable here, device present, and if not why and the fix\n"
               "  bench MODEL [--providers LIST] [--threads N] [--runs N | --seconds S] [--warmup N] [--batch N] [--json]\n"
               "        session creation, first run, latency median/p90/p99/min, throughput, peak memory\n"
               "  --version\n";
}

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    usage();
    return 2;
  }
  const char* cmd = argv[1];
  if (std::strcmp(cmd, "run") == 0) return sy::cli::cmd_run(argc, argv);
  if (std::strcmp(cmd, "inspect") == 0) return sy::cli::cmd_inspect(argc, argv);
  if (std::strcmp(cmd, "doctor") == 0) return sy::cli::cmd_doctor(argc, argv);
  if (std::strcmp(cmd, "bench") == 0) return sy::cli::cmd_bench(argc, argv);
  if (std::strcmp(cmd, "--version") == 0 || std::strcmp(cmd, "version") == 0) {
    std::cout << "switchyard " << sy::version_string() << "\n";
    return 0;
  }
  if (std::strcmp(cmd, "--help") == 0 || std::strcmp(cmd, "-h") == 0 || std::strcmp(cmd, "help") == 0) {
    usage();
    return 0;
  }
  std::cerr << "unknown command '" << cmd << "'\n";
  usage();
  return 2;
}

}  // namespace

// The boundary: the commands report errors as Status, but an exception from
// a library (std::bad_alloc, a std::stoi somewhere) must still end with a
// message and exit code 2, not std::terminate's abort and a core dump.
int main(int argc, char** argv) {
  try {
    return dispatch(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "error: " << (argc > 1 ? argv[1] : "switchyard") << " stopped on an unexpected exception: " << e.what()
              << "\n";
  } catch (...) {
    std::cerr << "error: " << (argc > 1 ? argv[1] : "switchyard") << " stopped on an unexpected exception of unknown type\n";
  }
  return 2;
}
