// ThreadPool::parallel_for and TwoEndedCounter: every index exactly once,
// whatever the thread count, and the two ends of the range each on its own
// thread.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/thread_pool.h"

namespace sy {
namespace {

TEST(ThreadPoolTest, ParallelForCoversTheRangeOnce) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    for (int64_t n : {1, 2, 7, 8, 9, 100, 1001}) {
      for (int64_t min_chunk : {1, 3, 64}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        std::atomic<int64_t> calls{0};
        pool.parallel_for(n, min_chunk, [&](int64_t begin, int64_t end) {
          if (begin >= end) return;  // counted as a miss below
          for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
          calls.fetch_add(1);
        });
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "i " << i << " n " << n << " threads " << threads;
        // No more ranges than ceil(n / min_chunk): tiny ops stay whole.
        EXPECT_LE(calls.load(), (n + min_chunk - 1) / min_chunk) << "n " << n << " min_chunk " << min_chunk;
      }
    }
  }
}

// The calling thread takes chunks from the front, workers from the back:
// the caller's indices are a prefix of the range and the workers' the rest,
// however the threads happen to interleave.
TEST(ThreadPoolTest, CallerTakesTheFrontOfTheRange) {
  ThreadPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  for (int rep = 0; rep < 200; ++rep) {
    const int64_t n = 64;
    std::vector<int> by_caller(static_cast<size_t>(n), -1);
    pool.parallel_for(n, 1, [&](int64_t begin, int64_t end) {
      const int mine = std::this_thread::get_id() == caller ? 1 : 0;
      for (int64_t i = begin; i < end; ++i) by_caller[static_cast<size_t>(i)] = mine;
    });
    int64_t prefix = 0;
    while (prefix < n && by_caller[static_cast<size_t>(prefix)] == 1) ++prefix;
    for (int64_t i = prefix; i < n; ++i) ASSERT_EQ(by_caller[static_cast<size_t>(i)], 0) << "rep " << rep << " i " << i;
  }
}

TEST(ThreadPoolTest, NestedParallelForRunsInline) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  pool.parallel_for(8, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int inner_calls = 0;
      pool.parallel_for(10, 1, [&](int64_t b, int64_t e) {
        ++inner_calls;  // inline: one call covering everything, on this thread
        total.fetch_add(e - b);
      });
      EXPECT_EQ(inner_calls, 1);
    }
  });
  EXPECT_EQ(total.load(), 80);
}

// run_tasks: every task once, lanes in [0, lanes) never in use by two
// threads at once (they index per-lane scratch), and the caller's tasks a
// prefix of the range.
TEST(ThreadPoolTest, RunTasksGivesEachLaneToOneThreadAtATime) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    const std::thread::id caller = std::this_thread::get_id();
    for (int64_t lanes : {1, 2, 3, 8}) {
      for (int64_t tasks : {1, 2, 5, 200}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(tasks));
        std::vector<int> by_caller(static_cast<size_t>(tasks), -1);
        std::vector<std::atomic<int>> in_use(static_cast<size_t>(lanes));
        std::atomic<bool> lane_shared{false}, lane_out_of_range{false};
        pool.run_tasks(lanes, tasks, [&](int64_t lane, int64_t t) {
          if (lane < 0 || lane >= lanes) {
            lane_out_of_range = true;
            return;
          }
          if (in_use[static_cast<size_t>(lane)].fetch_add(1) != 0) lane_shared = true;
          hits[static_cast<size_t>(t)].fetch_add(1);
          by_caller[static_cast<size_t>(t)] = std::this_thread::get_id() == caller ? 1 : 0;
          in_use[static_cast<size_t>(lane)].fetch_sub(1);
        });
        ASSERT_FALSE(lane_out_of_range) << "lanes " << lanes;
        ASSERT_FALSE(lane_shared) << "lanes " << lanes << " threads " << threads;
        for (int64_t t = 0; t < tasks; ++t) ASSERT_EQ(hits[static_cast<size_t>(t)].load(), 1) << "task " << t;
        int64_t prefix = 0;
        while (prefix < tasks && by_caller[static_cast<size_t>(prefix)] == 1) ++prefix;
        for (int64_t t = prefix; t < tasks; ++t) ASSERT_EQ(by_caller[static_cast<size_t>(t)], 0) << "task " << t;
      }
    }
  }
}

TEST(TwoEndedCounterTest, EndsMeetWithoutOverlap) {
  TwoEndedCounter c(5);
  EXPECT_EQ(c.take(false), 0);
  EXPECT_EQ(c.take(true), 4);
  EXPECT_EQ(c.take(true), 3);
  EXPECT_EQ(c.take(false), 1);
  EXPECT_FALSE(c.empty());
  EXPECT_EQ(c.take(true), 2);
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.take(false), -1);
  EXPECT_EQ(c.take(true), -1);
  c.reset(0);
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.take(false), -1);
}

TEST(TwoEndedCounterTest, ConcurrentTakersClaimEachTaskOnce) {
  const int64_t n = 100000;
  TwoEndedCounter c(n);
  std::vector<uint8_t> owner(static_cast<size_t>(n), 0);
  auto run = [&](bool from_back) {
    for (int64_t t = c.take(from_back); t >= 0; t = c.take(from_back)) owner[static_cast<size_t>(t)] += from_back ? 2 : 1;
  };
  std::thread back(run, true);
  run(false);
  back.join();
  // Each task claimed once: front tasks then back tasks, no gap, no overlap.
  int64_t i = 0;
  while (i < n && owner[static_cast<size_t>(i)] == 1) ++i;
  for (; i < n; ++i) ASSERT_EQ(owner[static_cast<size_t>(i)], 2) << "task " << i;
}

}  // namespace
}  // namespace sy
