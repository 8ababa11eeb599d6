// Fast Fourier transforms for the signal ops (DFT and STFT): a plan per
// length, made once and run on many signals.
//
// A length whose prime factors are all small runs an iterative mixed-radix
// Stockham FFT: one pass per factor, radix 4, 2, 3 and 5 butterflies and a
// generic O(p^2) one for the other primes up to kMaxDirectRadix, ping-ponging
// between the data and a work buffer so that no bit-reversal pass is
// needed. A length with a larger prime factor runs Bluestein's chirp-z
// algorithm: the DFT rewritten as a convolution, done with power-of-two
// FFTs of length at least 2n - 1.
//
// A plan keeps its tables (twiddles, chirp, filter) in memory its caller
// provides, so that a kernel can plan once in prepare() (OwnedFftPlan) and,
// when a run needs another length than the one prepared (a length input
// whose value changed under the same shapes), plan in run()'s scratch
// memory without touching the heap.
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "core/checked_math.h"
#include "providers/cpu/scratch_carver.h"
#include "providers/kernel.h"
#include "switchyard/tensor.h"

namespace sy::cpu {

// The longest transform planned: a signal of complex doubles that a tensor
// can hold. Keeps every index product in a plan far inside int64.
inline constexpr int64_t kMaxFftLength = static_cast<int64_t>(kMaxTensorBytes / sizeof(std::complex<double>));

template <typename T>
class FftPlan {
 public:
  using Complex = std::complex<T>;

  // Complex numbers of table memory a plan of length n needs, and of work
  // memory its forward() (and planning) needs; 1 <= n <= kMaxFftLength.
  static int64_t table_size(int64_t n);
  static int64_t work_size(int64_t n);

  FftPlan() = default;
  // Plans length n: fills `tables` (table_size(n) numbers, which must stay
  // in place for the plan's life) using `work` (work_size(n) numbers) as
  // scratch while planning.
  FftPlan(int64_t n, Complex* tables, Complex* work);

  int64_t size() const { return n_; }
  bool uses_bluestein() const { return chirp_ != nullptr; }

  // data[k] = sum_j data[j] exp(-2 pi i j k / n) for k < n, in place,
  // unnormalized. `work` holds work_size(n) numbers. The inverse transform
  // is conj(forward(conj(x))) / n, which callers fold into their copies.
  void forward(Complex* data, Complex* work) const;

 private:
  // A transform whose length is a product of small radices: one Stockham
  // pass per radix, with the twiddles exp(-2 pi i k / n) for k < n.
  struct MixedRadix {
    int64_t n = 0;
    int count = 0;
    int radices[64] = {};  // a length below 2^63 has fewer than 64 factors
    const Complex* twiddles = nullptr;
  };
  static bool factor(int64_t n, MixedRadix& out);
  static void run_mixed_radix(const MixedRadix& plan, Complex* data, Complex* work);

  int64_t n_ = 0;
  MixedRadix radix_;                 // of n, or of the Bluestein length
  const Complex* chirp_ = nullptr;   // Bluestein: exp(-pi i k^2 / n), k < n
  const Complex* filter_ = nullptr;  // Bluestein: FFT of the conjugate chirp, over its length
};

// A plan with tables of its own, for plans made once (prepare(), tests).
// The tables live in a tensor, so that a length too long for the memory
// is an error rather than an exception.
template <typename T>
class OwnedFftPlan {
 public:
  static Result<std::unique_ptr<OwnedFftPlan>> create(int64_t n);
  const FftPlan<T>& plan() const { return plan_; }

 private:
  OwnedFftPlan() = default;
  Tensor tables_;
  FftPlan<T> plan_;
};

// What the DFT and STFT kernels' prepare() makes: the plan for the length
// this run's inputs give, in the precision the input's type computes in.
// run() uses it only when its length is the one it needs; any other length
// (later inputs of the same shapes with other length values) is planned in
// scratch instead (run_ffts).
struct FftPlanState final : KernelState {
  std::unique_ptr<OwnedFftPlan<float>> float_plan;
  std::unique_ptr<OwnedFftPlan<double>> double_plan;

  template <typename W>
  const FftPlan<W>* find(int64_t n) const {
    const OwnedFftPlan<W>* owned = nullptr;
    if constexpr (std::is_same_v<W, float>) owned = float_plan.get();
    else owned = double_plan.get();
    return owned != nullptr && owned->plan().size() == n ? &owned->plan() : nullptr;
  }
};

// The state with a plan of length n in compute type W.
template <typename W>
Result<std::unique_ptr<KernelState>> make_fft_state(int64_t n) {
  auto state = std::make_unique<FftPlanState>();
  SY_ASSIGN_OR_RETURN(auto owned, OwnedFftPlan<W>::create(n));
  if constexpr (std::is_same_v<W, float>) state->float_plan = std::move(owned);
  else state->double_plan = std::move(owned);
  return std::unique_ptr<KernelState>(std::move(state));
}

// Points of signal one task of run_ffts transforms at least: fewer are not
// worth handing to another thread.
inline constexpr int64_t kFftTaskPoints = 16384;

// Runs `lines` transforms of length n on the thread pool, in compute type
// W: load(line, data) fills data[0..n), the forward FFT runs in place,
// store(line, data) reads the result. The plan is the state's when it has
// length n, else one made in scratch for this run. Each thread has its
// own data and work buffers in scratch.
template <typename W, typename Load, typename Store>
Status run_ffts(KernelContext& ctx, int64_t n, int64_t lines, Load&& load, Store&& store) {
  using Complex = std::complex<W>;
  if (lines == 0) return ok_status();
  const auto* state = static_cast<const FftPlanState*>(ctx.state());
  const FftPlan<W>* plan = state != nullptr ? state->find<W>(n) : nullptr;
  const int64_t lines_per_task = std::max<int64_t>(1, kFftTaskPoints / n);
  const int64_t tasks = (lines + lines_per_task - 1) / lines_per_task;
  const int64_t lanes = std::min<int64_t>(ctx.thread_pool().num_threads(), tasks);
  const int64_t lane_size = n + FftPlan<W>::work_size(n);
  ScratchCarver carver;
  const size_t tables_at = carver.add<Complex>(plan == nullptr ? FftPlan<W>::table_size(n) : 0);
  const size_t lanes_at = carver.add<Complex>(lane_size * lanes);
  SY_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(carver.total()));
  Complex* lane_base = ScratchCarver::pointer<Complex>(scratch, lanes_at);
  FftPlan<W> run_plan;
  if (plan == nullptr) {
    run_plan = FftPlan<W>(n, ScratchCarver::pointer<Complex>(scratch, tables_at), lane_base + n);
    plan = &run_plan;
  }
  ctx.thread_pool().run_tasks(lanes, tasks, [&](int64_t lane, int64_t task) {
    Complex* data = lane_base + lane * lane_size;
    Complex* work = data + n;
    const int64_t end = std::min(lines, (task + 1) * lines_per_task);
    for (int64_t line = task * lines_per_task; line < end; ++line) {
      load(line, data);
      plan->forward(data, work);
      store(line, data);
    }
  });
  return ok_status();
}

}  // namespace sy::cpu
