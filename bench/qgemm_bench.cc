// Quick single-thread check of the 8-bit GEMM (every variant this CPU
// runs) against the float sgemm on the same sizes; not built by default.
//   g++ -O3 -std=c++20 -Isrc -Iinclude bench/qgemm_bench.cc build/libswitchyard.a -lpthread -o /tmp/qgemm_bench
//   /tmp/qgemm_bench [size]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "providers/cpu/gemm/qgemm.h"
#include "providers/cpu/gemm/sgemm.h"

namespace {

template <typename F>
double best_seconds(F&& once) {
  once();
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) once();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 5);
  }
  return best;
}

struct Sink {
  int32_t* c;
  int64_t ldc;
};

void store(const int32_t* tile, int64_t m0, int64_t rows, int64_t n0, int64_t cols, const void* arg) {
  const Sink& s = *static_cast<const Sink*>(arg);
  for (int64_t i = 0; i < rows; ++i) {
    const int32_t* row = tile + i * sy::cpu::kQgemmTileCols;
    std::copy(row, row + cols, s.c + (m0 + i) * s.ldc + n0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 512;
  std::vector<uint8_t> a(static_cast<size_t>(n * n)), b(static_cast<size_t>(n * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 7), b[i] = static_cast<uint8_t>(i * 13);
  const int64_t k4 = sy::cpu::qgemm_depth(n);
  std::vector<uint8_t> rows(static_cast<size_t>(n * k4));
  std::vector<int32_t> sums(static_cast<size_t>(n)), c(static_cast<size_t>(n * n));
  std::vector<int8_t> packed(static_cast<size_t>(sy::cpu::qgemm_packed_b_bytes(n, n)));
  sy::cpu::qgemm_pack_b(b.data(), n, 1, n, n, 0, packed.data(), sums.data());
  Sink sink{c.data(), n};
  const char* names[] = {"portable", "avx2", "avx512", "avx512-vnni"};
  for (int v = 0; v < 4; ++v) {
    const auto variant = static_cast<sy::cpu::QgemmVariant>(v);
    if (!sy::cpu::qgemm_variant_supported(variant)) continue;
    const double s = best_seconds([&] {
      sy::cpu::qgemm_pack_a(a.data(), n, n, n, 0, rows.data(), sums.data());
      sy::cpu::qgemm_u8s8(rows.data(), k4, n, packed.data(), n, 0, n, &store, &sink, variant);
    });
    std::printf("qgemm %-12s %lld^3: %8.3f ms  %6.1f GOP/s\n", names[v], static_cast<long long>(n), s * 1e3,
                2.0 * n * n * n / s * 1e-9);
  }
  std::vector<float> fa(a.begin(), a.end()), fb(b.begin(), b.end()), fc(static_cast<size_t>(n * n));
  const sy::cpu::GemmPlan plan = sy::cpu::plan_sgemm(n, n, n, nullptr, true);
  std::vector<float> ws(plan.workspace_bytes / sizeof(float) + 16);
  float* w = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(ws.data()) + 63) & ~uintptr_t{63});
  sy::cpu::PackedMatrix pb = sy::cpu::pack_b(false, n, n, fb.data(), n);
  const double s = best_seconds(
      [&] { sy::cpu::sgemm_packed_b(plan, false, n, n, n, 1.0f, fa.data(), n, pb, 0.0f, fc.data(), n, nullptr, w); });
  std::printf("sgemm packed       %lld^3: %8.3f ms  %6.1f GFLOP/s\n", static_cast<long long>(n), s * 1e3,
              2.0 * n * n * n / s * 1e-9);
  return 0;
}
