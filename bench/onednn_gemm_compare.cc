// oneDNN's sgemm against Switchyard's packed sgemm on the matrix products of
// the bench models (BERT-like encoder, GPT-2-like decoder, ResNet-50 im2col
// shapes), one thread, best of several runs each. Not built by default:
//   g++ -O3 -std=c++20 -Isrc -Iinclude bench/onednn_gemm_compare.cc build/libswitchyard.a -ldnnl -lpthread \
//       -o /tmp/onednn_gemm_compare
//   OMP_NUM_THREADS=1 /tmp/onednn_gemm_compare
// The result decides whether oneDNN serves inside the CPU provider
// (bench/README.md, "oneDNN").
#include <dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "providers/cpu/gemm/sgemm.h"

namespace {

template <typename F>
double best_seconds(F&& f, double flops) {
  f();
  const int reps = static_cast<int>(std::max(1.0, 1e9 / flops));
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps);
  }
  return best;
}

}  // namespace

int main() {
  // M x N x K, row-major C[M x N] = A[M x K] * B[K x N]; B is the weight.
  const struct {
    const char* what;
    int64_t m, n, k;
  } shapes[] = {{"bert qkv/out proj", 128, 768, 768},   {"bert ffn up", 128, 3072, 768},
                {"bert ffn down", 128, 768, 3072},       {"gpt2 lm head", 128, 8192, 768},
                {"resnet 3x3 28x28 (W.col)", 128, 784, 1152}, {"resnet 1x1 14x14 (W.x)", 1024, 196, 256}};
  sy::ThreadPool pool(1);
  std::printf("| product | M x N x K | Switchyard GFLOP/s (B prepacked) | oneDNN sgemm GFLOP/s | Switchyard/oneDNN time |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const auto& s : shapes) {
    std::vector<float> a(static_cast<size_t>(s.m * s.k)), b(static_cast<size_t>(s.k * s.n)), c(static_cast<size_t>(s.m * s.n));
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.5f - 1.0f;
    const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    const sy::cpu::GemmPlan plan = sy::cpu::plan_sgemm(s.m, s.n, s.k, &pool, true);
    std::vector<float> ws(plan.workspace_bytes / sizeof(float) + 16);
    float* w = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(ws.data()) + 63) & ~uintptr_t{63});
    const sy::cpu::PackedMatrix pb = sy::cpu::pack_b(false, s.k, s.n, b.data(), s.n);
    const double t_sy = best_seconds(
        [&] {
          sy::cpu::sgemm_packed_b(plan, false, s.m, s.n, s.k, 1.0f, a.data(), s.k, pb, 0.0f, c.data(), s.n, &pool, w);
        },
        flops);
    const double t_dnnl = best_seconds(
        [&] {
          if (dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n, 0.0f, c.data(), s.n) !=
              dnnl_success)
            std::abort();
        },
        flops);
    std::printf("| %s | %lld x %lld x %lld | %.1f | %.1f | %.2f |\n", s.what, static_cast<long long>(s.m),
                static_cast<long long>(s.n), static_cast<long long>(s.k), flops / t_sy * 1e-9, flops / t_dnnl * 1e-9,
                t_sy / t_dnnl);
  }
  return 0;
}
