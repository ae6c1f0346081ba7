/* threadpool.h - a persistent pool of worker threads for the forward pass.
 *
 * Threads are created once per model and reused for every parallel region (each matmul, the
 * attention heads), because creating threads per token costs more than a small model's whole
 * decode step. The caller's thread takes part. Workers spin briefly for the next job, then sleep
 * on a condition variable, so an idle pool costs nothing. */
#ifndef SN_THREADPOOL_H
#define SN_THREADPOOL_H
#include "sn_err.h"

typedef struct sn_pool sn_pool;
/* Work item: called once for each task index ith in [0, nth), each on some pool thread (the
 * caller's or a worker's); a thread runs its tasks one after another, so state indexed by ith is
 * never shared between two running calls. Which thread runs which task is not fixed. */
typedef void (*sn_pool_fn)(void *arg, int ith, int nth);

/* n_threads >= 1 (1 = no extra threads). */
sn_status sn_pool_new(int n_threads, sn_pool **out, sn_err *err);
void sn_pool_free(sn_pool *p);
int sn_pool_size(const sn_pool *p);
/* Runs fn for tasks 0..n_tasks-1 (nth = n_tasks) and returns when all have finished; threads claim
 * tasks as they arrive, so a worker that is not scheduled yet does not hold the caller up. Not
 * reentrant. */
void sn_pool_run_n(sn_pool *p, sn_pool_fn fn, void *arg, int n_tasks);
/* sn_pool_run_n with one task per pool thread (nth = sn_pool_size). */
void sn_pool_run(sn_pool *p, sn_pool_fn fn, void *arg);

#endif
