/* The thread pool of multi-threaded packages (aotc_threads.h). Between kernels, workers spin a
 * while on the generation counter and then sleep on a condition variable; a run wakes them
 * all, and the caller and whichever workers are running claim the run's parts one at a time
 * (a compare-and-swap on `claims`, which carries the run's generation so that a worker waking
 * late can never claim a part of a later run with an earlier run's function). Parts used to be
 * bound to threads (part p on worker p): on a loaded machine a descheduled worker then held
 * every kernel up for a time slice while the caller spun (a small CNN on 2 threads over 7x
 * slower than on 1 under a competing load; docs/performance.md). Now the caller runs a part the
 * worker has not claimed yet, so 2 threads are never much slower than 1, and the caller waits
 * only for parts that a worker is actually running.
 *
 * The spins save the sleep-wake round trip between kernels that follow each other closely, as
 * onnxruntime's pool does, and are bounded in time rather than in polls: on a virtual machine a
 * sleeping vCPU may take hundreds of microseconds to be woken (ResNet-50 on 2 threads 53 instead
 * of 41 ms with short spins, 33 context switches per run instead of 3). The counters are written
 * under the mutex or by atomic read-modify-writes and read with atomic loads while spinning. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime under strict C99 */
#endif
#include "aotc_threads.h"

#include <sched.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#define AOTC_CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__) || defined(__arm__)
#define AOTC_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define AOTC_CPU_RELAX() ((void)0)
#endif

/* How long a worker spins for the next run, and the caller for the parts that workers are
 * running, before sleeping: long enough to bridge a kernel's serial work, short enough that idle
 * workers between inferences soon stop using their cores. */
#define AOTC_SPIN_FOR_WORK_NS 1000000L
#define AOTC_SPIN_FOR_DONE_NS 5000000L
/* Polls between two readings of the clock and yields of the core. Yielding while spinning is
 * what keeps 2 threads as fast as 1 on a loaded machine: a spinning thread otherwise takes the
 * time slices that the thread it waits for (the caller's next kernel, a worker's claimed part)
 * needs (SqueezeNet at load 13 on 2 cores: 1 thread 11.3 ms, 2 threads 20.6 ms without the
 * yield, 11.9 ms with it; bench/threads_under_load.py). On a quiet machine the yield returns at
 * once. */
#define AOTC_POLLS_PER_CLOCK 64

static unsigned long load_generation(aotc_thread_pool* pool) {
  return __atomic_load_n(&pool->generation, __ATOMIC_ACQUIRE);
}

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Spins until the generation differs from `seen` or the pool stops, or the time runs out. */
static void spin_for_work(aotc_thread_pool* pool, unsigned long seen) {
  const long long until = now_ns() + AOTC_SPIN_FOR_WORK_NS;
  int i;
  for (;;) {
    for (i = 0; i < AOTC_POLLS_PER_CLOCK; ++i) {
      if (load_generation(pool) != seen || __atomic_load_n(&pool->stopping, __ATOMIC_ACQUIRE))
        return;
      AOTC_CPU_RELAX();
    }
    if (now_ns() >= until) return;
    sched_yield(); /* a busy machine: let a thread that has work (ours or not) have the core */
  }
}

/* Spins until every part of the run is finished, or the time runs out. */
static void spin_for_done(aotc_thread_pool* pool) {
  const long long until = now_ns() + AOTC_SPIN_FOR_DONE_NS;
  int i;
  for (;;) {
    for (i = 0; i < AOTC_POLLS_PER_CLOCK; ++i) {
      if (__atomic_load_n(&pool->unfinished, __ATOMIC_ACQUIRE) == 0) return;
      AOTC_CPU_RELAX();
    }
    if (now_ns() >= until) return;
    sched_yield(); /* a busy machine: let a thread that has work (ours or not) have the core */
  }
}

/* The claims word: the run's generation, its part count and the parts claimed so far, so that a
 * worker reading it sees one run's count and claims together (AOTC_MAX_PARTS fits 8 bits). */
#define AOTC_CLAIM_BITS 8
#define AOTC_CLAIM_MASK ((1ULL << AOTC_CLAIM_BITS) - 1)

static unsigned long long claims_of_run(unsigned long generation, int parts) {
  return ((unsigned long long)generation << (2 * AOTC_CLAIM_BITS)) |
         ((unsigned long long)parts << AOTC_CLAIM_BITS);
}

/* The next unclaimed part of run `generation`, or -1 when all are claimed or a later run has
 * begun. */
