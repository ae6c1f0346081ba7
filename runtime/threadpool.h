/* threadpool.h - a persistent pool of worker threads for the forward pass.
 *
 * Threads are created once per model and reused for every parallel region (each matmul, the
 * attention heads), because creating threads per token costs more than a small model's whole
 * decode step. The caller's thread takes part as worker 0. Workers spin briefly for the next job,
 * then sleep on a condition variable, so an idle pool costs nothing. */
#ifndef SN_THREADPOOL_H
#define SN_THREADPOOL_H
#include "sn_err.h"

typedef struct sn_pool sn_pool;
/* Work item: called once on each of nth threads with ith in [0, nth). */
typedef void (*sn_pool_fn)(void *arg, int ith, int nth);

/* n_threads >= 1 (1 = no extra threads). */
sn_status sn_pool_new(int n_threads, sn_pool **out, sn_err *err);
void sn_pool_free(sn_pool *p);
int sn_pool_size(const sn_pool *p);
/* Runs fn on every thread and returns when all have finished. Not reentrant. */
void sn_pool_run(sn_pool *p, sn_pool_fn fn, void *arg);

#endif
