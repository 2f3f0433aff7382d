// The runtime stub's thread pool (runtime_stub/aotc_threads.h): every part of every run runs
// exactly once and is finished when aotc_pool_run returns, also when
// some parts are slow and when runs follow each other with no gap or after the workers have gone
// to sleep. (Which thread runs which part depends on scheduling and is not asserted.)
#include <gtest/gtest.h>

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <future>
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

TEST(ThreadPool, MorePartsThanThreadsRunOnceEachAndNoSlotRunsTwoAtOnce) {
  // Slices claimed as threads come free: every part once, slots in [0, threads), and no two
  // parts at the same time on one slot (per-thread scratch is indexed by it).
  for (int threads : {2, 3}) {
    aotc_thread_pool pool;
    ASSERT_EQ(aotc_pool_start(&pool, threads), AOTC_OK);
    for (int parts : {1, 2, 5, 8, 17, AOTC_MAX_PARTS}) {
      for (int run = 0; run < 200; ++run) {
        Counts counts(parts);
        std::vector<std::atomic<int>> busy(threads);
        std::atomic<int> clashes{0}, bad_slots{0};
        aotc_parallel(&pool, [&](int part, int slot) {
          if (slot < 0 || slot >= threads) {
            bad_slots.fetch_add(1);
            return;
          }
          if (busy[slot].fetch_add(1) != 0) clashes.fetch_add(1);
          counts.runs_of_part[part].fetch_add(1);
          if (part % 3 == 0) std::this_thread::yield();
          busy[slot].fetch_sub(1);
        }, parts);
        ASSERT_EQ(bad_slots.load(), 0);
        ASSERT_EQ(clashes.load(), 0) << parts << " parts, run " << run;
        for (int q = 0; q < parts; ++q) ASSERT_EQ(counts.runs_of_part[q].load(), 1) << parts << " parts, run " << run;
      }
    }
    // Beyond what the claims word holds: all on the caller, still every part once.
    Counts counts(AOTC_MAX_PARTS + 3);
    aotc_parallel(&pool, [&](int part) { counts.runs_of_part[part].fetch_add(1); }, AOTC_MAX_PARTS + 3);
    for (int q = 0; q < AOTC_MAX_PARTS + 3; ++q) ASSERT_EQ(counts.runs_of_part[q].load(), 1);
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

// A worker that the OS does not run (on a busy machine, descheduled for a time slice or more)
// is modelled by a signal handler that parks it until released. The run must not wait for it:
// the caller claims the part the worker has not. (With parts bound to threads this run never
// returned; the test gives up after 20 s and releases the worker.)
sem_t parked_release;
std::atomic<bool> parked{false};

void park_this_thread(int) {
  parked.store(true);
  while (sem_wait(&parked_release) != 0) {
  }
  parked.store(false);
}

TEST(ThreadPool, ARunDoesNotWaitForAWorkerThatIsNotRunning) {
  ASSERT_EQ(sem_init(&parked_release, 0, 0), 0);
  struct sigaction action = {};
  action.sa_handler = park_this_thread;
  struct sigaction previous = {};
  ASSERT_EQ(sigaction(SIGUSR1, &action, &previous), 0);

  aotc_thread_pool pool;
  ASSERT_EQ(aotc_pool_start(&pool, 2), AOTC_OK);
  ASSERT_EQ(pthread_kill(pool.workers[0], SIGUSR1), 0);
  while (!parked.load()) std::this_thread::yield();

  std::vector<int> parts(2, 0);
  std::thread::id ran_on[2];
  auto run = std::async(std::launch::async, [&] {
    for (int round = 0; round < 3; ++round)
      aotc_parallel(&pool, [&](int part) {
        parts[part] += 1;
        ran_on[part] = std::this_thread::get_id();
      });
  });
  const bool returned = run.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  sem_post(&parked_release);  // release the worker either way, so that the pool can stop
  run.wait();
  EXPECT_TRUE(returned) << "the runs waited for a worker that was not running";
  EXPECT_EQ(parts[0], 3);
  EXPECT_EQ(parts[1], 3);
  EXPECT_EQ(ran_on[0], ran_on[1]) << "both parts should have run on the caller";
  aotc_pool_stop(&pool);
  sigaction(SIGUSR1, &previous, nullptr);
  sem_destroy(&parked_release);
}

TEST(ThreadPool, RefusesBadCounts) {
  aotc_thread_pool pool;
  EXPECT_EQ(aotc_pool_start(&pool, 0), AOTC_ERR_UNSUPPORTED);
  EXPECT_EQ(aotc_pool_start(&pool, AOTC_MAX_THREADS + 1), AOTC_ERR_UNSUPPORTED);
}

}  // namespace
