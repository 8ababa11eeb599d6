// This machine's measured FMA peak: each thread runs independent chains of
// fused multiply-adds on the widest vectors the CPU has (AVX-512, else
// AVX2) in short slices and keeps its best slice, so that a moment of
// other load on a shared machine does not lower the peak; prints one JSON
// line with GFLOP/s for 1..N threads. bench/compare builds and runs it in the same run as the models,
// so "percent of peak" compares like with like.
//
//   g++ -O3 -std=c++17 -pthread bench/fma_peak.cc -o fma_peak && ./fma_peak [max_threads]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// Enough independent FMAs to cover the latency of two FMA ports. Needs -O3:
// at -O2 GCC keeps the accumulators in memory and measures half the peak.
constexpr int kChains = 12;

__attribute__((target("avx512f"))) double run_avx512(double seconds) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  long long iterations = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    for (int rep = 0; rep < 1000; ++rep)
      for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    iterations += 1000;
  }
  float sink = 0;
  for (int i = 0; i < kChains; ++i) sink += _mm512_reduce_add_ps(acc[i]);
  if (sink == 12345.0f) std::puts("");  // keeps the loop alive
  return static_cast<double>(iterations) * kChains * 16 * 2;
}

__attribute__((target("avx2,fma"))) double run_avx2(double seconds) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(0.001f * i);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  long long iterations = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    for (int rep = 0; rep < 1000; ++rep)
      for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    iterations += 1000;
  }
  float lanes[8], sink = 0;
  for (int i = 0; i < kChains; ++i) {
    _mm256_storeu_ps(lanes, acc[i]);
    for (float v : lanes) sink += v;
  }
  if (sink == 12345.0f) std::puts("");
  return static_cast<double>(iterations) * kChains * 8 * 2;
}

}  // namespace

int main(int argc, char** argv) {
  const int max_threads = argc > 1 ? std::atoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
  const double seconds = 1.0;
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  std::printf("{\"isa\":\"%s\"", avx512 ? "AVX-512" : "AVX2+FMA");
  for (int n = 1; n <= max_threads; ++n) {
    // Each thread's best rate over short slices; the threads run together.
    std::vector<double> best(static_cast<size_t>(n), 0.0);
    std::vector<std::thread> threads;
    for (int t = 0; t < n; ++t)
      threads.emplace_back([&, t] {
        for (int slice = 0; slice < 40; ++slice) {
          const auto start = std::chrono::steady_clock::now();
          const double flops = avx512 ? run_avx512(seconds / 40) : run_avx2(seconds / 40);
          const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          best[static_cast<size_t>(t)] = std::max(best[static_cast<size_t>(t)], flops / elapsed);
        }
      });
    for (auto& th : threads) th.join();
    double total = 0;
    for (double f : best) total += f;
    std::printf(",\"gflops_%d\":%.1f", n, total / 1e9);
  }
  std::printf("}\n");
  return 0;
}
