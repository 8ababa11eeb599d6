// ThreadPool: intra-op parallelism. parallel_for splits a range into chunks
// that the calling thread takes from the front and the workers from the
// back (TwoEndedCounter).
//
// Workers spin briefly before sleeping, because a model's nodes arrive
// microseconds apart and a futex wake-up per node would cost more than many
// small ops take. Several threads may call parallel_for at once (concurrent
// Session::run calls); their jobs share the workers. A parallel_for called
// from inside a chunk runs inline.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/function_ref.h"
#include "switchyard/status.h"

namespace sy {

// Tasks [0, n) that threads claim one at a time from either end of the
// range. Taking the caller's share from the front and the workers' from
// the back keeps the balance dynamic while every op splits its data the
// same way between the threads: the first part to the caller, the last to
// the workers, however the tasks happen to balance. That matters where the
// cores do not share a cache (vCPUs on different core complexes): the
// data an op wrote then mostly sits in the cache of the thread that reads
// it next, instead of wherever each task last happened to run.
class TwoEndedCounter {
 public:
  explicit TwoEndedCounter(int64_t n = 0) { reset(n); }  // n below 2^32
  void reset(int64_t n) { span_.store(static_cast<uint64_t>(n) << 32, std::memory_order_relaxed); }
  // The next task from the front (or back), or -1 when none is left.
  int64_t take(bool from_back);
  bool empty() const {
    const uint64_t s = span_.load(std::memory_order_relaxed);
    return (s & 0xffffffffu) >= (s >> 32);
  }

 private:
  std::atomic<uint64_t> span_{0};  // unclaimed [front, back), front in the low 32 bits
};

class ThreadPool {
 public:
  // num_threads counts the caller: 1 means no worker threads at all.
  // Returns ResourceExhausted, with every worker it started joined again,
  // when the system refuses a thread (std::thread throws std::system_error:
  // no memory for a stack, a process limit). Sessions create their pools
  // here, since their thread counts come from users.
  static Result<std::unique_ptr<ThreadPool>> create(int num_threads);
  // For small counts fixed in code (tests, constant folding): a thread the
  // system refuses leaves the pool with fewer threads instead of failing.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(begin, end) on disjoint sub-ranges covering [0, n), of near
  // equal length and at most ceil(n / min_chunk) of them, so tiny ops stay
  // on one thread. Returns when every call has returned.
  void parallel_for(int64_t n, int64_t min_chunk, FunctionRef<void(int64_t, int64_t)> fn);

  // Calls fn(lane, task) for every task in [0, tasks) on up to `lanes`
  // threads at once, each thread taking the next task when it is free (a
  // slow task holds up no fixed share of the others) and passing its lane
  // in [0, lanes), which no other thread uses meanwhile: an index into
  // per-lane scratch. The caller takes tasks from the front of the range
  // and workers from the back (TwoEndedCounter).
  void run_tasks(int64_t lanes, int64_t tasks, FunctionRef<void(int64_t, int64_t)> fn);

  // The number of hardware threads, at least 1.
  static int hardware_threads();

 private:
  struct Job {
    FunctionRef<void(int64_t, int64_t)> fn;
    int64_t n;
    int64_t chunk;
    int64_t num_chunks;
    TwoEndedCounter chunks;  // the caller takes from the front, workers from the back
    std::atomic<int64_t> done{0};
    std::atomic<int> active_workers{0};  // workers holding a pointer to this job
    Job* next_job = nullptr;
    explicit Job(FunctionRef<void(int64_t, int64_t)> f) : fn(f) {}
  };

  struct NoWorkers {};
  ThreadPool(int num_threads, NoWorkers);
  // Starts workers until num_threads_ threads exist; on a refused thread
  // it stops there and returns the error, leaving num_threads_ as it was.
  Status start_workers();
  void worker_loop();
  // Runs chunks of `job` until none are left: the caller from the front of
  // the range, workers from the back.
  static void run_chunks(Job* job, bool from_back);
  Job* acquire_job_locked();

  int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  Job* jobs_ = nullptr;                 // intrusive list, guarded by mutex_
  // Bumped (under mutex_) each time a job is posted: a worker that found
  // nothing left to claim waits for it to change, spinning on it without
  // the lock, so it never contends with the caller removing its job.
  std::atomic<uint64_t> posted_{0};
  bool stopping_ = false;
};

}  // namespace sy
