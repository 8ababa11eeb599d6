// The round trip of one cache line between two threads pinned to the first
// two CPUs, in ns: about 50-60 ns where they share an L3 (one core complex
// on Zen), several hundred where they do not. A 2-vCPU cloud machine may
// have its vCPUs moved between those placements from one second to the
// next, and every runtime's 2-thread runs slow down in the second one (see
// bench/README.md), so bench/compare measures it next to each 2-thread
// run. Prints one JSON line.
//
//   g++ -O3 -std=c++17 -pthread bench/core_round_trip.cc -o core_round_trip && ./core_round_trip
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace {

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

alignas(64) std::atomic<int> g_flag{0};

}  // namespace

int main() {
  if (std::thread::hardware_concurrency() < 2) {
    std::printf("{\"round_trip_ns\": null}\n");
    return 0;
  }
  constexpr int kTrips = 50000;
  bool other_pinned = false;
  std::thread other([&] {
    other_pinned = pin(1);
    for (int i = 0; i < kTrips; ++i) {
      while (g_flag.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      g_flag.store(2 * i + 2, std::memory_order_release);
    }
  });
  const bool main_pinned = pin(0);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kTrips; ++i) {
    g_flag.store(2 * i + 1, std::memory_order_release);
    while (g_flag.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  }
  const auto t1 = std::chrono::steady_clock::now();
  other.join();
  const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / kTrips;
  if (main_pinned && other_pinned) {
    std::printf("{\"round_trip_ns\": %.1f}\n", ns);
  } else {
    std::printf("{\"round_trip_ns\": null}\n");
  }
  return 0;
}
