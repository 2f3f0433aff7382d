/* The thread pool of multi-threaded packages (aotc_threads.h). Workers sleep on a condition
 * variable between kernels; a run wakes them all, runs part 0 itself and waits for the rest. */
#include "aotc_threads.h"

#include <string.h>

static void* worker_main(void* p) {
  aotc_thread_pool* pool = (aotc_thread_pool*)p;
  unsigned long seen;
  int part;
  pthread_mutex_lock(&pool->mutex);
  part = ++pool->started; /* parts 1 .. threads - 1; the caller runs part 0 */
  seen = pool->generation;
  pthread_cond_broadcast(&pool->work_done);
  for (;;) {
    while (pool->generation == seen && !pool->stopping)
      pthread_cond_wait(&pool->work_ready, &pool->mutex);
    if (pool->stopping) break;
    seen = pool->generation;
    {
      aotc_task_fn fn = pool->fn;
      void* arg = pool->arg;
      pthread_mutex_unlock(&pool->mutex);
      fn(arg, part);
      pthread_mutex_lock(&pool->mutex);
    }
    if (--pool->pending == 0) pthread_cond_broadcast(&pool->work_done);
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

void aotc_pool_run(aotc_thread_pool* pool, aotc_task_fn fn, void* arg) {
  if (pool->threads <= 1) {
    fn(arg, 0);
    return;
  }
  pthread_mutex_lock(&pool->mutex);
  while (pool->pending != 0) pthread_cond_wait(&pool->work_done, &pool->mutex); /* serialise */
  pool->fn = fn;
  pool->arg = arg;
  pool->pending = pool->threads - 1;
  ++pool->generation;
  pthread_cond_broadcast(&pool->work_ready);
  pthread_mutex_unlock(&pool->mutex);
  fn(arg, 0);
  pthread_mutex_lock(&pool->mutex);
  while (pool->pending != 0) pthread_cond_wait(&pool->work_done, &pool->mutex);
  pthread_mutex_unlock(&pool->mutex);
}

void aotc_pool_stop(aotc_thread_pool* pool) {
  int i, workers;
  if (pool == NULL || pool->threads == 0) return;
  workers = pool->threads - 1;
  pthread_mutex_lock(&pool->mutex);
  pool->stopping = 1;
  pthread_cond_broadcast(&pool->work_ready);
  pthread_mutex_unlock(&pool->mutex);
  for (i = 0; i < workers; ++i) pthread_join(pool->workers[i], NULL);
  pthread_mutex_destroy(&pool->mutex);
  pthread_cond_destroy(&pool->work_ready);
  pthread_cond_destroy(&pool->work_done);
  pool->threads = 0;
}
