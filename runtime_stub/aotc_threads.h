/* aotc runtime stub: the thread pool of packages compiled with --threads N (N > 1).
 *
 * A fixed set of N - 1 worker threads, started by <name>_init and stopped by <name>_release,
 * lives in the model's context (caller memory: nothing here allocates). A kernel splits its work
 * statically into N parts (the SEGMENTED distribution of DESIGN.md section 5): aotc_pool_run
 * calls fn(arg, part) for every part and returns when all are done. Parts are not bound to
 * threads: the caller and the workers claim them one at a time, so a worker the OS has not
 * scheduled yet (a busy machine) leaves its part to the caller instead of making it wait. A part
 * number is therefore a slice of the work, never a thread identity. Packages compiled for one
 * thread neither include nor link this. */
#ifndef AOTC_THREADS_H
#define AOTC_THREADS_H

#include <pthread.h>

#include "aotc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AOTC_MAX_THREADS 64

typedef void (*aotc_task_fn)(void* arg, int part);

typedef struct aotc_thread_pool {
  int threads; /* parts per aotc_pool_run, the caller included; 0 when not started */
  pthread_t workers[AOTC_MAX_THREADS - 1];
  pthread_mutex_t mutex;
  pthread_cond_t work_ready; /* generation advanced, or stopping */
  pthread_cond_t work_done;  /* unfinished reached 0, or a worker started */
  unsigned long generation;  /* incremented per aotc_pool_run */
  unsigned long long claims; /* (generation << 8) | parts of that run claimed so far */
  int unfinished;            /* parts of the current run not finished yet */
  int started;               /* workers that have taken their part number */
  int stopping;
  aotc_task_fn fn;
  void* arg;
} aotc_thread_pool;

/* Starts threads - 1 workers (threads in [1, AOTC_MAX_THREADS]). AOTC_ERR_UNSUPPORTED when the
 * count is out of range or the system refuses a thread (the pool is then left stopped). */
aotc_status aotc_pool_start(aotc_thread_pool* pool, int threads);

/* Runs fn(arg, part) for part in [0, threads) and waits for all of them. Calls from several
 * threads on one pool are serialised. */
void aotc_pool_run(aotc_thread_pool* pool, aotc_task_fn fn, void* arg);

/* Stops and joins the workers; the pool may be started again. Safe on a stopped pool. */
void aotc_pool_stop(aotc_thread_pool* pool);

#ifdef __cplusplus
}

#include <type_traits>

/* Runs f(part) for every part of the pool's static partition (C++ kernels pass a lambda). */
template <typename F>
inline void aotc_parallel(aotc_thread_pool* pool, F&& f) {
  using Fn = typename std::remove_reference<F>::type;
  aotc_pool_run(
      pool, [](void* arg, int part) { (*static_cast<Fn*>(arg))(part); },
      const_cast<void*>(static_cast<const void*>(&f)));
}
#endif

#endif /* AOTC_THREADS_H */
