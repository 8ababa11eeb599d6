// Quick single-process sgemm throughput check; not built by default.
//   g++ -O3 -std=c++20 -Isrc -Iinclude bench/gemm_bench.cc build-<x>/libswitchyard.a -lpthread -o /tmp/gemm_bench
//   /tmp/gemm_bench [threads]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "providers/cpu/gemm/sgemm.h"

using sy::cpu::GemmIsa;

namespace {

double time_gemm(int64_t m, int64_t n, int64_t k, bool packed, sy::ThreadPool* pool) {
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), c(static_cast<size_t>(m * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) * 0.25f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.5f;
  const sy::cpu::GemmPlan plan = sy::cpu::plan_sgemm(m, n, k, pool, packed);
  std::vector<float> ws(plan.workspace_bytes / sizeof(float) + 16);
  float* w = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(ws.data()) + 63) & ~uintptr_t{63});
  sy::cpu::PackedMatrix pb = sy::cpu::pack_b(false, k, n, b.data(), n);
  auto once = [&] {
    if (packed) {
      sy::cpu::sgemm_packed_b(plan, false, m, n, k, 1.0f, a.data(), k, pb, 0.0f, c.data(), n, pool, w);
    } else {
      sy::cpu::sgemm(plan, false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n, pool, w);
    }
  };
  once();
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  int reps = static_cast<int>(std::max(1.0, 2e9 / flops));
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) once();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    best = std::min(best, s);
  }
  return flops / best * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  sy::ThreadPool pool(threads);
  const int64_t sizes[][3] = {{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048},
                              {1, 4096, 1024},  {64, 3136, 576}, {128, 784, 1152}, {384, 768, 768}};
  for (GemmIsa isa : {GemmIsa::kAvx512, GemmIsa::kAvx2, GemmIsa::kScalar}) {
    if (!sy::cpu::force_gemm_isa(isa)) continue;
    for (auto& s : sizes) {
      std::printf("%-7s %5lld x %5lld x %5lld  %7.1f GFLOP/s  packed-B %7.1f\n", sy::cpu::gemm_isa_name(isa),
                  static_cast<long long>(s[0]), static_cast<long long>(s[1]), static_cast<long long>(s[2]),
                  time_gemm(s[0], s[1], s[2], false, &pool), time_gemm(s[0], s[1], s[2], true, &pool));
    }
  }
  return 0;
}