static int claim_part(aotc_thread_pool* pool, unsigned long generation) {
  const unsigned long long run_mask = ~((1ULL << (2 * AOTC_CLAIM_BITS)) - 1);
  const unsigned long long run = claims_of_run(generation, 0);
  unsigned long long seen = __atomic_load_n(&pool->claims, __ATOMIC_ACQUIRE);
  for (;;) {
    const int next = (int)(seen & AOTC_CLAIM_MASK);
    const int parts = (int)((seen >> AOTC_CLAIM_BITS) & AOTC_CLAIM_MASK);
    if ((seen & run_mask) != (run & run_mask) || next >= parts) return -1;
    if (__atomic_compare_exchange_n(&pool->claims, &seen, seen + 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
      return next;
  }
}

/* Runs parts of run `generation` until none is left to claim; whoever finishes its last part
 * wakes the caller if it sleeps. */
static void run_claimed_parts(aotc_thread_pool* pool, unsigned long generation, aotc_task_fn fn,
                              void* arg, int slot) {
  int part;
  while ((part = claim_part(pool, generation)) >= 0) {
    fn(arg, part, slot);
    if (__atomic_sub_fetch(&pool->unfinished, 1, __ATOMIC_ACQ_REL) == 0) {
      pthread_mutex_lock(&pool->mutex);
      pthread_cond_broadcast(&pool->work_done);
      pthread_mutex_unlock(&pool->mutex);
    }
  }
}

static void* worker_main(void* p) {
  aotc_thread_pool* pool = (aotc_thread_pool*)p;
  unsigned long seen;
  int slot;
  pthread_mutex_lock(&pool->mutex);
  slot = ++pool->started; /* 1 .. threads - 1; the caller is slot 0 */
  seen = pool->generation;
  pthread_cond_broadcast(&pool->work_done);
  for (;;) {
    if (pool->generation == seen && !pool->stopping) {
      pthread_mutex_unlock(&pool->mutex);
      spin_for_work(pool, seen);
      pthread_mutex_lock(&pool->mutex);
    }
    while (pool->generation == seen && !pool->stopping)
      pthread_cond_wait(&pool->work_ready, &pool->mutex);
    if (pool->stopping) break;
    seen = pool->generation;
    {
      aotc_task_fn fn = pool->fn; /* this run's: fn, arg and claims change together under the mutex */
      void* arg = pool->arg;
      pthread_mutex_unlock(&pool->mutex);
      run_claimed_parts(pool, seen, fn, arg, slot);
      pthread_mutex_lock(&pool->mutex);
    }
  }
  pthread_mutex_unlock(&pool->mutex);
  return NULL;
}

aotc_status aotc_pool_start(aotc_thread_pool* pool, int threads) {
  int i;
  if (pool == NULL || threads < 1 || threads > AOTC_MAX_THREADS) return AOTC_ERR_UNSUPPORTED;
  memset(pool, 0, sizeof(*pool));
  pthread_mutex_init(&pool->mutex, NULL);
  pthread_cond_init(&pool->work_ready, NULL);
  pthread_cond_init(&pool->work_done, NULL);
  pool->threads = 1;
  for (i = 0; i < threads - 1; ++i) {
    if (pthread_create(&pool->workers[i], NULL, worker_main, pool) != 0) {
      aotc_pool_stop(pool);
      return AOTC_ERR_UNSUPPORTED;
    }
    pool->threads = i + 2;
  }
  /* Every worker must have read the generation before the first run, or it would miss it. */
  pthread_mutex_lock(&pool->mutex);
  while (pool->started != pool->threads - 1) pthread_cond_wait(&pool->work_done, &pool->mutex);
  pthread_mutex_unlock(&pool->mutex);
  return AOTC_OK;
}

void aotc_pool_run_parts(aotc_thread_pool* pool, aotc_task_fn fn, void* arg, int parts) {
  unsigned long generation;
  int part;
  /* More parts than the claims word holds (the kernels never ask for that): all on the caller. */
  if (pool->threads <= 1 || parts <= 1 || parts > AOTC_MAX_PARTS) {
    for (part = 0; part < parts; ++part) fn(arg, part, 0);
    return;
  }
  pthread_mutex_lock(&pool->mutex);
  while (pool->unfinished != 0) pthread_cond_wait(&pool->work_done, &pool->mutex); /* serialise */
  generation = pool->generation + 1;
  pool->fn = fn;
  pool->arg = arg;
  __atomic_store_n(&pool->unfinished, parts, __ATOMIC_RELAXED);
  __atomic_store_n(&pool->claims, claims_of_run(generation, parts), __ATOMIC_RELEASE);
  __atomic_store_n(&pool->generation, generation, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&pool->work_ready);
  pthread_mutex_unlock(&pool->mutex);
  run_claimed_parts(pool, generation, fn, arg, 0);
  spin_for_done(pool);
  pthread_mutex_lock(&pool->mutex);
  while (pool->unfinished != 0) pthread_cond_wait(&pool->work_done, &pool->mutex);
  pthread_mutex_unlock(&pool->mutex);
}

void aotc_pool_run(aotc_thread_pool* pool, aotc_task_fn fn, void* arg) {
  aotc_pool_run_parts(pool, fn, arg, pool->threads > 0 ? pool->threads : 1);
}

void aotc_pool_stop(aotc_thread_pool* pool) {
  int i, workers;
  if (pool == NULL || pool->threads == 0) return;
  workers = pool->threads - 1;
  pthread_mutex_lock(&pool->mutex);
  __atomic_store_n(&pool->stopping, 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&pool->work_ready);
  pthread_mutex_unlock(&pool->mutex);
  for (i = 0; i < workers; ++i) pthread_join(pool->workers[i], NULL);
  pthread_mutex_destroy(&pool->mutex);
  pthread_cond_destroy(&pool->work_ready);
  pthread_cond_destroy(&pool->work_done);
  pool->threads = 0;
}
