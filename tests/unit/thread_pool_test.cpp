// The runtime stub's thread pool (runtime_stub/aotc_threads.h): every part of every run runs
// exactly once and is finished when aotc_pool_run returns, also when
// some parts are slow and when runs follow each other with no gap or after the workers have gone
// to sleep. (Which thread runs which part depends on scheduling and is not asserted.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "runtime_stub/aotc_threads.h"

namespace {

struct Counts {
  std::vector<std::atomic<int>> runs_of_part;
  std::atomic<int> total{0};
  explicit Counts(int parts) : runs_of_part(parts) {}
};

TEST(ThreadPool, EveryPartRunsOncePerRun) {
  for (int threads : {2, 3, 8}) {
    aotc_thread_pool pool;
    ASSERT_EQ(aotc_pool_start(&pool, threads), AOTC_OK);
    for (int run = 0; run < 2000; ++run) {
      Counts counts(threads);
      aotc_parallel(&pool, [&](int part) {
        ASSERT_GE(part, 0);
        ASSERT_LT(part, threads);
        counts.runs_of_part[part].fetch_add(1);
        counts.total.fetch_add(1);
      });
      // Finished when the run returns: no part still running or yet to start.
      for (int p = 0; p < threads; ++p) ASSERT_EQ(counts.runs_of_part[p].load(), 1) << "run " << run;
      ASSERT_EQ(counts.total.load(), threads);
    }
    aotc_pool_stop(&pool);
  }
}

TEST(ThreadPool, SlowPartsDoNotLoseOrRepeatParts) {
  // One slow part per run (its thread claims nothing more meanwhile; the free threads claim the
  // rest, which parts they take depends on scheduling): still every part exactly once.
  constexpr int kThreads = 4;
  aotc_thread_pool pool;
  ASSERT_EQ(aotc_pool_start(&pool, kThreads), AOTC_OK);
  for (int run = 0; run < 40; ++run) {
    const int slow = run % kThreads;
    Counts counts(kThreads);
    aotc_parallel(&pool, [&](int part) {
      if (part == slow) std::this_thread::sleep_for(std::chrono::microseconds(500));
      counts.runs_of_part[part].fetch_add(1);
    });
    for (int p = 0; p < kThreads; ++p) ASSERT_EQ(counts.runs_of_part[p].load(), 1) << "run " << run;
  }
  aotc_pool_stop(&pool);
}

TEST(ThreadPool, RunsAfterTheWorkersSleepAndRestart) {
  aotc_thread_pool pool;
  for (int start = 0; start < 3; ++start) {
    ASSERT_EQ(aotc_pool_start(&pool, 2), AOTC_OK);
    for (int run = 0; run < 5; ++run) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the workers' 1 ms spin
      std::vector<int> parts(2, 0);
      aotc_parallel(&pool, [&](int part) { parts[part] += 1; });
      EXPECT_EQ(parts[0], 1);
      EXPECT_EQ(parts[1], 1);
    }
    aotc_pool_stop(&pool);
  }
}

TEST(ThreadPool, RefusesBadCounts) {
  aotc_thread_pool pool;
  EXPECT_EQ(aotc_pool_start(&pool, 0), AOTC_ERR_UNSUPPORTED);
  EXPECT_EQ(aotc_pool_start(&pool, AOTC_MAX_THREADS + 1), AOTC_ERR_UNSUPPORTED);
}

}  // namespace
