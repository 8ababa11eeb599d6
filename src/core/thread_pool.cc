#include "core/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <new>
#include <string>
#include <system_error>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace sy {
namespace {

thread_local bool t_inside_chunk = false;
// Which end of a range this thread takes from: workers the back, callers
// the front (set while a thread runs a job's chunks).
thread_local bool t_from_back = false;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins of a wait that pause only; after them each spin yields the CPU
// instead. A thread that spins on the CPU of the thread it waits for holds
// it until its time slice ends; yielding hands it over at once. The
// scheduler does put both on one CPU at times (a sample of a slow 46 ms
// 2-thread ResNet-50 run on the 2-vCPU bench machine found them so);
// pinned to one CPU that run took 83-88 ms before, slower than 1 thread,
// and 64-65 ms (the 1-thread time) with the yield. Unpinned 2-thread runs
// measured level (16 alternations: 34.9 ms before, 34.6 after). The pause
// spins, about 7 us on Zen 4 (26 ns a pause), cover the usual waits, which
// a system call per spin (0.6 us) would slow.
constexpr int kPauseOnlySpins = 256;

// Spins a worker makes for a job before it sleeps: the pauses, then about
// 0.5 ms of yields.
constexpr int kWorkerSpins = kPauseOnlySpins + 800;

// Spin number `spin` (from 0) of a wait.
inline void spin_once(int64_t spin) {
  if (spin < kPauseOnlySpins) {
    cpu_relax();
  } else {
    std::this_thread::yield();
  }
}

}  // namespace

int ThreadPool::hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int num_threads, NoWorkers) : num_threads_(std::max(1, num_threads)) {}

ThreadPool::ThreadPool(int num_threads) : ThreadPool(num_threads, NoWorkers{}) {
  if (!start_workers().ok()) num_threads_ = static_cast<int>(workers_.size()) + 1;
}

Status ThreadPool::start_workers() {
  const int wanted = num_threads_ - 1;
  try {
    workers_.reserve(static_cast<size_t>(wanted));
    while (static_cast<int>(workers_.size()) < wanted) workers_.emplace_back([this] { worker_loop(); });
  } catch (const std::system_error& e) {
    return Status(StatusCode::kResourceExhausted,
                  "the system refused a thread after " + std::to_string(workers_.size()) + " of the " +
                      std::to_string(wanted) + " worker threads asked for (intra-op threads " +
                      std::to_string(num_threads_) + "): " + e.what());
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kResourceExhausted, "out of memory after starting " + std::to_string(workers_.size()) +
                                                      " of the " + std::to_string(wanted) + " worker threads asked for");
  }
  return ok_status();
}

Result<std::unique_ptr<ThreadPool>> ThreadPool::create(int num_threads) {
  std::unique_ptr<ThreadPool> pool(new ThreadPool(num_threads, NoWorkers{}));
  // On failure the destructor stops and joins the workers already started.
  SY_RETURN_IF_ERROR(pool->start_workers());
  return pool;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

int64_t TwoEndedCounter::take(bool from_back) {
  uint64_t s = span_.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t front = s & 0xffffffffu, back = s >> 32;
    if (front >= back) return -1;
    const uint64_t next = from_back ? (front | (back - 1) << 32) : ((front + 1) | back << 32);
    if (span_.compare_exchange_weak(s, next, std::memory_order_relaxed))
      return static_cast<int64_t>(from_back ? back - 1 : front);
  }
}

void ThreadPool::run_chunks(Job* job, bool from_back) {
  const bool was_inside = t_inside_chunk, was_from_back = t_from_back;
  t_inside_chunk = true;
  t_from_back = from_back;
  for (;;) {
    const int64_t c = job->chunks.take(from_back);
    if (c < 0) break;
    const int64_t begin = c * job->chunk;
    const int64_t end = std::min(job->n, begin + job->chunk);
    job->fn(begin, end);
    job->done.fetch_add(1, std::memory_order_release);
  }
  t_inside_chunk = was_inside;
  t_from_back = was_from_back;
}

ThreadPool::Job* ThreadPool::acquire_job_locked() {
  for (Job* j = jobs_; j != nullptr; j = j->next_job) {
    if (!j->chunks.empty()) {
      j->active_workers.fetch_add(1, std::memory_order_acq_rel);
      return j;
    }
  }
  return nullptr;
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;  // the last value of posted_ this worker looked for jobs at
  for (;;) {
    // Spin for a short while for a job posted since the last look, then sleep.
    for (int spin = 0; spin < kWorkerSpins && posted_.load(std::memory_order_acquire) == seen; ++spin) spin_once(spin);
    Job* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || posted_.load(std::memory_order_relaxed) != seen; });
      if (stopping_) return;
      // Jobs posted later bump posted_ again, so none is missed.
      seen = posted_.load(std::memory_order_relaxed);
      job = acquire_job_locked();
    }
    // Every listed job may be fully claimed already: then wait for the next.
    while (job != nullptr) {
      run_chunks(job, true);
      job->active_workers.fetch_sub(1, std::memory_order_acq_rel);
      // Another caller's job may still have chunks to take.
      std::lock_guard<std::mutex> lock(mutex_);
      job = acquire_job_locked();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t min_chunk, FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(1, min_chunk);
  if (num_threads_ == 1 || t_inside_chunk || n <= min_chunk) {
    fn(0, n);
    return;
  }
  // A few chunks per thread balances uneven chunks without much overhead.
  const int64_t max_chunks = static_cast<int64_t>(num_threads_) * 4;
  int64_t num_chunks = std::min(max_chunks, (n + min_chunk - 1) / min_chunk);
  const int64_t chunk = (n + num_chunks - 1) / num_chunks;
  num_chunks = (n + chunk - 1) / chunk;

  Job job(fn);
  job.n = n;
  job.chunk = chunk;
  job.num_chunks = num_chunks;
  job.chunks.reset(num_chunks);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job.next_job = jobs_;
    jobs_ = &job;
    posted_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();

  run_chunks(&job, false);

  {
    std::lock_guard<std::mutex> lock(mutex_);
    Job** link = &jobs_;
    while (*link != &job) link = &(*link)->next_job;
    *link = job.next_job;
  }
  // Wait for chunks other threads are still running, then for every worker
  // to let go of its pointer to `job`, which lives on this stack frame.
  int64_t spin = 0;
  while (job.done.load(std::memory_order_acquire) < num_chunks) spin_once(spin++);
  while (job.active_workers.load(std::memory_order_acquire) > 0) spin_once(spin++);
}

void ThreadPool::run_tasks(int64_t lanes, int64_t tasks, FunctionRef<void(int64_t, int64_t)> fn) {
  if (tasks <= 0) return;
  TwoEndedCounter next(tasks);
  auto lane = [&](int64_t index) {
    for (int64_t t = next.take(t_from_back); t >= 0; t = next.take(t_from_back)) fn(index, t);
  };
  lanes = std::clamp<int64_t>(lanes, 1, tasks);
  if (lanes == 1) {
    lane(0);
    return;
  }
  parallel_for(lanes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) lane(i);
  });
}

}  // namespace sy
