/* aotc runtime stub: the thread pool of packages compiled with --threads N (N > 1).
 *
 * A fixed set of N - 1 worker threads, started by <name>_init and stopped by <name>_release,
 * lives in the model's context (caller memory: nothing here allocates). A kernel splits its work
 * statically into P parts (the SEGMENTED distribution of DESIGN.md section 5; P = N, or a few
 * per thread): aotc_pool_run_parts calls fn(arg, part, slot) for every part and returns when all
 * are done. Parts are not bound to threads: the caller and the workers claim them one at a time,
 * so a worker the OS has not scheduled yet (a busy machine) leaves its part to the caller
 * instead of making it wait, and with several parts per thread a thread that runs slower (a
 * virtual CPU sharing its core with another guest) takes fewer of them. A part number is a
 * slice of the work; `slot` is the thread's identity in the pool, in [0, N) (0: the caller),
 * for per-thread scratch: no two parts run at once with the same slot. Packages compiled for
 * one thread neither include nor link this. */
#ifndef AOTC_THREADS_H
#define AOTC_THREADS_H

#include <pthread.h>

#include "aotc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AOTC_MAX_THREADS 64

/* Parts per run: at most 255 (they share a word with the run's generation). */
#define AOTC_MAX_PARTS 255

typedef void (*aotc_task_fn)(void* arg, int part, int slot);

typedef struct aotc_thread_pool {
  int threads; /* threads running parts, the caller included; 0 when not started */
  pthread_t workers[AOTC_MAX_THREADS - 1];
  pthread_mutex_t mutex;
  pthread_cond_t work_ready; /* generation advanced, or stopping */
  pthread_cond_t work_done;  /* unfinished reached 0, or a worker started */
  unsigned long generation;  /* incremented per aotc_pool_run */
  unsigned long long claims; /* (generation << 16) | (parts << 8) | parts claimed so far */
  int unfinished;            /* parts of the current run not finished yet */
  int started;               /* workers that have taken their slot */
  int stopping;
  aotc_task_fn fn;
  void* arg;
} aotc_thread_pool;

/* Starts threads - 1 workers (threads in [1, AOTC_MAX_THREADS]). AOTC_ERR_UNSUPPORTED when the
 * count is out of range or the system refuses a thread (the pool is then left stopped). */
aotc_status aotc_pool_start(aotc_thread_pool* pool, int threads);

/* Runs fn(arg, part, slot) for part in [0, parts) (parts in [1, AOTC_MAX_PARTS]) and waits for
 * all of them. Calls from several threads on one pool are serialised. */
void aotc_pool_run_parts(aotc_thread_pool* pool, aotc_task_fn fn, void* arg, int parts);

/* The same with one part per thread. */
void aotc_pool_run(aotc_thread_pool* pool, aotc_task_fn fn, void* arg);

/* Stops and joins the workers; the pool may be started again. Safe on a stopped pool. */
void aotc_pool_stop(aotc_thread_pool* pool);

#ifdef __cplusplus
}

#include <type_traits>

/* Runs f(part) or f(part, slot) for part in [0, parts) (0: one part per thread); C++ kernels
 * pass a lambda. */
template <typename F>
inline void aotc_parallel(aotc_thread_pool* pool, F&& f, int parts = 0) {
  using Fn = typename std::remove_reference<F>::type;
  aotc_pool_run_parts(
      pool,
      [](void* arg, int part, int slot) {
        Fn& fn = *static_cast<Fn*>(arg);
        if constexpr (std::is_invocable<Fn&, int, int>::value)
          fn(part, slot);
        else
          fn(part);
      },
      const_cast<void*>(static_cast<const void*>(&f)), parts > 0 ? parts : pool->threads);
}
#endif

#endif /* AOTC_THREADS_H */
